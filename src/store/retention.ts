// Keeping the store bounded: ended sessions are dropped after the retention period, and while the
// file is over --max-store-mb the oldest ended sessions go first (live sessions are never dropped
// for space: the operator is told by the size metric instead). Freed pages are given back to the
// file system with incremental vacuum once the dropped sessions' events are deleted, so the bound
// is on disk, not only inside the file.
import type { Database } from './sqlite-binding.js';

/** Bytes the file's live pages take (free pages not counted: they are reused or given back). */
export function storeBytes(db: Database): number {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * pageSize;
}

/** A session retention drops: `deleted` ones were DELETEd and kept for the feed (not listed). */
export interface PrunedSession {
  id: string;
  agent: string;
  deleted: boolean;
  last_sequence: number;
}

const COLUMNS = 'id, agent, deleted_at IS NOT NULL AS deleted, last_sequence';

/**
 * Drops what the retention rules say must go, with `drop` (the store's own delete of one session:
 * its row at once, its events in slices); returns the sessions dropped. Deleted sessions kept for
 * the feed are ended sessions like any other here, and go at the latest when `deletedBefore`
 * passes. The space comes back with giveSpaceBack once their events are gone.
 */
export function pruneSessions(db: Database, options: { endedBefore: string; deletedBefore: string; maxBytes: number }, drop: (s: PrunedSession) => void): PrunedSession[] {
  const expired = db
    .prepare(`SELECT ${COLUMNS} FROM sessions WHERE (ended_at IS NOT NULL AND ended_at < ?) OR (deleted_at IS NOT NULL AND deleted_at < ?) ORDER BY ended_at`)
    .all(options.endedBefore, options.deletedBefore) as PrunedSession[];
  const dropped: PrunedSession[] = [];
  for (const s of expired) {
    drop(s);
    dropped.push(s);
  }
  // Deletion entries are small: they stay as long as ended sessions do.
  db.prepare('DELETE FROM feed_marks WHERE at < ?').run(options.endedBefore);
  if (storeBytes(db) > options.maxBytes) {
    const oldest = db.prepare(`SELECT ${COLUMNS}, event_bytes FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at`).all() as (PrunedSession & { event_bytes: number })[];
    // Measuring the file after every delete would be slow with thousands of sessions: estimate from
    // the rows' bytes, then check the real size once more at the end.
    let over = storeBytes(db) - options.maxBytes;
    for (const s of oldest) {
      if (over <= 0) break;
      drop(s);
      dropped.push(s);
      over -= s.event_bytes;
    }
  }
  return dropped;
}

/** Freed pages go back to the file system: first out of the WAL into the file, then off its end. */
export function giveSpaceBack(db: Database): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('incremental_vacuum');
  db.pragma('wal_checkpoint(TRUNCATE)');
}
