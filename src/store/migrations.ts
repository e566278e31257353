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
  {
    version: 4,
    summary: 'the daemon-wide feed: a cursor per event, deletion entries, the cursor high-water mark, deleted sessions kept',
    up(db) {
      // Events stored before the feed get cursors in the order their sessions were created, each
      // session's in sequence order: a feed reader starting at 0 reads the old history too.
      db.exec(`
        ALTER TABLE events ADD COLUMN cursor INTEGER;
        UPDATE events SET cursor = x.n FROM (
          SELECT e.session_id AS sid, e.sequence AS seq,
                 row_number() OVER (ORDER BY s.created_at, e.session_id, e.sequence) AS n
          FROM events e LEFT JOIN sessions s ON s.id = e.session_id
        ) AS x WHERE events.session_id = x.sid AND events.sequence = x.seq;
        CREATE UNIQUE INDEX events_cursor ON events (cursor);
        -- A DELETEd session kept for the feed until --deleted-retention passes: not listed or restored.
        ALTER TABLE sessions ADD COLUMN deleted_at TEXT;
        -- Deletion entries: small, kept for --retention (a reader that far behind still learns the
        -- session is gone).
        CREATE TABLE feed_marks (
          cursor INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL,
          agent TEXT NOT NULL,
          json TEXT NOT NULL,
          at TEXT NOT NULL
        );
        -- The last cursor ever given, so a cursor is never given twice even once the entries that
        -- carried the highest ones were dropped.
        CREATE TABLE feed_head (one INTEGER PRIMARY KEY CHECK (one = 1), last INTEGER NOT NULL);
        INSERT INTO feed_head (one, last) VALUES (1, (SELECT COALESCE(MAX(cursor), 0) FROM events));
      `);
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
