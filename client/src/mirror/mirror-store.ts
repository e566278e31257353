// Every SQL statement the mirror runs after its migrations: the highest stored sequence of
// sessions (where following resumes), a batch of events with the session rows it moves on, and
// the session rows from a daemon's list. Rows travel as one JSON array parameter each and are
// taken apart by PostgreSQL (jsonb_array_elements): one multi-row INSERT per batch, no per-row
// placeholders to build or parameter limit to split at, and the event's JSON is sent once, as the
// jsonb column itself.
import type pg from 'pg';
import type { SessionSummary } from './types.js';

/** One event, ready to insert: its JSON and what the batch needs to know about it. */
export interface EventRow {
  sessionId: string;
  sequence: number;
  type: string;
  time: string;
  /** The event's JSON, stored as the `event` column. */
  json: string;
}

/** What a batch does to a session's row: the newest event time, and the status events imply. */
interface SessionTouch {
  session_id: string;
  time: string;
  status: string | null;
}

// Only what events say for certain: a turn runs, waits on a person, or is over, or the session
// ended. The daemon's list (polled) stays the reference and corrects the rest within a poll.
const STATUS_OF: Record<string, string> = {
  'turn.started': 'running',
  'permission.requested': 'waiting',
  'question.requested': 'waiting',
  'permission.resolved': 'running',
  'question.resolved': 'running',
  'turn.ended': 'idle',
  'session.ended': 'ended',
};

const INSERT_EVENTS = `
  WITH inserted AS (
    INSERT INTO agentwire_events (daemon_id, session_id, sequence, event_id, type, time, event)
    SELECT $1, e->>'session_id', (e->>'sequence')::bigint, e->>'event_id', e->>'type', (e->>'time')::timestamptz, e
    FROM jsonb_array_elements($2::jsonb) AS e
    ON CONFLICT DO NOTHING
    RETURNING 1
  ), touched AS (
    UPDATE agentwire_sessions AS s SET
      updated_at = GREATEST(s.updated_at, u.time),
      status = CASE WHEN s.status = 'ended' OR u.status IS NULL THEN s.status ELSE u.status END
    FROM jsonb_to_recordset($3::jsonb) AS u(session_id text, time timestamptz, status text)
    WHERE s.daemon_id = $1 AND s.session_id = u.session_id
    RETURNING 1
  )
  SELECT count(*)::int AS inserted FROM inserted`;

// An ended session stays ended; updated_at never moves back (a list can be older than a batch).
const UPSERT_SESSIONS = `
  INSERT INTO agentwire_sessions (daemon_id, session_id, agent, status, created_at, updated_at, info)
  SELECT $1, i->>'sessionId', i->>'agent', i->>'status', (i->>'createdAt')::timestamptz, (i->>'updatedAt')::timestamptz, i
  FROM jsonb_array_elements($2::jsonb) AS i
  ON CONFLICT (daemon_id, session_id) DO UPDATE SET
    agent = EXCLUDED.agent,
    status = CASE WHEN agentwire_sessions.status = 'ended' THEN 'ended' ELSE EXCLUDED.status END,
    created_at = EXCLUDED.created_at,
    updated_at = GREATEST(agentwire_sessions.updated_at, EXCLUDED.updated_at),
    info = EXCLUDED.info`;

// One index probe per session (max() on the primary key reads its last entry), in one round trip.
const MAX_SEQUENCES = `
  SELECT s.id AS session_id,
         COALESCE((SELECT max(sequence) FROM agentwire_events e WHERE e.daemon_id = $1 AND e.session_id = s.id), 0)::bigint AS max
  FROM unnest($2::text[]) AS s(id)`;

export class MirrorStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The highest stored sequence of each session (0: none); following resumes after it. */
  async maxSequences(daemonId: string, sessionIds: string[]): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    if (sessionIds.length === 0) return result;
    const { rows } = await this.pool.query<{ session_id: string; max: string }>(MAX_SEQUENCES, [daemonId, sessionIds]);
    for (const row of rows) result.set(row.session_id, Number(row.max));
    return result;
  }

  /**
   * Inserts a batch (rows already stored are skipped, so a batch can be written again after a
   * failure or a restart) and moves the sessions' updated_at and status on, in one statement, so
   * in one transaction. Returns how many rows were new.
   */
  async writeEvents(daemonId: string, rows: EventRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const touches = new Map<string, SessionTouch>();
    for (const row of rows) {
      const touch = touches.get(row.sessionId) ?? { session_id: row.sessionId, time: row.time, status: null };
      if (row.time > touch.time) touch.time = row.time; // RFC 3339 in UTC: text order is time order
      touch.status = STATUS_OF[row.type] ?? touch.status;
      touches.set(row.sessionId, touch);
    }
    const events = `[${rows.map((r) => r.json).join(',')}]`;
    const { rows: result } = await this.pool.query<{ inserted: number }>({
      name: 'agentwire_mirror_insert_events',
      text: INSERT_EVENTS,
      values: [daemonId, events, JSON.stringify([...touches.values()])],
    });
    return result[0]?.inserted ?? 0;
  }

  /** Writes the sessions a daemon listed (new ones, and those whose info changed). */
  async upsertSessions(daemonId: string, sessions: SessionSummary[]): Promise<void> {
    if (sessions.length === 0) return;
    await this.pool.query(UPSERT_SESSIONS, [daemonId, JSON.stringify(sessions)]);
  }
}
