// client.events(): the daemon-wide feed (every session's entries, GET /v1/events/sse) from a
// cursor, as one async iterator over any number of SSE connections. Each connection resumes with
// Last-Event-ID from the last entry yielded, so an entry is yielded once and in cursor order
// across dropped connections and daemon restarts. Cursors may skip numbers (entries the filters
// leave out, or that retention dropped), so only order is checked, not contiguity. The loop over
// connections is resuming-sse.ts's, shared with session.events().
import { AgentwireError } from './errors.js';
import type { EventsOptions } from './event-stream.js';
import { fillPath, type Operation, type Query } from './paths.js';
import { followSse } from './resuming-sse.js';
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
export function feedQuery(o: Pick<FeedPageOptions, 'after' | 'limit' | 'sessionId' | 'agent' | 'types' | 'includeRaw'>): Query<Operation<'/v1/events', 'get'>> {
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
  yield* followSse<FeedEntry>(
    transport,
    {
      path: fillPath('/v1/events/sse', {}),
      query: feedQuery({ ...options, after: undefined }), // the cursor goes as Last-Event-ID
      subject: 'the feed',
      item: 'entry',
      parse(data, cursor) {
        const entry = parseEntry(data);
        return entry.cursor <= cursor ? undefined : { value: entry, cursor: entry.cursor };
      },
    },
    options.after ?? 0,
    options,
  );
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
