// How the mirror reads a daemon: through the client's public API, so it follows the daemon's feed
// exactly as any product backend does (Last-Event-ID resumption, one entry once, in order). The
// mirror adds only what the client cannot know: where PostgreSQL says to resume, and what to do
// with a cursor the daemon no longer serves.
import { createClient } from '../index.js';
import { AgentwireError } from '../errors.js';
import type { DaemonSource, DaemonTarget } from './types.js';

/** Reading a daemon through agentwire-client. `reconnectCapMs` caps its reconnection delays. */
export function clientSource(daemon: DaemonTarget, fetchImpl?: typeof fetch, reconnectCapMs = 5000): DaemonSource {
  const client = createClient({ baseUrl: daemon.baseUrl, ...(daemon.token ? { token: daemon.token } : {}), ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  return {
    check: async (signal) => void (await client.health({ signal })),
    // A few quick reconnections by the client; past them the follower's own loop takes over, so
    // that a daemon that is down shows as down.
    feed: (after, signal) => client.events({ after, signal, reconnect: { maxDelayMs: reconnectCapMs, maxAttempts: 3 } }),
  };
}

/**
 * The first feed cursor the daemon still serves, when `error` says the cursor is older than that (a
 * --persist off daemon's window moved on before the mirror read them); undefined otherwise.
 */
export function oldestAvailable(error: unknown): number | undefined {
  if (!AgentwireError.is(error) || error.code !== 'events_evicted') return undefined;
  const oldest = Number(error.fields.oldestAvailable);
  return Number.isInteger(oldest) && oldest > 0 ? oldest : undefined;
}
