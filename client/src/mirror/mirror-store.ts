// Every SQL statement the mirror runs after its migrations: where a daemon's feed was read up to,
// and a batch of feed entries written with that cursor in one transaction. Rows travel as one
// JSON array parameter each and are taken apart by PostgreSQL (jsonb_array_elements): one
// multi-row INSERT per batch, no per-row placeholders to build or parameter limit to split at,
// and the event's JSON is sent once, as the jsonb column itself.
import type pg from 'pg';

/** One feed entry, ready to write: an event (its JSON is the `event` column), or a deletion. */
export interface EventRow {
  cursor: number;
  sessionId: string;
  /** The event's sequence; a deletion's last_sequence. */
  sequence: number;
  /** The event's type; `session.deleted` for a deletion. */
  type: string;
  time: string;
  /** The event's JSON, or the deletion's. */
  json: string;
  /** The session's agent (events), as the feed names it. */
  agent?: string;
}

/** What a batch does to a session's row: the newest event time, and the status events imply. */
interface SessionTouch {
  session_id: string;
  time: string;
  status: string | null;
}

// Only what events say for certain: a turn runs, waits on a person, or is over, or the session ended.
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
  ), moved AS (
    INSERT INTO agentwire_mirror_cursors (daemon_id, cursor) VALUES ($1, $4)
    ON CONFLICT (daemon_id) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()
    RETURNING 1
  )
  SELECT (SELECT count(*)::int FROM inserted) AS inserted, (SELECT count(*) FROM moved) AS moved`;

// A session's first event (sequence 1) makes its row; an id deleted before and used again first
// moves the old session's rows to '<id>/<deleted_cursor>', so the new one starts at sequence 1.
const MOVE_DELETED = `
  WITH old AS (
    SELECT session_id, deleted_cursor FROM agentwire_sessions
    WHERE daemon_id = $1 AND session_id = ANY($2::text[]) AND deleted_cursor IS NOT NULL
  ), events AS (
    UPDATE agentwire_events e SET session_id = e.session_id || '/' || old.deleted_cursor
    FROM old WHERE e.daemon_id = $1 AND e.session_id = old.session_id
    RETURNING 1
  )
  UPDATE agentwire_sessions s SET session_id = s.session_id || '/' || old.deleted_cursor
  FROM old WHERE s.daemon_id = $1 AND s.session_id = old.session_id`;

const CREATE_SESSIONS = `
  INSERT INTO agentwire_sessions (daemon_id, session_id, agent, status, created_at, updated_at, info)
  SELECT $1, i->>'sessionId', i->>'agent', 'idle', (i->>'createdAt')::timestamptz, (i->>'createdAt')::timestamptz, i
  FROM jsonb_array_elements($2::jsonb) AS i
  ON CONFLICT (daemon_id, session_id) DO NOTHING`;

const MARK_DELETED = `
  UPDATE agentwire_sessions AS s SET deleted_at = d.time, deleted_cursor = d.cursor
  FROM jsonb_to_recordset($2::jsonb) AS d(session_id text, time timestamptz, cursor bigint)
  WHERE s.daemon_id = $1 AND s.session_id = d.session_id`;

export class MirrorStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Where the daemon's feed was read up to (0: never). */
  async cursor(daemonId: string): Promise<number> {
    const { rows } = await this.pool.query<{ cursor: string }>('SELECT cursor FROM agentwire_mirror_cursors WHERE daemon_id = $1', [daemonId]);
    return Number(rows[0]?.cursor ?? 0);
  }

  /** The daemon's sessions stored and not deleted (the follower's count starts from them). */
  async liveSessions(daemonId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ session_id: string }>(
      "SELECT session_id FROM agentwire_sessions WHERE daemon_id = $1 AND deleted_at IS NULL AND position('/' in session_id) = 0",
      [daemonId],
    );
    return rows.map((r) => r.session_id);
  }

  /**
   * Writes a batch of feed entries, in order, and the cursor of its last one, in one transaction:
   * a mirror killed at any point has stored a batch whole or not at all, and resumes after it.
   * Returns how many event rows were new.
   */
  async writeBatch(daemonId: string, rows: EventRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const segments = split(rows);
    // The common batch (events of running sessions) is one statement: atomic by itself.
    if (segments.length === 1 && !rows.some((r) => r.sequence === 1 || r.type === 'session.deleted')) {
      return this.writeEvents(this.pool, daemonId, rows, rows.at(-1)!.cursor);
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      let inserted = 0;
      for (const segment of segments) inserted += await this.writeSegment(client, daemonId, segment);
      await client.query('COMMIT');
      return inserted;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private async writeSegment(db: pg.PoolClient, daemonId: string, rows: EventRow[]): Promise<number> {
    const firsts = rows.filter((r) => r.sequence === 1 && r.type !== 'session.deleted');
    if (firsts.length > 0) {
      await db.query(MOVE_DELETED, [daemonId, firsts.map((r) => r.sessionId)]);
      const infos = firsts.map((r) => ({ sessionId: r.sessionId, agent: r.agent ?? '', createdAt: r.time }));
      await db.query(CREATE_SESSIONS, [daemonId, JSON.stringify(infos)]);
    }
    const events = rows.filter((r) => r.type !== 'session.deleted');
    const inserted = await this.writeEvents(db, daemonId, events, rows.at(-1)!.cursor);
    const deletions = rows.filter((r) => r.type === 'session.deleted').map((r) => ({ session_id: r.sessionId, time: r.time, cursor: r.cursor }));
    if (deletions.length > 0) await db.query(MARK_DELETED, [daemonId, JSON.stringify(deletions)]);
    return inserted;
  }

  /** Inserts the events (rows already stored are skipped), moves their sessions' rows on and stores the cursor: one statement. */
  private async writeEvents(db: pg.Pool | pg.PoolClient, daemonId: string, rows: EventRow[], cursor: number): Promise<number> {
    const touches = new Map<string, SessionTouch>();
    for (const row of rows) {
      const touch = touches.get(row.sessionId) ?? { session_id: row.sessionId, time: row.time, status: null };
      if (row.time > touch.time) touch.time = row.time; // RFC 3339 in UTC: text order is time order
      touch.status = STATUS_OF[row.type] ?? touch.status;
      touches.set(row.sessionId, touch);
    }
    const events = `[${rows.map((r) => r.json).join(',')}]`;
    const { rows: result } = await db.query<{ inserted: number }>({
      name: 'agentwire_mirror_insert_events',
      text: INSERT_EVENTS,
      values: [daemonId, events, JSON.stringify([...touches.values()]), cursor],
    });
    return result[0]?.inserted ?? 0;
  }
}

/**
 * A batch cut where an id deleted earlier in it starts again: the new session's rows must be made
 * after the old session's deletion is stored, so that its old rows move aside first.
 */
function split(rows: EventRow[]): EventRow[][] {
  const segments: EventRow[][] = [[]];
  let deleted = new Set<string>();
  for (const row of rows) {
    if (row.sequence === 1 && row.type !== 'session.deleted' && deleted.has(row.sessionId)) {
      segments.push([]);
      deleted = new Set();
    }
    if (row.type === 'session.deleted') deleted.add(row.sessionId);
    segments.at(-1)!.push(row);
  }
  return segments;
}
