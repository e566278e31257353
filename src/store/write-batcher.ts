// The SQLite store's write path: writes staged and committed once per tick, multi-row INSERTs,
// and a failing commit's retry. SqliteStore owns one and passes its writes through it.
//
// Writes are staged and committed once per tick: the first staged write schedules a flush with
// process.nextTick, which runs before any subscriber's pump (those are scheduled later in the same
// tick), and a commit is reported to the session's EventLog, which only then shows the events to
// readers. A flood of thousands of events per stdout read is one transaction.
//
// A commit that fails (disk full, read-only data dir, I/O error) is rolled back whole; the staged
// writes are kept and retried every second, the failure is reported (the
// daemon refuses new work with 507 and logs an `error` event), and when space returns everything
// staged is committed in order. SQLite's journal guarantees the file is never half-written.
import type { Database as Db, Statement } from './sqlite-binding.js';
import type { SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';

interface Staged {
  sessions: string[];
  sequences: number[];
  jsons: string[];
  raws: (string | null)[];
  bytes: Map<string, number>;
  progress: Map<string, () => SessionProgress>;
  creates: SessionRecord[];
  /** Last staged sequence per session, reported once committed. */
  last: Map<string, number>;
}

export class WriteBatcher {
  failure: StoreFailure = null;
  private readonly healthListeners: ((failure: StoreFailure) => void)[] = [];
  private staged: Staged = emptyStaged();
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly commit: () => void;
  private readonly statements: ReturnType<typeof prepare>;
  /** Multi-row INSERTs, largest first, each with its reused argument array. */
  private readonly multi: [number, Statement, unknown[]][];

  /** `onCommitted` is told each session's last committed sequence after every commit. */
  constructor(
    db: Db,
    private readonly retryMs: number,
    private readonly onCommitted: (sessionId: string, sequence: number) => void,
  ) {
    this.statements = prepare(db);
    this.multi = MULTI_ROWS.map((size) => [size, insertEvents(db, size), new Array<unknown>(size * 4)]);
    this.commit = db.transaction(() => this.write(this.staged));
  }

  get pendingEvents(): number {
    return this.staged.sequences.length;
  }

  onHealth(listener: (failure: StoreFailure) => void): void {
    this.healthListeners.push(listener);
  }

  createSession(record: SessionRecord): void {
    this.staged.creates.push(record);
    this.schedule();
  }

  updateSession(id: string, progress: () => SessionProgress): void {
    this.staged.progress.set(id, progress);
    this.schedule();
  }

  appendEvent(sessionId: string, event: StoredEvent): void {
    const s = this.staged;
    s.sessions.push(sessionId);
    s.sequences.push(event.sequence);
    s.jsons.push(event.json);
    s.raws.push(event.raw);
    s.last.set(sessionId, event.sequence);
    s.bytes.set(sessionId, (s.bytes.get(sessionId) ?? 0) + (event.bytes ?? event.json.length + (event.raw?.length ?? 0)));
    this.schedule();
  }

  flush(): void {
    this.scheduled = false;
    const staged = this.staged;
    if (staged.sequences.length === 0 && staged.progress.size === 0 && staged.creates.length === 0) return;
    try {
      this.commit();
    } catch (err) {
      return this.failed(err as Error & { code?: string });
    }
    this.staged = emptyStaged();
    if (this.failure) this.recovered();
    for (const [sessionId, sequence] of staged.last) this.onCommitted(sessionId, sequence);
  }

  /** Stops the retry timer: the store is closing. */
  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private schedule(): void {
    // While failing, only the retry timer commits: a full disk would fail every tick's attempt.
    if (this.scheduled || this.failure) return;
    this.scheduled = true;
    process.nextTick(() => this.flush());
  }

  private write(s: Staged): void {
    const st = this.statements;
    for (const r of s.creates) {
      st.insertSession.run(r.id, r.agent, JSON.stringify(r.request), r.nativeSessionId, r.status, JSON.stringify(r.snapshot), r.createdAt, r.updatedAt, r.endedAt, r.lastSequence);
    }
    // Rows in statements of 64 and 16 where a tick has that many: one statement run per row costs
    // ~25 % more per event (bind, step, reset each time; docs/performance.md).
    const n = s.sequences.length;
    let i = 0;
    for (const [size, statement, args] of this.multi) {
      for (; i + size <= n; i += size) {
        for (let k = 0, a = 0; k < size; k++) {
          args[a++] = s.sessions[i + k];
          args[a++] = s.sequences[i + k];
          args[a++] = s.jsons[i + k];
          args[a++] = s.raws[i + k];
        }
        statement.run(args);
      }
    }
    for (; i < n; i++) st.insertEvent.run(s.sessions[i], s.sequences[i], s.jsons[i], s.raws[i]);
    // A session's row is written once per tick: its progress and the bytes its new events take.
    for (const [id, progress] of s.progress) {
      const p = progress();
      st.updateSession.run(p.nativeSessionId, p.status, JSON.stringify(p.snapshot), p.updatedAt, p.endedAt, p.lastSequence, s.bytes.get(id) ?? 0, id);
    }
    for (const [id, bytes] of s.bytes) if (!s.progress.has(id)) st.addBytes.run(bytes, id);
  }

  private failed(err: Error & { code?: string }): void {
    if (!this.failure) {
      this.failure = { code: err.code ?? 'SQLITE_ERROR', message: err.message, since: new Date().toISOString() };
      for (const l of this.healthListeners) l(this.failure);
    }
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.flush();
    }, this.retryMs).unref();
  }

  private recovered(): void {
    this.failure = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const l of this.healthListeners) l(null);
  }
}

function emptyStaged(): Staged {
  return { sessions: [], sequences: [], jsons: [], raws: [], bytes: new Map(), progress: new Map(), creates: [], last: new Map() };
}

const MULTI_ROWS = [64, 16];

function insertEvents(db: Db, rows: number): Statement {
  return db.prepare(`INSERT INTO events (session_id, sequence, json, raw) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}`);
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
    insertEvent: db.prepare('INSERT INTO events (session_id, sequence, json, raw) VALUES (?, ?, ?, ?)'),
  };
}
