// How the mirror reads a daemon: through the client's public API, so it follows sessions exactly
// as any product backend does (Last-Event-ID resumption, one event once, gaps refused). The mirror
// adds only what the client cannot know: where PostgreSQL says to resume, and what to do with a
// cursor the daemon no longer serves.
import { createClient } from '../index.js';
import { AgentwireError } from '../errors.js';
import type { DaemonSource, DaemonTarget, MirroredEvent } from './types.js';

/** Reading a daemon through agentwire-client. `reconnectCapMs` caps its reconnection delays. */
export function clientSource(daemon: DaemonTarget, fetchImpl?: typeof fetch, reconnectCapMs = 5000): DaemonSource {
  const client = createClient({ baseUrl: daemon.baseUrl, ...(daemon.token ? { token: daemon.token } : {}), ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  return {
    listSessions: (signal) => client.sessions.list({ signal }),
    events(sessionId, after, signal) {
      return client.sessions.handle(sessionId).events({ after, signal, untilEnded: true, reconnect: { maxDelayMs: reconnectCapMs } }) as AsyncIterable<MirroredEvent>;
    },
  };
}

/**
 * The first sequence the daemon still serves, when `error` says the cursor is older than that (the
 * daemon's retention removed those events before the mirror read them); undefined otherwise.
 */
export function oldestAvailable(error: unknown): number | undefined {
  if (!AgentwireError.is(error) || error.code !== 'events_evicted') return undefined;
  const oldest = Number(error.fields.oldestAvailable);
  return Number.isInteger(oldest) && oldest > 0 ? oldest : undefined;
}
