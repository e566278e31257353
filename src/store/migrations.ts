// The SQLite schema, as forward migrations. `PRAGMA user_version` is the schema version of a
// database file; opening one runs every migration after it, in one transaction each, so a data
// dir written by an older daemon is upgraded in place and never read with the wrong shape. A file
// written by a NEWER daemon is refused (we cannot know what its columns mean).
import type { Database } from './sqlite-binding.js';

export interface Migration {
  version: number;
  /** What it changes, for the log. */
  summary: string;
  up(db: Database): void;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    summary: 'sessions and events',
    up(db) {
      db.exec(`
        CREATE TABLE sessions (
          id TEXT PRIMARY KEY,
          agent TEXT NOT NULL,
          request TEXT NOT NULL,            -- the resolved create request, JSON
          native_session_id TEXT,
          status TEXT NOT NULL,             -- idle | running | waiting | ended, as last written
          snapshot TEXT NOT NULL,           -- open turn and pending HITL, JSON (SessionSnapshot)
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          ended_at TEXT,
          last_sequence INTEGER NOT NULL DEFAULT 0
        );
        -- Keyed by (session_id, sequence) and clustered on it (WITHOUT ROWID): a session's events
        -- are contiguous on disk, so a keyset page (sequence > ?) is one range scan.
        CREATE TABLE events (
          session_id TEXT NOT NULL,
          sequence INTEGER NOT NULL,
          json TEXT NOT NULL,               -- the envelope as served, with "raw":null
          raw TEXT,                         -- the native payload's JSON, served with include_raw
          PRIMARY KEY (session_id, sequence)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 2,
    summary: 'event bytes per session and an index of ended sessions, for retention',
    up(db) {
      db.exec(`
        ALTER TABLE sessions ADD COLUMN event_bytes INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET event_bytes = (
          SELECT COALESCE(SUM(length(CAST(json AS BLOB)) + COALESCE(length(CAST(raw AS BLOB)), 0)), 0)
          FROM events WHERE events.session_id = sessions.id
        );
        CREATE INDEX sessions_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;
      `);
    },
  },
  {
    version: 3,
    summary: 'sessions whose events are being deleted in slices (session-drop.ts)',
    up(db) {
      db.exec('CREATE TABLE dropping (session_id TEXT PRIMARY KEY) WITHOUT ROWID;');
    },
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** Brings `db` to `target` (default: the latest); returns the version it found. */
export function migrate(db: Database, target = SCHEMA_VERSION): number {
  const found = db.pragma('user_version', { simple: true }) as number;
  if (found > SCHEMA_VERSION) {
    throw new Error(`the store's schema version is ${found}, newer than this daemon's ${SCHEMA_VERSION}: it was written by a newer agentwire; upgrade agentwire or use another --data-dir`);
  }
  for (const m of MIGRATIONS) {
    if (m.version <= found || m.version > target) continue;
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
  return found;
}
