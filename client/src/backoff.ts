// The client's one backoff: exponential with full jitter (a random delay between 0 and the
// exponential cap), so a fleet of clients cut off together by one daemon restart does not come back
// in step. session.events() reconnects with it; the mirror waits with it for a daemon that does not
// answer and before retrying a batch PostgreSQL refused.

export interface ReconnectOptions {
  /** Consecutive failed attempts (no new event in between) before giving up; default 10. */
  maxAttempts?: number;
  /** Cap of the first retry's delay; default 250 ms. It doubles per failed attempt … */
  initialDelayMs?: number;
  /** … up to this; default 10 000 ms. */
  maxDelayMs?: number;
}

export const RECONNECT_DEFAULTS = { maxAttempts: 10, initialDelayMs: 250, maxDelayMs: 10_000 } as const;

/** The delay before attempt `attempt` (1 for the first retry after a failure). */
export function backoffDelay(attempt: number, options: ReconnectOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialDelayMs ?? RECONNECT_DEFAULTS.initialDelayMs;
  const max = options.maxDelayMs ?? RECONNECT_DEFAULTS.maxDelayMs;
  const cap = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * cap);
}
