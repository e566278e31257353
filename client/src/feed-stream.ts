// client.events(): the daemon-wide feed (every session's entries, GET /v1/events/sse) from a
// cursor, as one async iterator over any number of SSE connections. Each connection resumes with
// Last-Event-ID from the last entry yielded, so an entry is yielded once and in cursor order
// across dropped connections and daemon restarts. Cursors may skip numbers (entries the filters
// leave out, or that retention dropped), so only order is checked, not contiguity.
import { backoffDelay, RECONNECT_DEFAULTS } from './backoff.js';
import { Cancel, sleep } from './cancel.js';
import { AgentwireError } from './errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS, retryable, type EventsOptions } from './event-stream.js';
import { sseMessages } from './streams.js';
import type { Transport } from './transport.js';
import type { CallOptions, FeedEntry } from './types.js';

export interface FeedOptions extends Omit<EventsOptions, 'untilEnded'> {
  /** Yield entries with cursor > after (an exclusive feed cursor); default 0, the oldest kept. */
  after?: number;
  /** Only this session's entries. */
  sessionId?: string;
  /** Only sessions of this agent. */
  agent?: string;
  /** Only these entry types: event types and `session.deleted`. */
  types?: readonly string[];
}

/** GET /v1/events: one page of the feed. */
export interface FeedPageOptions extends CallOptions, Pick<FeedOptions, 'after' | 'sessionId' | 'agent' | 'types' | 'includeRaw'> {
  /** Entries at most (default 1000). */
  limit?: number;
}

/** The feed's query parameters, as both routes take them. */
export function feedQuery(o: Pick<FeedPageOptions, 'after' | 'limit' | 'sessionId' | 'agent' | 'types' | 'includeRaw'>): Record<string, string | number | boolean | undefined> {
  return {
    after: o.after,
    limit: o.limit,
    include_raw: o.includeRaw ? true : undefined,
    session_id: o.sessionId,
    agent: o.agent,
    types: o.types?.length ? o.types.join(',') : undefined,
  };
}

export async function* followFeed(transport: Transport, options: FeedOptions = {}): AsyncGenerator<FeedEntry, void, undefined> {
  let cursor = options.after ?? 0;
  const maxAttempts = options.reconnect?.maxAttempts ?? RECONNECT_DEFAULTS.maxAttempts;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const timeoutMs = options.timeoutMs ?? transport.timeoutMs;
  const query = feedQuery({ ...options, after: undefined }); // the cursor goes as Last-Event-ID
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    const cancel = new Cancel(options.signal);
    let closedBecause: string | undefined;
    let failure: AgentwireError;
    try {
      cancel.arm(timeoutMs);
      const response = await transport.stream('GET', '/v1/events/sse', {
        accept: 'text/event-stream',
        query,
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
        const entry = parseEntry(message.data);
        if (entry.cursor <= cursor) continue;
        cursor = entry.cursor;
        failures = 0;
        cancel.disarm(); // the consumer may take its time with an entry
        yield entry;
        cancel.arm(idleMs, 'idle');
      }
      failure = new AgentwireError('stream_closed', `the daemon closed the feed after cursor ${cursor}${closedBecause ? `: ${closedBecause}` : ''}`);
    } catch (error) {
      if (options.signal?.aborted) return;
      failure = cancel.errorFor(error, 'following the feed', cancel.why === 'idle' ? idleMs : timeoutMs);
      if (!retryable(failure)) throw failure;
    } finally {
      cancel.abort('closed');
      cancel.dispose();
    }
    failures++;
    if (failures > maxAttempts) {
      throw new AgentwireError('stream_failed', `the feed: gave up after ${maxAttempts} reconnections without a new entry (after ${cursor}); last: ${failure.message}`, {
        ...(failure.status === undefined ? {} : { status: failure.status }),
        cause: failure,
      });
    }
    const delayMs = backoffDelay(failures, options.reconnect);
    options.onReconnect?.({ attempt: failures, delayMs, cursor, error: failure });
    if (!(await sleep(delayMs, options.signal))) return;
  }
}

function parseEntry(data: string): FeedEntry {
  try {
    const entry = JSON.parse(data) as FeedEntry;
    if (typeof entry?.cursor === 'number') return entry;
  } catch {
    // reported below
  }
  throw new AgentwireError('invalid_response', `an SSE frame of the feed that is not a feed entry: ${data.slice(0, 200)}`);
}
