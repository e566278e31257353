// session.events(): a session's events from a cursor, as one async iterator over any number of SSE
// connections. Each connection resumes with Last-Event-ID from the last event yielded; an event is
// yielded once (a sequence at or below the cursor is dropped) and never past a gap (a sequence that
// skips ahead throws). Transport failures reconnect with backoff; answers that cannot get better
// by retrying (404 session, 401, 410 evicted cursor, 400) are thrown as they are.
import { backoffDelay, RECONNECT_DEFAULTS, type ReconnectOptions } from './backoff.js';
import { Cancel, sleep } from './cancel.js';
import { AgentwireError } from './errors.js';
import { sseMessages } from './streams.js';
import { seg, type Transport } from './transport.js';
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

export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** Statuses worth another connection: the daemon is restarting, overloaded or briefly unreachable. */
export function retryable(error: AgentwireError): boolean {
  if (error.status === undefined) return error.code === 'network_error' || error.code === 'timeout' || error.code === 'stream_closed';
  return error.status === 408 || error.status === 429 || error.status >= 500;
}

export async function* followEvents(transport: Transport, sessionId: string, options: EventsOptions = {}): AsyncGenerator<UniversalEvent, void, undefined> {
  let cursor = options.after ?? 0;
  const untilEnded = options.untilEnded ?? true;
  const maxAttempts = options.reconnect?.maxAttempts ?? RECONNECT_DEFAULTS.maxAttempts;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const timeoutMs = options.timeoutMs ?? transport.timeoutMs;
  const path = `/v1/sessions/${seg(sessionId)}/events/sse`;

  if (untilEnded && cursor > 0) {
    // A cursor at or past session.ended would otherwise wait forever for an event that came before it.
    const info = await transport.json<SessionInfo>('GET', `/v1/sessions/${seg(sessionId)}`, { signal: options.signal, timeoutMs }).catch((error: unknown) => {
      if (options.signal?.aborted) return undefined;
      throw error;
    });
    if (!info || (info.ended && info.eventCount <= cursor)) return;
  }

  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    const cancel = new Cancel(options.signal);
    let closedBecause: string | undefined;
    let failure: AgentwireError;
    try {
      cancel.arm(timeoutMs);
      const response = await transport.stream('GET', path, {
        accept: 'text/event-stream',
        query: { include_raw: options.includeRaw ? true : undefined },
        headers: cursor > 0 ? { 'last-event-id': String(cursor) } : {},
        timeoutMs,
      }, cancel);
      cancel.arm(idleMs, 'idle');
      const messages = sseMessages(response.body!, {
        onChunk: () => cancel.arm(idleMs, 'idle'),
        onComment: (comment) => {
          if (comment.startsWith('closed:')) closedBecause = comment.slice('closed:'.length).trim();
        },
      });
      for await (const message of messages) {
        const event = parseEvent(message.data, sessionId);
        if (event.sequence <= cursor) continue;
        if (event.sequence !== cursor + 1) {
          throw new AgentwireError('sequence_gap', `session '${sessionId}': event ${event.sequence} came after ${cursor}; events ${cursor + 1}–${event.sequence - 1} would be missing`);
        }
        cursor = event.sequence;
        failures = 0;
        // The consumer may take its time with an event: that is not the connection being idle.
        cancel.disarm();
        yield event;
        if (untilEnded && event.type === 'session.ended') return;
        cancel.arm(idleMs, 'idle');
      }
      failure = new AgentwireError('stream_closed', `the daemon closed the stream after event ${cursor}${closedBecause ? `: ${closedBecause}` : ''}`);
    } catch (error) {
      if (options.signal?.aborted) return;
      failure = cancel.errorFor(error, `following session '${sessionId}'`, cancel.why === 'idle' ? idleMs : timeoutMs);
      if (!retryable(failure)) throw failure;
    } finally {
      cancel.abort('closed');
      cancel.dispose();
    }
    failures++;
    if (failures > maxAttempts) {
      throw new AgentwireError('stream_failed', `session '${sessionId}': gave up after ${maxAttempts} reconnections without a new event (after ${cursor}); last: ${failure.message}`, {
        ...(failure.status === undefined ? {} : { status: failure.status }),
        cause: failure,
      });
    }
    const delayMs = backoffDelay(failures, options.reconnect);
    options.onReconnect?.({ attempt: failures, delayMs, cursor, error: failure });
    if (!(await sleep(delayMs, options.signal))) return;
  }
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
