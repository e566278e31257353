// What keeps the held sessions within bounds over time: ended sessions swept after their TTL, the
// store's retention, and the watch on a store that stopped taking writes. Separate from
// session-manager.ts, which creates and finds sessions; this runs only on timers and store health.
import type { StoreFailure } from '../store/event-store.js';
import type { Session } from './session.js';
import type { SessionManagerOptions } from './session-manager.js';

export type SessionUpkeepOptions = Pick<SessionManagerOptions, 'clock' | 'endedSessionTtlMs' | 'retentionMs' | 'deletedRetentionMs' | 'maxStoreBytes' | 'store' | 'limits' | 'logger'> & {
  /** A session swept out of memory (memory store) leaves the list: the feed must hear it. */
  forget(session: Session): void;
};

export class SessionUpkeep {
  private readonly sweeper: NodeJS.Timeout | undefined;
  private readonly pruner: NodeJS.Timeout | undefined;
  private backlogWatch: NodeJS.Timeout | undefined;

  /** `sessions` is the manager's own map; `claimed` (SessionRoom) are kept for the create that claimed them. */
  constructor(
    private readonly sessions: Map<string, Session>,
    private readonly claimed: ReadonlySet<string>,
    private readonly options: SessionUpkeepOptions,
  ) {
    if (options.endedSessionTtlMs > 0) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(options.endedSessionTtlMs, 60_000));
      this.sweeper.unref();
    }
    if (options.store.durable) {
      this.pruner = setInterval(() => this.prune(), PRUNE_EVERY_MS);
      this.pruner.unref();
      options.store.onHealth((failure) => this.storeHealth(failure));
      options.store.onRecordDropped((id, part, message) => {
        options.logger.error({ sessionId: id, part, message }, 'a session record could not be serialised; stored without the part that failed');
        this.sessions.get(id)?.recordDropped(part, message);
      });
    }
  }

  private get durable(): boolean {
    return this.options.store.durable;
  }

  /**
   * Sessions that ended longer than the TTL ago: forgotten (memory store), or their in-memory
   * window released (durable store: they stay listed and readable from the store).
   */
  sweep(): void {
    const cutoff = this.options.clock.now().getTime() - this.options.endedSessionTtlMs;
    for (const [id, s] of this.sessions) {
      if (s.endedAt && s.endedAt.getTime() <= cutoff && !this.claimed.has(id)) {
        if (this.durable) {
          if (s.subscribers === 0) s.log.releaseWindow();
          continue;
        }
        this.sessions.delete(id);
        this.options.forget(s);
        s.log.close();
      }
    }
  }

  /** Retention: drops ended sessions past --retention, then the oldest ended while over --max-store-mb. */
  prune(): void {
    if (!this.durable) return;
    const now = this.options.clock.now().getTime();
    const endedBefore = new Date(now - this.options.retentionMs).toISOString();
    const deletedBefore = new Date(now - this.options.deletedRetentionMs).toISOString();
    try {
      for (const id of this.options.store.prune({ endedBefore, deletedBefore, maxBytes: this.options.maxStoreBytes })) {
        const session = this.sessions.get(id);
        if (session && !this.claimed.has(id)) {
          this.sessions.delete(id);
          session.log.close();
        }
      }
    } catch (err) {
      this.options.logger.warn({ err }, 'store retention failed; will try again');
    }
  }

  /** Daemon shutdown: no timer fires any more. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.pruner) clearInterval(this.pruner);
    clearInterval(this.backlogWatch);
  }

  /** The store stopped taking writes: every live session's stream says so (visible once it recovers). */
  private storeHealth(failure: StoreFailure): void {
    const { logger } = this.options;
    if (!failure) {
      clearInterval(this.backlogWatch);
      this.backlogWatch = undefined;
      return logger.info('event store is taking writes again; everything held was committed');
    }
    logger.error({ failure }, 'event store cannot take writes; new work is refused with 507 until it recovers');
    for (const session of this.sessions.values()) if (session.agentRunning) session.storeFailed(failure);
    // What the store holds back is memory: past one session's event budget, the agents stop
    // (suspended, like a graceful stop: their sessions resume once the store is back).
    this.backlogWatch ??= setInterval(() => {
      if (this.options.store.pendingEvents <= this.options.limits.maxEvents) return;
      logger.error({ pending: this.options.store.pendingEvents }, 'too many events held while the store cannot take writes: stopping the agents');
      for (const session of this.sessions.values()) void session.suspend();
    }, 1_000).unref();
  }
}

const PRUNE_EVERY_MS = 10 * 60_000;
