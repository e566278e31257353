// One subscriber streaming a session's log to a socket, as SSE or NDJSON. It pulls from the log
// with a cursor and writes only while the socket accepts data, so replay and live delivery are one
// loop (no gap, no duplicate) and the only backlog is `lastSequence - cursor`, which is bounded: a
// subscriber that falls `maxLag` events behind is closed with a comment saying where to resume
// (the pacing is pull-stream.ts's, shared with the feed's streams).
import type { ServerResponse } from 'node:http';
import { rangeFrames, type StreamFormat } from './frames.js';
import { PullStream } from './pull-stream.js';
import type { EventLog } from '../sessions/event-log.js';
import type { UniversalEvent } from '../schema/events.js';

export type { StreamFormat };

export interface LogStreamOptions {
  format: StreamFormat;
  /** Deliver events with sequence > after. */
  after: number;
  includeRaw: boolean;
  maxLag: number;
  /** How long a subscriber may stay over maxLag with its socket full before it is closed. */
  lagGraceMs: number;
  keepAliveMs: number;
  retryMs: number;
  /** Close the stream after writing the first event this returns true for (turn streams). */
  until?: (event: UniversalEvent) => boolean;
  /** Called once when the stream ends; `byClient` when the client went away first. */
  onClose?: (byClient: boolean) => void;
  /** Called when the daemon closes the stream because the subscriber fell behind (metrics). */
  onDropped?: (reason: 'lag' | 'evicted') => void;
}

const BATCH = 256;

export class LogStream extends PullStream {
  private cursor: number;
  private stopAt = Infinity;
  private readonly unlisten: () => void;

  constructor(
    private readonly log: EventLog,
    res: ServerResponse,
    private readonly options: LogStreamOptions,
  ) {
    super(res, options);
    this.cursor = options.after;
    // Listening starts now, writing only at start(): a turn stream is created before its turn is
    // dispatched, so it sees (and can stop at) every event of the turn, yet nothing is written if
    // the dispatch is refused and the route still answers with a problem.
    this.unlisten = log.listen(
      (event) => this.onAppend(event),
      () => (this.started ? this.closeAfterFlush('the session was deleted or the daemon is stopping') : this.finish(false)),
    );
  }

  /** Begins writing: the SSE preamble, the backlog after the cursor, then live events. */
  start(): void {
    if (this.res.destroyed) return this.finish(true); // the client left while the turn was dispatched
    this.begin(this.options.format === 'sse');
  }

  /** Stops listening without having written anything (the request was refused). */
  dispose(): void {
    this.finish(false);
  }

  private onAppend(event: UniversalEvent): void {
    if (this.options.until?.(event) && event.sequence < this.stopAt) this.stopAt = event.sequence;
    this.appended();
  }

  protected behind(): number {
    return this.log.lastSequence - this.cursor;
  }

  protected dropSlow(lag: number): void {
    this.options.onDropped?.('lag');
    this.close(`subscriber fell ${lag} events behind (limit ${this.options.maxLag}); reconnect with Last-Event-ID: ${this.cursor}`);
  }

  protected socketClosed(): void {
    this.finish(true);
  }

  /** `force` writes past a full socket (the final flush). */
  protected pump(force = false): void {
    while (!this.closed && (force || !this.waitingDrain) && this.cursor < Math.min(this.log.lastSequence, this.stopAt)) {
      const to = Math.min(this.log.lastSequence, this.stopAt, this.cursor + BATCH);
      let frame: Buffer;
      try {
        frame = rangeFrame(this.log, this.cursor, to, this.options, this.out.chunked);
      } catch {
        // The log evicted what this subscriber still needed (it was slower than the byte budget).
        this.options.onDropped?.('evicted');
        return this.close(`events after ${this.cursor} were evicted; resume from GET /events to see the oldest available`);
      }
      this.cursor = to;
      if (!this.out.writeWire(frame)) this.waitingDrain = true;
    }
    if (!this.closed && this.cursor >= this.stopAt) this.close();
  }

  /**
   * The log will get nothing more: send what this subscriber has not had yet (even past a full
   * socket: at most maxLag events, and the client could not resume them from a gone session).
   */
  private closeAfterFlush(reason: string): void {
    this.pump(true);
    this.close(reason);
  }

  /** Ends the stream; an SSE reason becomes a final comment the client can log. */
  close(reason?: string): void {
    if (this.closed) return;
    if (reason && this.options.format === 'sse' && this.started) this.out.write(`: closed: ${reason}\n\n`);
    this.finish(false);
    if (this.started) this.out.end();
    else this.res.end();
  }

  private finish(byClient: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    this.stopPacing();
    this.options.onClose?.(byClient);
  }
}

/**
 * Frames for a range of events, built once and shared by every subscriber of the log that needs
 * exactly that range: live subscribers all sit at the same cursor, so fanning events out to
 * thousands of readers costs one socket write each, not a read, a string build and an encoding
 * each. The cache only holds ranges ending at the log's current last event, so it is dropped at
 * the next append and stays as small as the number of distinct cursors.
 */
const ranges = new WeakMap<EventLog, { last: number; frames: Map<number, Buffer> }>();

/** Which of the eight kinds of frames a subscriber takes (format × raw × chunked), as a small number. */
function frameKind(options: LogStreamOptions, chunked: boolean): number {
  return (options.format === 'sse' ? 0 : 4) + (options.includeRaw ? 2 : 0) + (chunked ? 1 : 0);
}

function rangeFrame(log: EventLog, after: number, to: number, options: LogStreamOptions, chunked: boolean): Buffer {
  const build = () => {
    log.assertAvailable(after);
    return rangeFrames(log, after, to, options.format, options.includeRaw, chunked);
  };
  if (to !== log.lastSequence) return build(); // catching up: nobody else needs this exact range
  let cache = ranges.get(log);
  if (cache?.last !== to) ranges.set(log, (cache = { last: to, frames: new Map() }));
  // A number, not a string: the key is computed once per subscriber per write, thousands at a time.
  const key = after * 8 + frameKind(options, chunked);
  let frame = cache.frames.get(key);
  if (!frame) cache.frames.set(key, (frame = build()));
  return frame;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export const NDJSON_HEADERS = {
  'content-type': 'application/x-ndjson; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;
