// The daemon-wide feed's wire shapes (GET /v1/events, GET /v1/events/sse; docs/feed.md). One
// entry shape serves both: the poll's `entries` items and each SSE frame's `data`. The cursor sits
// beside the event, never in it: the event is exactly what the session's own streams serve.
import { UniversalEvent } from './events.js';
import { z } from './zod.js';

const FeedCursor = z.number().int().min(1).openapi({ description: "The entry's position in the daemon-wide feed: only grows, never reused, also across restarts (SSE: the frame's `id:`)" });

export const SessionDeleted = z
  .object({
    session_id: z.string(),
    agent: z.string(),
    time: z.string().openapi({ description: 'When the session left the list (RFC 3339, UTC)' }),
    last_sequence: z.number().int().min(0).openapi({ description: "The sequence of the session's last event: every entry of it came before this one" }),
    reason: z.enum(['deleted', 'forgotten', 'retention']).openapi({
      description: '`deleted`: DELETE /v1/sessions/{id}; `forgotten`: an ended session forgotten to make room or after --ended-session-ttl-ms (--persist off), or a create that failed; `retention`: dropped by --retention or --max-store-mb',
    }),
  })
  .openapi('SessionDeleted', { description: 'A session left the session list; a later session.started under the same id is a new session (sequence 1 again)' });

export const FeedEventEntry = z
  .object({ cursor: FeedCursor, agent: z.string().openapi({ description: "The session's agent (most agents' events do not name it)" }), event: UniversalEvent })
  .openapi('FeedEventEntry');
export const FeedDeletionEntry = z.object({ cursor: FeedCursor, session_deleted: SessionDeleted }).openapi('FeedDeletionEntry');
export const FeedEntry = z.union([FeedEventEntry, FeedDeletionEntry]).openapi('FeedEntry', { description: 'One entry of the feed: a session event, or a session deletion' });

export const FeedResponse = z
  .object({
    entries: z.array(FeedEntry),
    cursor: z.number().int().min(0).openapi({ description: 'Where this page ends (past entries the filters left out too): pass it as `after` next' }),
    hasMore: z.boolean(),
    lastCursor: z.number().int().min(0).openapi({ description: "The feed's last committed cursor when the page was read: a follower that wants only what comes next streams from it" }),
  })
  .openapi('FeedResponse');

// Query strings: both spellings, as the session routes take them.
const boolish = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])]).transform((v) => v === true || v === 'true' || v === '1');
const Cursor = z.string().regex(/^\d{1,15}$/, 'must be a non-negative integer').transform(Number);
const filters = {
  session_id: z.string().min(1).optional(),
  sessionId: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  types: z.string().min(1).optional(),
  include_raw: boolish.optional(),
  includeRaw: boolish.optional(),
};
export const FeedQuery = z.object({ after: Cursor.optional(), limit: Cursor.pipe(z.number().min(1).max(10_000)).optional(), ...filters }).strict();
export const FeedSseQuery = z.object({ after: Cursor.optional(), ...filters, token: z.string().optional() }).strict();

/** What the OpenAPI document advertises (snake_case, typed). */
export const FEED_QUERY_DOCUMENT = {
  after: z.number().int().min(0).optional().openapi({ description: 'Exclusive feed cursor (default 0: from the oldest entry kept)' }),
  session_id: z.string().optional().openapi({ description: "Only this session's entries (alias: sessionId)" }),
  agent: z.string().optional().openapi({ description: 'Only sessions of this agent' }),
  types: z.string().optional().openapi({ description: 'Only these entry types, comma-separated: event types (`session.started`, `turn.ended` …) and `session.deleted`' }),
  include_raw: z.boolean().optional().openapi({ description: 'Fill `raw` with the native payload (alias: includeRaw)' }),
};
