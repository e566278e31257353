// The durable store: one SQLite file (`<data-dir>/agentwire.db`) through better-sqlite3, the only
// code with SQL in it besides migrations.ts and retention.ts.
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
import { addonOption, sqliteDatabase, type Database as Db, type Statement } from './sqlite-binding.js';
import type { CommitListener, EventStore, SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';
import { migrate } from './migrations.js';
import { giveSpaceBack, pruneSessions, storeBytes } from './retention.js';
import { SessionDrops } from './session-drop.js';

export interface SqliteStoreOptions {
  /** `normal`: WAL with synchronous=NORMAL (a power loss may lose the last commits, never corrupts);
   *  `always`: synchronous=FULL, every commit is fsynced (see docs/persistence.md for the cost). */
  fsync?: 'normal' | 'always';
  /** How often a failing store retries its staged writes. */
  retryMs?: number;
}

export class StoreInUseError extends Error {}

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

export class SqliteStore implements EventStore {
  readonly durable = true;
  failure: StoreFailure = null;
  private readonly db: Db;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly listeners = new Map<string, CommitListener>();
  private readonly healthListeners: ((failure: StoreFailure) => void)[] = [];
  private staged: Staged = emptyStaged();
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly retryMs: number;
  private readonly commit: () => void;
  private readonly drops: SessionDrops;
  /** Retention dropped sessions: their space is given back once their events are deleted. */
  private spaceToGiveBack = false;
  /** Multi-row INSERTs, largest first, each with its reused argument array. */
  private readonly multi: [number, Statement, unknown[]][];

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000;
    this.db = open(path, options.fsync ?? 'normal');
    this.statements = prepare(this.db);
    this.multi = MULTI_ROWS.map((size) => [size, insertEvents(this.db, size), new Array<unknown>(size * 4)]);
    this.commit = this.db.transaction(() => this.write(this.staged));
    this.drops = new SessionDrops(this.db, () => {
      if (!this.spaceToGiveBack) return;
      this.spaceToGiveBack = false;
      giveSpaceBack(this.db);
    });
  }

  get pendingEvents(): number {
    return this.staged.sequences.length;
  }

  attach(sessionId: string, onCommitted: CommitListener): void {
    this.listeners.set(sessionId, onCommitted);
  }

  detach(sessionId: string): void {
    this.listeners.delete(sessionId);
  }

  onHealth(listener: (failure: StoreFailure) => void): void {
    this.healthListeners.push(listener);
  }

  loadSessions(): SessionRecord[] {
    return (this.statements.loadSessions.all() as SessionRow[]).map(fromRow);
  }

  createSession(record: SessionRecord): void {
    this.drops.finish(record.id); // an id used again: the old session's events go first, now
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
    for (const [sessionId, sequence] of staged.last) this.listeners.get(sessionId)?.(sequence);
  }

  readEvents(sessionId: string, after: number, limit: number): StoredEvent[] {
    if (this.drops.has(sessionId)) return [];
    return this.statements.readEvents.all(sessionId, after, limit) as StoredEvent[];
  }

  deleteSession(id: string): void {
    this.flush(); // its staged rows go first, so the delete removes them too
    this.dropRows(id);
  }

  prune(options: { endedBefore: string; maxBytes: number }): string[] {
    this.flush();
    const dropped = pruneSessions(this.db, options, (id) => this.dropRows(id));
    if (dropped.length > 0) this.spaceToGiveBack = true;
    return dropped;
  }

  /** Resolves once every deleted session's events are gone from the file (session-drop.ts). */
  drained(): Promise<void> {
    return this.drops.drained();
  }

  sizeBytes(): number {
    return storeBytes(this.db);
  }

  /** Caps the file at `pages` pages (SQLite's max_page_count): how the tests fill the "disk". */
  limitPages(pages: number): void {
    this.db.pragma(`max_page_count = ${Math.floor(pages)}`);
  }

  /** Pages the file has now (see limitPages). */
  pageCount(): number {
    return this.db.pragma('page_count', { simple: true }) as number;
  }

  close(): void {
    this.flush();
    this.drops.close(); // a drop not finished resumes on the next start
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.listeners.clear();
    if (this.db.open) this.db.close();
  }

  /** One session: its row now, its events in slices; its commits are no longer reported. */
  private dropRows(id: string): void {
    this.listeners.delete(id);
    this.drops.drop(id);
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

/** Opens the file, takes the lock and brings the schema up to date. */
function open(path: string, fsync: 'normal' | 'always'): Db {
  const Database = sqliteDatabase();
  const db = new Database(path, addonOption());
  try {
    // EXCLUSIVE locking before the first WAL access: the lock is an OS file lock held for the
    // connection's life (so a crashed daemon never leaves a stale one), a second daemon on the same
    // file gets SQLITE_BUSY at once, and WAL needs no shared-memory file.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('busy_timeout = 0');
    // Only takes effect on a new file: deleted sessions' pages can then be given back to the OS.
    db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${fsync === 'always' ? 'FULL' : 'NORMAL'}`);
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new StoreInUseError(`${path} is in use by another agentwire daemon (its lock is held); stop it or choose another --data-dir`);
    }
    throw err;
  }
}

const MULTI_ROWS = [64, 16];

function insertEvents(db: Db, rows: number): Statement {
  return db.prepare(`INSERT INTO events (session_id, sequence, json, raw) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}`);
}

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
    readEvents: db.prepare('SELECT sequence, json, raw FROM events WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?'),
    loadSessions: db.prepare('SELECT * FROM sessions ORDER BY created_at, rowid'),
  };
}

interface SessionRow {
  id: string;
  agent: string;
  request: string;
  native_session_id: string | null;
  status: SessionRecord['status'];
  snapshot: string;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
  last_sequence: number;
}

function fromRow(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    agent: r.agent,
    request: JSON.parse(r.request) as Record<string, unknown>,
    nativeSessionId: r.native_session_id,
    status: r.status,
    snapshot: JSON.parse(r.snapshot) as SessionRecord['snapshot'],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    endedAt: r.ended_at,
    lastSequence: r.last_sequence,
  };
}
