// The mirror's PostgreSQL schema, as versioned forward migrations recorded in
// `agentwire_mirror_migrations`. Every start runs the ones not yet applied, each in its own
// transaction, under an advisory lock so that two mirrors starting at once on one database do not
// both create the tables. A database migrated by a NEWER mirror is refused: we cannot know what its
// columns mean. docs/mirror.md describes the tables.
import type pg from 'pg';

export interface Migration {
  version: number;
  /** What it changes, recorded with it. */
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'sessions and events',
    sql: `
      CREATE TABLE agentwire_sessions (
        daemon_id text NOT NULL,
        session_id text NOT NULL,
        agent text NOT NULL,
        status text NOT NULL,              -- idle | running | waiting | ended
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        info jsonb NOT NULL,               -- the daemon's SessionInfo, as last listed
        PRIMARY KEY (daemon_id, session_id)
      );
      CREATE INDEX agentwire_sessions_status ON agentwire_sessions (status, updated_at DESC);
      CREATE INDEX agentwire_sessions_updated ON agentwire_sessions (updated_at DESC);

      -- One row per event; the key is the daemon's own (session, sequence), so writing an event
      -- twice is a conflict that does nothing, and a session's rows are one range of the index.
      CREATE TABLE agentwire_events (
        daemon_id text NOT NULL,
        session_id text NOT NULL,
        sequence bigint NOT NULL,
        event_id text NOT NULL,
        type text NOT NULL,
        time timestamptz NOT NULL,
        event jsonb NOT NULL,              -- the universal event as the daemon served it
        PRIMARY KEY (daemon_id, session_id, sequence)
      );
      -- Small partial indexes for the questions a control plane asks (docs/mirror.md): token usage
      -- lives in turn.ended, failures in failed items and error events. They hold a few rows per
      -- turn, so they cost the write path next to nothing (deltas, the bulk, are not in them).
      CREATE INDEX agentwire_events_turns ON agentwire_events (daemon_id, session_id, sequence)
        WHERE type = 'turn.ended';
      CREATE INDEX agentwire_events_failed_items ON agentwire_events (daemon_id, session_id, sequence)
        WHERE type = 'item.completed' AND (event #>> '{data,item,status}') = 'failed';
      CREATE INDEX agentwire_events_errors ON agentwire_events (time DESC) WHERE type = 'error';
    `,
  },
  {
    version: 2,
    name: 'the feed cursor per daemon, deleted sessions',
    sql: `
      -- Where each daemon's feed is read up to, written in the same transaction as the rows that
      -- got it there: a restart resumes exactly after what is stored.
      CREATE TABLE agentwire_mirror_cursors (
        daemon_id text PRIMARY KEY,
        cursor bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- A session deleted on its daemon keeps its rows; deleted_cursor names it if its id is used
      -- again (its rows then move to '<id>/<deleted_cursor>', docs/mirror.md).
      ALTER TABLE agentwire_sessions ADD COLUMN deleted_at timestamptz, ADD COLUMN deleted_cursor bigint;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** A lock id of our own for pg_advisory_lock: "agentwire mirror migrations". */
const LOCK = 0x61776d6d;

/** Applies every migration not yet recorded; returns the versions it applied (none: up to date). */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    // A session lock held across the transactions below: a second mirror waits here, then finds
    // everything applied.
    await client.query('SELECT pg_advisory_lock($1)', [LOCK]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS agentwire_mirror_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM agentwire_mirror_migrations');
    const done = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...done);
    if (newest > SCHEMA_VERSION) {
      throw new Error(`the database was migrated by a newer agentwire mirror (schema version ${newest}; this one knows up to ${SCHEMA_VERSION})`);
    }
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      // A migration and its record commit together, or neither does.
      try {
        await client.query('BEGIN');
        await client.query(m.sql);
        await client.query('INSERT INTO agentwire_mirror_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`mirror migration ${m.version} (${m.name}) failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(m.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK]).catch(() => {});
    client.release();
  }
  return applied;
}
