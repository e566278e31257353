// One subscriber streaming a session's log to a socket, as SSE or NDJSON. It pulls from the log
// with a cursor and writes only while the socket accepts data, so replay and live delivery are one
// loop (no gap, no duplicate) and the only backlog is `lastSequence - cursor`, which is bounded: a
// subscriber that falls `maxLag` events behind is closed with a comment saying where to resume.
import type { ServerResponse } from 'node:http';
import { rangeFrames, type StreamFormat } from './frames.js';
import { outputFor, type StreamOutput } from './stream-output.js';
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

export class LogStream {
  private cursor: number;
  private stopAt = Infinity;
  private waitingDrain = false;
  private started = false;
  private scheduled = false;
  private closed = false;
  private readonly unlisten: () => void;
  private stopKeepAlive: (() => void) | undefined;
  private stopDrain: (() => void) | undefined;
  private out!: StreamOutput;
  private lagTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: EventLog,
    private readonly res: ServerResponse,
    private readonly options: LogStreamOptions,
  ) {
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
    const { res, options } = this;
    this.started = true;
    if (res.destroyed) return this.finish(true); // the client left while the turn was dispatched
    this.out = outputFor(res);
    res.on('close', () => this.finish(true));
    this.stopDrain = this.out.onDrain(() => {
      this.waitingDrain = false;
      this.pump();
    });
    if (options.format === 'sse') {
      this.out.write(`retry: ${options.retryMs}\n\n`);
      this.stopKeepAlive = keepAlive(options.keepAliveMs, this.out);
    }
    this.pump();
  }

  /** Stops listening without having written anything (the request was refused). */
  dispose(): void {
    this.finish(false);
  }

  private onAppend(event: UniversalEvent): void {
    if (this.options.until?.(event) && event.sequence < this.stopAt) this.stopAt = event.sequence;
    if (!this.started) return;
    if (!this.waitingDrain) return this.schedule();
    // One read of an agent's stdout can append thousands of events before the socket gets a
    // chance to drain, so lag alone does not mean the client is slow. Judge it after a grace
    // period instead: still stalled and still too far behind then means it is not keeping up.
    if (this.log.lastSequence - this.cursor > this.options.maxLag && !this.lagTimer) {
      this.lagTimer = setTimeout(() => this.judgeLag(), this.options.lagGraceMs);
      this.lagTimer.unref();
    }
  }

  private judgeLag(): void {
    this.lagTimer = undefined;
    const lag = this.log.lastSequence - this.cursor;
    if (this.closed || !this.waitingDrain || lag <= this.options.maxLag) return;
    this.options.onDropped?.('lag');
    this.close(`subscriber fell ${lag} events behind (limit ${this.options.maxLag}); reconnect with Last-Event-ID: ${this.cursor}`);
  }

  /**
   * Writing waits for the end of the tick: events appended together (a turn's opening events, the
   * lines of one stdout read) leave as one write, and every subscriber at the same cursor shares
   * that write's bytes (see rangeFrame).
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** `force` writes past a full socket (the final flush). */
  private pump(force = false): void {
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
    this.stopKeepAlive?.();
    this.stopDrain?.();
    if (this.lagTimer) clearTimeout(this.lagTimer);
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
const ranges = new WeakMap<EventLog, { last: number; frames: Map<string, Buffer> }>();

function rangeFrame(log: EventLog, after: number, to: number, options: LogStreamOptions, chunked: boolean): Buffer {
  const build = () => {
    log.assertAvailable(after);
    return rangeFrames(log, after, to, options.format, options.includeRaw, chunked);
  };
  if (to !== log.lastSequence) return build(); // catching up: nobody else needs this exact range
  let cache = ranges.get(log);
  if (cache?.last !== to) ranges.set(log, (cache = { last: to, frames: new Map() }));
  const key = `${after}:${options.format}${options.includeRaw ? '+raw' : ''}${chunked ? '+chunked' : ''}`;
  let frame = cache.frames.get(key);
  if (!frame) cache.frames.set(key, (frame = build()));
  return frame;
}

/**
 * One timer per keep-alive interval for all SSE streams, not one per stream: thousands of idle
 * readers then cost one wake-up every 15 s.
 */
const keepAliveGroups = new Map<number, { streams: Set<StreamOutput>; timer: NodeJS.Timeout }>();
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

export function keepAlive(intervalMs: number, out: StreamOutput): () => void {
  let group = keepAliveGroups.get(intervalMs);
  if (!group) {
    const streams = new Set<StreamOutput>();
    const timer = setInterval(() => streams.forEach((o) => o.write(KEEP_ALIVE)), intervalMs);
    timer.unref();
    keepAliveGroups.set(intervalMs, (group = { streams, timer }));
  }
  const { streams, timer } = group;
  streams.add(out);
  return () => {
    streams.delete(out);
    if (streams.size === 0) {
      clearInterval(timer);
      keepAliveGroups.delete(intervalMs);
    }
  };
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
