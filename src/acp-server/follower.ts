// One ACP connection following one session's log: a cursor, as every subscriber is (ARCHITECTURE.md,
// "Subscribers are cursors, not queues"). Replay (session/load) and live updates are the same loop,
// so there is no seam to lose or duplicate an update at, and a connection whose transport is full
// stops reading the log until it drains: the backlog is `lastSequence - cursor`, bounded by the
// log itself. Each event goes through the pure mapping (updates.ts) to the connection.
import type { EventLog } from '../sessions/event-log.js';
import type { UniversalEvent } from '../schema/events.js';

const BATCH = 128;

export interface FollowerSink {
  /** One event, in sequence order; `live` once the follower has caught up with the log. */
  event(event: UniversalEvent, live: boolean): void;
  /** The transport cannot take more now. */
  full(): boolean;
  /** The log will get nothing more (the session was deleted or the daemon is stopping). */
  closed(): void;
}

export class SessionFollower {
  private cursor: number;
  private readonly unlisten: () => void;
  private pumping = false;
  private stopped = false;
  private caughtUp: (() => void)[] = [];

  constructor(
    private readonly log: EventLog,
    after: number,
    private readonly sink: FollowerSink,
  ) {
    log.assertAvailable(after);
    this.cursor = after;
    this.unlisten = log.listen(
      () => this.pump(),
      () => {
        this.pump();
        this.stop();
        sink.closed();
      },
    );
  }

  /** Where the follower is: every event up to it has been handed to the sink. */
  get sequence(): number {
    return this.cursor;
  }

  /** Resolves once every event committed so far has been handed to the sink (the replay of a load). */
  caughtUpNow(): Promise<void> {
    const done = new Promise<void>((resolve) => this.caughtUp.push(resolve));
    this.pump();
    return done;
  }

  /** Reads on: called after each commit, and by the connection when its transport drains. */
  pump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    try {
      while (!this.stopped && !this.sink.full() && this.cursor < this.log.lastSequence) {
        const events = this.log.read(this.cursor, BATCH);
        if (events.length === 0) break;
        for (const event of events) {
          this.cursor = event.sequence;
          this.sink.event(event, this.cursor >= this.log.lastSequence);
          if (this.stopped) return;
        }
      }
    } finally {
      this.pumping = false;
    }
    if (this.cursor >= this.log.lastSequence && this.caughtUp.length > 0) {
      const waiting = this.caughtUp;
      this.caughtUp = [];
      for (const resolve of waiting) resolve();
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unlisten();
    const waiting = this.caughtUp;
    this.caughtUp = [];
    for (const resolve of waiting) resolve();
  }
}
