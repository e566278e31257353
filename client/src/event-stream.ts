// session.events(): a session's events from a cursor, as one async iterator over any number of SSE
// connections. Each connection resumes with Last-Event-ID from the last event yielded; an event is
// yielded once (a sequence at or below the cursor is dropped) and never past a gap (a sequence that
// skips ahead throws). Transport failures reconnect with backoff; answers that cannot get better
// by retrying (404 session, 401, 410 evicted cursor, 400) are thrown as they are. The loop over
// connections is resuming-sse.ts's, shared with the feed.
import type { ReconnectOptions } from './backoff.js';
import { AgentwireError } from './errors.js';
import { followSse } from './resuming-sse.js';
import { fillPath } from './paths.js';
import type { Transport } from './transport.js';
import type { SessionInfo, UniversalEvent } from './types.js';

export interface EventsOptions {
  /** Yield events with sequence > after (an exclusive cursor); default 0, the whole log. */
  after?: number;
  /** Ask for each event's native payload in `raw`. */
  includeRaw?: boolean;
  /** Ends the iteration (cleanly: the loop just stops) and closes the connection. */
  signal?: AbortSignal;
  /** End the iteration after yielding `session.ended`; default true. With false it stays open, as the daemon's stream does. */
  untilEnded?: boolean;
  /** Per connection: milliseconds until the response head; default the client's timeoutMs. */
  timeoutMs?: number;
  /** Per connection: a connection silent this long (the daemon sends a keep-alive every 15 s) is dropped and resumed; default 45 000. 0: never. */
  idleTimeoutMs?: number;
  reconnect?: ReconnectOptions;
  /** Told before each reconnection, for logs and metrics. */
  onReconnect?: (info: ReconnectInfo) => void;
}

export interface ReconnectInfo {
  /** 1 for the first retry since the last event. */
  attempt: number;
  delayMs: number;
  /** The Last-Event-ID the next connection sends. */
  cursor: number;
  /** What ended the previous connection. */
  error: AgentwireError;
}

export async function* followEvents(transport: Transport, sessionId: string, options: EventsOptions = {}): AsyncGenerator<UniversalEvent, void, undefined> {
  const after = options.after ?? 0;
  const untilEnded = options.untilEnded ?? true;
  if (untilEnded && after > 0) {
    // A cursor at or past session.ended would otherwise wait forever for an event that came before it.
    const timeoutMs = options.timeoutMs ?? transport.timeoutMs;
    const info = await transport.call('get', '/v1/sessions/{id}', { id: sessionId }, { signal: options.signal, timeoutMs }).catch((error: unknown) => {
      if (options.signal?.aborted) return undefined;
      throw error;
    });
    if (!info || (info.ended && info.eventCount <= after)) return;
  }
  yield* followSse<UniversalEvent>(
    transport,
    {
      path: fillPath('/v1/sessions/{id}/events/sse', { id: sessionId }),
      query: { include_raw: options.includeRaw ? true : undefined },
      subject: `session '${sessionId}'`,
      item: 'event',
      parse(data, cursor) {
        const event = parseEvent(data, sessionId);
        if (event.sequence <= cursor) return undefined;
        if (event.sequence !== cursor + 1) {
          throw new AgentwireError('sequence_gap', `session '${sessionId}': event ${event.sequence} came after ${cursor}; events ${cursor + 1}–${event.sequence - 1} would be missing`);
        }
        return { value: event, cursor: event.sequence };
      },
      last: (event) => untilEnded && event.type === 'session.ended',
    },
    after,
    options,
  );
}

function parseEvent(data: string, sessionId: string): UniversalEvent {
  try {
    const event = JSON.parse(data) as UniversalEvent;
    if (typeof event?.sequence === 'number') return event;
  } catch {
    // reported below
  }
  throw new AgentwireError('invalid_response', `session '${sessionId}': an SSE frame that is not a universal event: ${data.slice(0, 200)}`);
}
