// Stream frames for a range of a log's events, built as bytes: the events' stored UTF-8 is copied
// between the frame text around it, never decoded to a string and encoded again. SSE frames are
// `id: <sequence>\ndata: <json>\n\n`, NDJSON lines `<json>\n`; over a raw chunked socket the whole
// range is one HTTP chunk, so it leaves in one write.
import type { EventLog } from '../sessions/event-log.js';

export type StreamFormat = 'sse' | 'ndjson';

const SSE_ID = Buffer.from('id: ');
const SSE_DATA = Buffer.from('\ndata: ');
const LF = 0x0a;
const CR = 0x0d;

/** Events after `after` up to `to` (inclusive) as one buffer. The caller has checked they are held. */
export function rangeFrames(log: EventLog, after: number, to: number, format: StreamFormat, includeRaw: boolean, chunked: boolean): Buffer {
  const sse = format === 'sse';
  let body = 0;
  for (let sequence = after + 1; sequence <= to; sequence++) {
    body += log.jsonSize(sequence, includeRaw) + (sse ? SSE_ID.length + digits(sequence) + SSE_DATA.length + 2 : 1);
  }
  const header = chunked ? `${body.toString(16)}\r\n` : '';
  const frame = Buffer.allocUnsafe(header.length + body + (chunked ? 2 : 0));
  let at = frame.write(header, 0, 'latin1');
  for (let sequence = after + 1; sequence <= to; sequence++) {
    if (sse) {
      at += SSE_ID.copy(frame, at);
      at = writeDigits(frame, at, sequence);
      at += SSE_DATA.copy(frame, at);
    }
    at = log.copyJson(sequence, includeRaw, frame, at);
    frame[at++] = LF;
    if (sse) frame[at++] = LF;
  }
  if (chunked) {
    frame[at++] = CR;
    frame[at++] = LF;
  }
  return frame;
}

function digits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count++;
  }
  return count;
}

/** A positive integer's decimal digits, without building its string. */
function writeDigits(target: Buffer, at: number, n: number): number {
  const end = at + digits(n);
  for (let i = end - 1; i >= at; i--) {
    target[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return end;
}

const PAGE_OPEN = Buffer.from('{"events":[');
const PAGE_MORE = Buffer.from('],"hasMore":true}');
const PAGE_END = Buffer.from('],"hasMore":false}');
const COMMA = 0x2c;

/**
 * A poll's page, `{"events":[…],"hasMore":…}`, as one buffer of the events' stored bytes: events
 * after `after`, at most `limit`. The caller has checked `after` is a cursor into the log.
 */
export function pollPage(log: EventLog, after: number, limit: number, includeRaw: boolean): Buffer {
  const last = log.lastSequence;
  const to = Math.min(last, after + limit);
  const close = to < last ? PAGE_MORE : PAGE_END;
  let size = PAGE_OPEN.length + close.length + Math.max(0, to - after - 1);
  for (let sequence = after + 1; sequence <= to; sequence++) size += log.jsonSize(sequence, includeRaw);
  const page = Buffer.allocUnsafe(size);
  let at = PAGE_OPEN.copy(page, 0);
  for (let sequence = after + 1; sequence <= to; sequence++) {
    if (sequence > after + 1) page[at++] = COMMA;
    at = log.copyJson(sequence, includeRaw, page, at);
  }
  close.copy(page, at);
  return page;
}
