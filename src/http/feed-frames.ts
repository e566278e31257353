// The feed's entries as bytes: SSE frames (`id: <cursor>` and one `data:` line with the entry) and
// the poll's page. An entry is `{"cursor":N,"event":<the event's stored JSON>}` or
// `{"cursor":N,"session_deleted":{…}}`, built around the stored bytes, never re-serialized; and
// the filters a reader asked for (session, agent, types) are applied here.
import type { FeedEntry, FeedLog } from '../sessions/feed-log.js';
import { entryType, FEED_PAGE } from '../sessions/feed-log.js';

export interface FeedFilter {
  sessionId?: string;
  agent?: string;
  types?: ReadonlySet<string>;
}

export function matches(entry: FeedEntry, filter: FeedFilter): boolean {
  if (filter.sessionId !== undefined && entry.sessionId !== filter.sessionId) return false;
  if (filter.agent !== undefined && entry.agent !== filter.agent) return false;
  return filter.types === undefined || filter.types.has(entryType(entry));
}

const EVENT_KEY = Buffer.from(',"event":');

/** `,"agent":"mock"` before an event, so a follower knows a session's agent from the feed alone. */
const agentKeys = new Map<string, string>();
function agentKey(agent: string): string {
  let key = agentKeys.get(agent);
  if (key === undefined) agentKeys.set(agent, (key = `,"agent":${JSON.stringify(agent)}`));
  return key;
}
const DELETED_KEY = Buffer.from(',"session_deleted":');

/** The entries (already filtered) as one buffer of SSE frames, as one HTTP chunk when `chunked`. */
export function sseFrames(entries: FeedEntry[], chunked: boolean): Buffer {
  const heads = entries.map((e) => Buffer.from(`id: ${e.cursor}\ndata: {"cursor":${e.cursor}${e.deleted ? '' : agentKey(e.agent)}`));
  let body = 0;
  entries.forEach((e, i) => (body += heads[i]!.length + (e.deleted ? DELETED_KEY : EVENT_KEY).length + e.json.length + 3));
  const header = chunked ? `${body.toString(16)}\r\n` : '';
  const frame = Buffer.allocUnsafe(header.length + body + (chunked ? 2 : 0));
  let at = frame.write(header, 0, 'latin1');
  entries.forEach((e, i) => {
    at += heads[i]!.copy(frame, at);
    at += (e.deleted ? DELETED_KEY : EVENT_KEY).copy(frame, at);
    at += e.json.copy(frame, at);
    at += frame.write('}\n\n', at, 'latin1');
  });
  if (chunked) frame.write('\r\n', at, 'latin1');
  return frame;
}

/** Scanned at most per poll, so a filter that matches little cannot hold the event loop long. */
const POLL_SCAN = 50_000;

/**
 * A poll page: up to `limit` matching entries after `after`, and the cursor to continue from (past
 * the entries the filters left out, so the next poll does not read them again).
 */
export function feedPage(feed: FeedLog, after: number, limit: number, filter: FeedFilter, includeRaw: boolean): string {
  feed.assertAvailable(after);
  const parts: string[] = [];
  let cursor = after;
  let scanned = 0;
  while (parts.length < limit && cursor < feed.lastCursor && scanned < POLL_SCAN) {
    const { entries, to } = feed.read(cursor, FEED_PAGE, includeRaw);
    scanned += FEED_PAGE;
    let stoppedAt: number | undefined;
    for (const e of entries) {
      if (!matches(e, filter)) continue;
      parts.push(`{"cursor":${e.cursor}${e.deleted ? ',"session_deleted"' : `${agentKey(e.agent)},"event"`}:${e.json.toString('utf8')}}`);
      if (parts.length === limit) {
        stoppedAt = e.cursor;
        break;
      }
    }
    cursor = stoppedAt ?? to;
  }
  return `{"entries":[${parts.join(',')}],"cursor":${cursor},"hasMore":${cursor < feed.lastCursor},"lastCursor":${feed.lastCursor}}`;
}
