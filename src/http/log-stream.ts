// One subscriber streaming a session's log to a socket, as SSE or NDJSON. It pulls from the log
// with a cursor and writes only while the socket accepts data, so replay and live delivery are one
// loop (no gap, no duplicate) and the only backlog is `lastSequence - cursor`, which is bounded: a
// subscriber that falls `maxLag` events behind is closed with a comment saying where to resume.
import type { ServerResponse } from 'node:http';
import type { EventLog } from '../sessions/event-log.js';
import type { UniversalEvent } from '../schema/events.js';

export type StreamFormat = 'sse' | 'ndjson';

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
}

const BATCH = 256;

export class LogStream {
  private cursor: number;
  private stopAt = Infinity;
  private waitingDrain = false;
  private started = false;
  private corked = false;
  private closed = false;
  private readonly unlisten: () => void;
  private stopKeepAlive: (() => void) | undefined;
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
      () => (this.started ? this.close('the session was deleted or the daemon is stopping') : this.finish(false)),
    );
  }

  /** Begins writing: the SSE preamble, the backlog after the cursor, then live events. */
  start(): void {
    const { res, options } = this;
    this.started = true;
    if (res.destroyed) return this.finish(true); // the client left while the turn was dispatched
    res.on('close', () => this.finish(true));
    res.on('drain', () => {
      this.waitingDrain = false;
      this.pump();
    });
    if (options.format === 'sse') {
      res.write(`retry: ${options.retryMs}\n\n`);
      this.stopKeepAlive = keepAlive(options.keepAliveMs, res);
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
    if (!this.waitingDrain) return this.pump();
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
    this.close(`subscriber fell ${lag} events behind (limit ${this.options.maxLag}); reconnect with Last-Event-ID: ${this.cursor}`);
  }

  private pump(): void {
    // The live case: exactly the newest event is new. Its frame is shared by every subscriber.
    if (!this.closed && !this.waitingDrain && this.cursor + 1 === this.log.lastSequence && this.cursor < this.stopAt) {
      this.corkForTick();
      this.cursor++;
      if (!this.res.write(newestFrame(this.log, this.options))) this.waitingDrain = true;
    }
    while (!this.closed && !this.waitingDrain && this.cursor < Math.min(this.log.lastSequence, this.stopAt)) {
      let batch: string[];
      try {
        const want = Math.min(BATCH, this.stopAt - this.cursor);
        batch = this.log.readJson(this.cursor, want, this.options.includeRaw);
      } catch {
        // The log evicted what this subscriber still needed (it was slower than the byte budget).
        return this.close(`events after ${this.cursor} were evicted; resume from GET /events to see the oldest available`);
      }
      this.corkForTick();
      for (const json of batch) {
        this.cursor++;
        if (!this.res.write(frameText(this.cursor, json, this.options))) this.waitingDrain = true;
      }
    }
    if (!this.closed && this.cursor >= this.stopAt) this.close();
  }

  /**
   * Events appended in one tick (a turn's opening events, the lines of one stdout read) leave in
   * one socket write instead of one syscall each.
   */
  private corkForTick(): void {
    if (this.corked) return;
    this.corked = true;
    this.res.cork();
    process.nextTick(() => {
      this.corked = false;
      this.res.uncork();
    });
  }

  /** Ends the stream; an SSE reason becomes a final comment the client can log. */
  close(reason?: string): void {
    if (this.closed) return;
    if (reason && this.options.format === 'sse') this.res.write(`: closed: ${reason}\n\n`);
    this.finish(false);
    this.res.end();
  }

  private finish(byClient: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    this.stopKeepAlive?.();
    if (this.lagTimer) clearTimeout(this.lagTimer);
    this.options.onClose?.(byClient);
  }
}

/**
 * The newest event's frames, encoded once and shared by every subscriber of its log: fanning one
 * event out to thousands of readers then costs a socket write each, not a read, a string build
 * and a UTF-8 encoding each. Older events (replay, catching up) are framed per reader.
 */
const newest = new WeakMap<EventLog, { sequence: number; frames: Map<string, Buffer> }>();

function newestFrame(log: EventLog, options: LogStreamOptions): Buffer {
  const sequence = log.lastSequence;
  let cache = newest.get(log);
  if (cache?.sequence !== sequence) newest.set(log, (cache = { sequence, frames: new Map() }));
  const key = `${options.format}${options.includeRaw ? '+raw' : ''}`;
  let frame = cache.frames.get(key);
  if (!frame) {
    const [json] = log.readJson(sequence - 1, 1, options.includeRaw);
    cache.frames.set(key, (frame = Buffer.from(frameText(sequence, json!, options))));
  }
  return frame;
}

function frameText(sequence: number, json: string, options: Pick<LogStreamOptions, 'format'>): string {
  return options.format === 'sse' ? `id: ${sequence}\ndata: ${json}\n\n` : `${json}\n`;
}

/**
 * One timer per keep-alive interval for all SSE streams, not one per stream: thousands of idle
 * readers then cost one wake-up every 15 s.
 */
const keepAliveGroups = new Map<number, { streams: Set<ServerResponse>; timer: NodeJS.Timeout }>();
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

function keepAlive(intervalMs: number, res: ServerResponse): () => void {
  let group = keepAliveGroups.get(intervalMs);
  if (!group) {
    const streams = new Set<ServerResponse>();
    const timer = setInterval(() => streams.forEach((r) => r.write(KEEP_ALIVE)), intervalMs);
    timer.unref();
    keepAliveGroups.set(intervalMs, (group = { streams, timer }));
  }
  const { streams, timer } = group;
  streams.add(res);
  return () => {
    streams.delete(res);
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
