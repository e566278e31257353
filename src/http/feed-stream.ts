// One reader of the daemon-wide feed over SSE. Like a session's LogStream it is a cursor, not a
// queue: it pulls pages from the feed (its window, or the store behind it) while the socket
// accepts data and waits for `drain` otherwise, so replay and live delivery are one loop with no
// seam, and its only backlog is `lastCursor - cursor`. A reader that stays more than maxLag
// entries behind with a full socket past the grace period is closed with a comment saying where
// to resume: the lag rule of the session streams (pull-stream.ts), with its own bound
// (--feed-max-lag), since one feed reader carries every session's events.
import type { ServerResponse } from 'node:http';
import type { FeedLog } from '../sessions/feed-log.js';
import { FEED_PAGE } from '../sessions/feed-log.js';
import { matches, sseFrames, type FeedFilter } from './feed-frames.js';
import { PullStream } from './pull-stream.js';

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

export class FeedStream extends PullStream {
  /** Read up to here (entries the filter left out included). */
  private cursor: number;
  /** The last cursor sent: where a client resumes (Last-Event-ID). */
  private sent: number;
  private readonly unlisten: () => void;

  constructor(
    private readonly feed: FeedLog,
    res: ServerResponse,
    private readonly options: FeedStreamOptions,
  ) {
    super(res, options);
    this.cursor = this.sent = options.after;
    this.unlisten = feed.listen(
      () => this.appended(),
      () => this.closeAfterFlush('the daemon is stopping'),
    );
  }

  start(): void {
    if (this.res.destroyed) return this.finish();
    this.begin(true);
  }

  protected behind(): number {
    return this.feed.lastCursor - this.cursor;
  }

  protected dropSlow(lag: number): void {
    this.options.onDropped?.('lag');
    this.close(`subscriber fell ${lag} entries behind (limit ${this.options.maxLag}); reconnect with Last-Event-ID: ${this.sent}`);
  }

  protected socketClosed(): void {
    this.finish();
  }

  protected pump(force = false): void {
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
    if (this.started) this.pump(true);
    this.close(reason);
  }

  close(reason?: string): void {
    if (this.closed) return;
    if (reason && this.started) this.out.write(`: closed: ${reason}\n\n`);
    this.finish();
    if (this.started) this.out.end();
    else this.res.end();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    this.stopPacing();
    this.options.onClose?.();
  }
}
