// What a session's stream (log-stream.ts) and the daemon-wide feed's (feed-stream.ts) share: a
// reader is a cursor that pulls from its source while the socket accepts data, not a queue. This
// is the pacing around the pull: writes wait for the end of the tick (what was appended together
// leaves in one write), a full socket waits for `drain`, and a reader that stays more than maxLag
// behind with its socket full past the grace period is judged too slow. One agent stdout read can
// append thousands of events before a socket gets the chance to drain, so lag alone does not mean
// a reader is slow: it is judged only after the grace period, still stalled and still behind.
import type { ServerResponse } from 'node:http';
import { keepAlive } from './keep-alive.js';
import { outputFor, type StreamOutput } from './stream-output.js';

export interface Pacing {
  maxLag: number;
  /** How long a reader may stay over maxLag with its socket full before it is dropped. */
  lagGraceMs: number;
  keepAliveMs: number;
  retryMs: number;
}

export abstract class PullStream {
  protected waitingDrain = false;
  protected closed = false;
  /** start() ran: the socket is being written. */
  protected started = false;
  protected out!: StreamOutput;
  private scheduled = false;
  private lagTimer: NodeJS.Timeout | undefined;
  private stopKeepAlive: (() => void) | undefined;
  private stopDrain: (() => void) | undefined;

  constructor(
    protected readonly res: ServerResponse,
    private readonly pacing: Pacing,
  ) {}

  /** How many entries the reader is behind its source's head. */
  protected abstract behind(): number;
  /** Writes what the socket takes; `force` writes past a full socket (a final flush). */
  protected abstract pump(force?: boolean): void;
  /** The reader stayed too far behind: close it saying where to resume. */
  protected abstract dropSlow(lag: number): void;
  /** The socket closed (the client went away, or the stream was ended). */
  protected abstract socketClosed(): void;

  /** Begins writing: the SSE preamble (`sse`), then whatever the cursor has not had yet. */
  protected begin(sse: boolean): void {
    this.started = true;
    this.out = outputFor(this.res);
    this.res.on('close', () => this.socketClosed());
    this.stopDrain = this.out.onDrain(() => {
      this.waitingDrain = false;
      this.pump();
    });
    if (sse) {
      this.out.write(`retry: ${this.pacing.retryMs}\n\n`);
      this.stopKeepAlive = keepAlive(this.pacing.keepAliveMs, this.out);
    }
    this.pump();
  }

  /** The source has more: write it at the end of this tick, or watch the lag of a full socket. */
  protected appended(): void {
    if (!this.started) return;
    if (!this.waitingDrain) return this.schedule();
    if (this.behind() > this.pacing.maxLag && !this.lagTimer) {
      this.lagTimer = setTimeout(() => this.judgeLag(), this.pacing.lagGraceMs);
      this.lagTimer.unref();
    }
  }

  /** Stops the keep-alive, the drain listener and the lag timer (the stream is finished). */
  protected stopPacing(): void {
    this.stopKeepAlive?.();
    this.stopDrain?.();
    if (this.lagTimer) clearTimeout(this.lagTimer);
  }

  private judgeLag(): void {
    this.lagTimer = undefined;
    const lag = this.behind();
    if (this.closed || !this.waitingDrain || lag <= this.pacing.maxLag) return;
    this.dropSlow(lag);
  }

  /**
   * Writing waits for the end of the tick: entries appended together (a turn's opening events, the
   * lines of one stdout read) leave as one write, and readers at the same cursor share its bytes.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.flushTick);
  }

  // Made once per stream, not a closure per schedule: an event fanned out to 5,000 readers schedules
  // 5,000 of these in one tick.
  private readonly flushTick = (): void => {
    this.scheduled = false;
    this.pump();
  };
}
