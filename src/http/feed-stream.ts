// One reader of the daemon-wide feed over SSE. Like a session's LogStream it is a cursor, not a
// queue: it pulls pages from the feed (its window, or the store behind it) while the socket
// accepts data and waits for `drain` otherwise, so replay and live delivery are one loop with no
// seam, and its only backlog is `lastCursor - cursor`. A reader that stays more than maxLag
// entries behind with a full socket past the grace period is closed with a comment saying where
// to resume: the lag rule of the session streams, with its own bound (--feed-max-lag), since one
// feed reader carries every session's events.
import type { ServerResponse } from 'node:http';
import type { FeedLog } from '../sessions/feed-log.js';
import { FEED_PAGE } from '../sessions/feed-log.js';
import { matches, sseFrames, type FeedFilter } from './feed-frames.js';
import { keepAlive } from './log-stream.js';
import { outputFor, type StreamOutput } from './stream-output.js';

export interface FeedStreamOptions {
  after: number;
  includeRaw: boolean;
  filter: FeedFilter;
  maxLag: number;
  lagGraceMs: number;
  keepAliveMs: number;
  retryMs: number;
  onClose?: () => void;
  onDropped?: (reason: 'lag') => void;
}

export class FeedStream {
  /** Read up to here (entries the filter left out included). */
  private cursor: number;
  /** The last cursor sent: where a client resumes (Last-Event-ID). */
  private sent: number;
  private waitingDrain = false;
  private scheduled = false;
  private closed = false;
  private readonly unlisten: () => void;
  private stopKeepAlive: (() => void) | undefined;
  private stopDrain: (() => void) | undefined;
  private out!: StreamOutput;
  private lagTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly feed: FeedLog,
    private readonly res: ServerResponse,
    private readonly options: FeedStreamOptions,
  ) {
    this.cursor = this.sent = options.after;
    this.unlisten = feed.listen(
      () => this.onAppend(),
      () => this.closeAfterFlush('the daemon is stopping'),
    );
  }

  start(): void {
    if (this.res.destroyed) return this.finish();
    this.out = outputFor(this.res);
    this.res.on('close', () => this.finish());
    this.stopDrain = this.out.onDrain(() => {
      this.waitingDrain = false;
      this.pump();
    });
    this.out.write(`retry: ${this.options.retryMs}\n\n`);
    this.stopKeepAlive = keepAlive(this.options.keepAliveMs, this.out);
    this.pump();
  }

  private onAppend(): void {
    if (!this.waitingDrain) return this.schedule();
    if (this.feed.lastCursor - this.cursor > this.options.maxLag && !this.lagTimer) {
      this.lagTimer = setTimeout(() => this.judgeLag(), this.options.lagGraceMs);
      this.lagTimer.unref();
    }
  }

  private judgeLag(): void {
    this.lagTimer = undefined;
    const lag = this.feed.lastCursor - this.cursor;
    if (this.closed || !this.waitingDrain || lag <= this.options.maxLag) return;
    this.options.onDropped?.('lag');
    this.close(`subscriber fell ${lag} entries behind (limit ${this.options.maxLag}); reconnect with Last-Event-ID: ${this.sent}`);
  }

  /** Entries committed in one tick leave in one write, at the end of it. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(force = false): void {
    while (!this.closed && (force || !this.waitingDrain) && this.cursor < this.feed.lastCursor) {
      let page: ReturnType<FeedLog['read']>;
      try {
        page = this.feed.read(this.cursor, FEED_PAGE, this.options.includeRaw);
      } catch {
        // --persist off: the window moved past what this reader still needed.
        return this.close(`entries after ${this.sent} are no longer held; resume from GET /v1/events to see the oldest available`);
      }
      const { entries, to } = page;
      const wanted = entries.filter((e) => matches(e, this.options.filter));
      this.cursor = to;
      if (wanted.length === 0) continue;
      this.sent = wanted.at(-1)!.cursor;
      if (!this.out.writeWire(sseFrames(wanted, this.out.chunked))) this.waitingDrain = true;
    }
  }

  /** The feed gets nothing more: send what this reader has not had (even past a full socket), then end. */
  private closeAfterFlush(reason: string): void {
    if (this.out) this.pump(true);
    this.close(reason);
  }

  close(reason?: string): void {
    if (this.closed) return;
    if (reason && this.out) this.out.write(`: closed: ${reason}\n\n`);
    this.finish();
    if (this.out) this.out.end();
    else this.res.end();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    this.stopKeepAlive?.();
    this.stopDrain?.();
    if (this.lagTimer) clearTimeout(this.lagTimer);
    this.options.onClose?.();
  }
}
