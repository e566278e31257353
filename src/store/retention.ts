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

/**
 * Drops what the retention rules say must go, with `drop` (the store's own delete of one session:
 * its row at once, its events in slices); returns the ids of the sessions dropped. The space comes
 * back with giveSpaceBack once their events are gone.
 */
export function pruneSessions(db: Database, options: { endedBefore: string; maxBytes: number }, drop: (id: string) => void): string[] {
  const expired = db.prepare('SELECT id FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ? ORDER BY ended_at').pluck().all(options.endedBefore) as string[];
  const dropped: string[] = [];
  for (const id of expired) {
    drop(id);
    dropped.push(id);
  }
  if (storeBytes(db) > options.maxBytes) {
    const oldest = db.prepare('SELECT id, event_bytes FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at').all() as { id: string; event_bytes: number }[];
    // Measuring the file after every delete would be slow with thousands of sessions: estimate from
    // the rows' bytes, then check the real size once more at the end.
    let over = storeBytes(db) - options.maxBytes;
    for (const { id, event_bytes } of oldest) {
      if (over <= 0) break;
      drop(id);
      dropped.push(id);
      over -= event_bytes;
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
