// Reading the daemon-wide feed from the SQLite file: a keyset page (`cursor > ?`, never OFFSET)
// of events in cursor order merged with the deletion entries of the same range. Events carry
// their cursor in the `events` table (indexed); deletions are rows of `feed_marks`. A kept deleted
// session that was re-created has its rows under `<id>/<n>`: the entry's session id is the part
// before the '/', which no session id contains.
import type { FeedRecord } from './event-store.js';
import type { FeedStatements } from './sqlite-store.js';

interface EventRow {
  cursor: number;
  key: string;
  agent: string;
  json: string;
  raw: string | null;
}

/** Committed entries with cursor > after, oldest first, at most `limit`. */
export function readFeedPage(statements: FeedStatements, after: number, limit: number): FeedRecord[] {
  const events = statements.feedEvents.all(after, limit) as EventRow[];
  const marks = statements.feedMarks.all(after, limit) as EventRow[];
  const out: FeedRecord[] = [];
  let i = 0;
  let m = 0;
  // Each list is the first `limit` of its own kind, so the first `limit` of the merge are exact.
  while (out.length < limit && (i < events.length || m < marks.length)) {
    const mark = marks[m];
    if (mark && (i >= events.length || mark.cursor < events[i]!.cursor)) {
      out.push({ cursor: mark.cursor, sessionId: idOf(mark.key), agent: mark.agent, json: mark.json, raw: null, deleted: true });
      m++;
    } else {
      const e = events[i++]!;
      out.push({ cursor: e.cursor, sessionId: idOf(e.key), agent: e.agent, json: e.json, raw: e.raw, deleted: false });
    }
  }
  return out;
}

function idOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}
