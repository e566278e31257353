// The SQL one commit of the write batcher (write-batcher.ts) runs, inside its transaction: the
// creates, a tick's events in multi-row INSERTs, the feed's deletion entries and its high-water
// mark, and each session's row once. Only prepared strings and values already serialised reach it,
// so a statement that fails is the store's failure (disk, I/O, lock), never a record's.
import type { Database as Db, Statement } from './sqlite-binding.js';
import { lastCursor, type ProgressRow, type Staged } from './staged-writes.js';

const MULTI_ROWS = [64, 16];

export class BatchSql {
  private readonly statements: ReturnType<typeof prepare>;
  /** Multi-row INSERTs, largest first, each with its reused argument array. */
  private readonly multi: [number, Statement, unknown[]][];

  constructor(private readonly db: Db) {
    this.statements = prepare(db);
    this.multi = MULTI_ROWS.map((size) => [size, insertEvents(db, size), new Array<unknown>(size * 5)]);
  }

  /** The feed's high-water mark: the last cursor committed, where a restart goes on from. */
  feedHead(): number {
    return this.db.prepare('SELECT last FROM feed_head').pluck().get() as number;
  }

  write(s: Staged, rows: ProgressRow[]): void {
    const st = this.statements;
    for (const { record: r, request, snapshot } of s.creates) {
      st.insertSession.run(r.id, r.agent, request, r.nativeSessionId, r.status, snapshot, r.createdAt, r.updatedAt, r.endedAt, r.lastSequence);
    }
    this.writeEvents(s);
    for (const m of s.marks) {
      st.insertMark.run(m.cursor, m.sessionId, m.agent, m.json, m.at);
      if (m.keep) st.markDeleted.run(m.at, m.at, m.sessionId);
    }
    const last = lastCursor(s);
    if (last > 0) st.feedHead.run(last);
    // A session's row is written once per tick: its progress and the bytes its new events take.
    const written = new Set<string>();
    for (const { id, progress: p, snapshot } of rows) {
      st.updateSession.run(p.nativeSessionId, p.status, snapshot, p.updatedAt, p.endedAt, p.lastSequence, s.bytes.get(id) ?? 0, id);
      written.add(id);
    }
    for (const [id, bytes] of s.bytes) if (!written.has(id)) st.addBytes.run(bytes, id);
  }

  /**
   * Rows in statements of 64 and 16 where a tick has that many: one statement run per row costs
   * ~25 % more per event (bind, step, reset each time; docs/performance.md).
   */
  private writeEvents(s: Staged): void {
    const n = s.sequences.length;
    let i = 0;
    for (const [size, statement, args] of this.multi) {
      for (; i + size <= n; i += size) {
        for (let k = 0, a = 0; k < size; k++) {
          args[a++] = s.sessions[i + k];
          args[a++] = s.sequences[i + k];
          args[a++] = s.cursors[i + k];
          args[a++] = s.jsons[i + k];
          args[a++] = s.raws[i + k];
        }
        statement.run(args);
      }
    }
    for (; i < n; i++) this.statements.insertEvent.run(s.sessions[i], s.sequences[i], s.cursors[i], s.jsons[i], s.raws[i]);
  }
}

function insertEvents(db: Db, rows: number): Statement {
  return db.prepare(`INSERT INTO events (session_id, sequence, cursor, json, raw) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ')}`);
}

/** The statements a commit runs besides the multi-row INSERTs. */
function prepare(db: Db) {
  return {
    insertSession: db.prepare(
      'INSERT INTO sessions (id, agent, request, native_session_id, status, snapshot, created_at, updated_at, ended_at, last_sequence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    updateSession: db.prepare(
      'UPDATE sessions SET native_session_id = ?, status = ?, snapshot = ?, updated_at = ?, ended_at = ?, last_sequence = ?, event_bytes = event_bytes + ? WHERE id = ?',
    ),
    addBytes: db.prepare('UPDATE sessions SET event_bytes = event_bytes + ? WHERE id = ?'),
    insertEvent: db.prepare('INSERT INTO events (session_id, sequence, cursor, json, raw) VALUES (?, ?, ?, ?, ?)'),
    insertMark: db.prepare('INSERT INTO feed_marks (cursor, session_id, agent, json, at) VALUES (?, ?, ?, ?, ?)'),
    markDeleted: db.prepare('UPDATE sessions SET deleted_at = ?, ended_at = COALESCE(ended_at, ?) WHERE id = ?'),
    feedHead: db.prepare('UPDATE feed_head SET last = ? WHERE one = 1'),
  };
}
