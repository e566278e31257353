// The loop both resumable streams run (session.events() in event-stream.ts, client.events() in
// feed-stream.ts): one async iterator over any number of SSE connections, each resuming with
// Last-Event-ID from the last item yielded. The connection's head and idle timeouts, the daemon's
// closing comment, reconnection with backoff (reset by every new item), and which failures are
// thrown at once are the same for both; what a frame holds and where it puts the cursor is each
// stream's own (`parse`).
import { backoffDelay, RECONNECT_DEFAULTS } from './backoff.js';
import { Cancel, sleep } from './cancel.js';
import { AgentwireError } from './errors.js';
import type { EventsOptions } from './event-stream.js';
import { sseMessages } from './streams.js';
import type { Transport } from './transport.js';

export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** Statuses worth another connection: the daemon is restarting, overloaded or briefly unreachable. */
export function retryable(error: AgentwireError): boolean {
  if (error.status === undefined) return error.code === 'network_error' || error.code === 'timeout' || error.code === 'stream_closed';
  return error.status === 408 || error.status === 429 || error.status >= 500;
}

export interface ResumingSource<T> {
  path: string;
  query: Record<string, string | number | boolean | undefined>;
  /** Names the stream in errors: `session 'x'`, `the feed`. */
  subject: string;
  /** What one item is called in errors: `event`, `entry`. */
  item: string;
  /** The item a frame holds with its cursor, or undefined for one already yielded; throws on a bad frame or a gap. */
  parse(data: string, cursor: number): { value: T; cursor: number } | undefined;
  /** The iteration ends after yielding this item. */
  last?(value: T): boolean;
}

export async function* followSse<T>(transport: Transport, source: ResumingSource<T>, after: number, options: EventsOptions): AsyncGenerator<T, void, undefined> {
  let cursor = after;
  const maxAttempts = options.reconnect?.maxAttempts ?? RECONNECT_DEFAULTS.maxAttempts;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const timeoutMs = options.timeoutMs ?? transport.timeoutMs;
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    const cancel = new Cancel(options.signal);
    let closedBecause: string | undefined;
    let failure: AgentwireError;
    try {
      cancel.arm(timeoutMs);
      const response = await transport.stream('GET', source.path, {
        accept: 'text/event-stream',
        query: source.query,
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
        const next = source.parse(message.data, cursor);
        if (!next) continue;
        cursor = next.cursor;
        failures = 0;
        // The consumer may take its time with an item: that is not the connection being idle.
        cancel.disarm();
        yield next.value;
        if (source.last?.(next.value)) return;
        cancel.arm(idleMs, 'idle');
      }
      failure = new AgentwireError('stream_closed', `${source.subject}: the daemon closed the stream after ${source.item} ${cursor}${closedBecause ? `: ${closedBecause}` : ''}`);
    } catch (error) {
      if (options.signal?.aborted) return;
      failure = cancel.errorFor(error, `following ${source.subject}`, cancel.why === 'idle' ? idleMs : timeoutMs);
      if (!retryable(failure)) throw failure;
    } finally {
      cancel.abort('closed');
      cancel.dispose();
    }
    failures++;
    if (failures > maxAttempts) {
      throw new AgentwireError('stream_failed', `${source.subject}: gave up after ${maxAttempts} reconnections without a new ${source.item} (after ${cursor}); last: ${failure.message}`, {
        ...(failure.status === undefined ? {} : { status: failure.status }),
        cause: failure,
      });
    }
    const delayMs = backoffDelay(failures, options.reconnect);
    options.onReconnect?.({ attempt: failures, delayMs, cursor, error: failure });
    if (!(await sleep(delayMs, options.signal))) return;
  }
}
