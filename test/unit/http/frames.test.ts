// Stream frames built from the log's bytes must be exactly the frames built from its strings:
// SSE and NDJSON, with and without raw payloads, bare and as one HTTP chunk.
import { describe, expect, it } from 'vitest';
import { rangeFrames } from '../../../src/http/frames.js';
import type { PendingEvent } from '../../../src/schema/events.js';
import { EventLog } from '../../../src/sessions/event-log.js';
import { counterIds, steppingClock } from '../../../src/util/deps.js';

const delta = (text: string): PendingEvent => ({ type: 'item.delta', source: 'agent', synthetic: false, data: { item_id: 'itm_1', native_item_id: null, delta: text } });

function expected(log: EventLog, after: number, to: number, format: 'sse' | 'ndjson', raw: boolean, chunked: boolean): Buffer {
  const text = log
    .readJson(after, to - after, raw)
    .map((json, i) => (format === 'sse' ? `id: ${after + 1 + i}\ndata: ${json}\n\n` : `${json}\n`))
    .join('');
  const body = Buffer.from(text);
  return chunked ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]) : body;
}

describe('rangeFrames', () => {
  it('builds the same bytes as the frames written out as text, for every format and option', () => {
    const log = new EventLog('s1', { maxEvents: 5000, maxBytes: 10_000_000 }, counterIds(), steppingClock());
    for (let n = 1; n <= 1200; n++) {
      // Sequences of 1 to 4 digits; some events carry a raw payload, some multi-byte text.
      log.append(delta(n % 3 === 0 ? `ünï ☃ ${n} 🎉` : `d${n}`), n % 2 === 0 ? { line: n, note: 'rаw ☃' } : null);
    }
    for (const [after, to] of [[0, 1], [0, 1200], [8, 12], [98, 101], [990, 1200]] as const) {
      for (const format of ['sse', 'ndjson'] as const) {
        for (const raw of [false, true]) {
          for (const chunked of [false, true]) {
            const frame = rangeFrames(log, after, to, format, raw, chunked);
            expect(frame.equals(expected(log, after, to, format, raw, chunked))).toBe(true);
          }
        }
      }
    }
  });
});
