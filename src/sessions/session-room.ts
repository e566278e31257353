// The --max-sessions bound: ids reserved by creates in flight, ended sessions claimed to make way
// for them, and which sessions count as live. Separate from session-manager.ts so who gets room,
// and who is refused, is decided in one place (the warm pool's room is counted from it too).
import { ApiError } from '../errors.js';
import type { EventStore } from '../store/event-store.js';
import type { Session } from './session.js';

export class SessionRoom {
  /** Ids being created: reserved so a concurrent create of the same id gets 409. */
  readonly reserved = new Set<string>();
  /** Ended sessions a pending create will replace once it succeeds. */
  readonly claimed = new Set<string>();

  /** `sessions` is the manager's own map, read here, never changed. */
  constructor(
    private readonly sessions: ReadonlyMap<string, Session>,
    private readonly options: { maxSessions: number; store: EventStore },
  ) {}

  /** What the bound leaves for warm spares (WarmPool's room): they count against it with the live agents. */
  forSpares(spares: number): number {
    return this.options.maxSessions - this.liveAgents() - spares;
  }

  /** Agent processes the sessions run (or are starting), for the limit spares count against. */
  private liveAgents(): number {
    let live = this.reserved.size;
    for (const s of this.sessions.values()) if (s.agentRunning) live++;
    return live;
  }

  /**
   * At the limit, picks the oldest ended session to make way (claimed, so two concurrent creates
   * do not pick the same one); refuses when every session is live.
   */
  claim(): string | undefined {
    // A durable store keeps ended sessions (retention bounds them on disk): only live ones count.
    if (this.options.store.durable) return this.claimLive();
    if (this.sessions.size - this.claimed.size + this.reserved.size < this.options.maxSessions) return undefined;
    for (const [id, s] of this.sessions) {
      if (s.status === 'ended' && !this.claimed.has(id)) {
        this.claimed.add(id);
        return id;
      }
    }
    throw this.tooMany();
  }

  private claimLive(): undefined {
    // Restored sessions whose agent is not running cost a row, not a process: they do not count.
    // Nor do warm spares here: they make way for a session (trim) rather than refuse it.
    if (this.liveAgents() < this.options.maxSessions) return undefined;
    throw this.tooMany();
  }

  private tooMany(): ApiError {
    return new ApiError('too_many_sessions', `The daemon already holds ${this.options.maxSessions} live sessions (--max-sessions); terminate or DELETE one.`, {
      limit: this.options.maxSessions,
    });
  }
}
