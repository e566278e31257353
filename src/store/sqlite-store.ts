// The durable store: one SQLite file (`<data-dir>/agentwire.db`) through better-sqlite3, the only
// code with SQL in it besides migrations.ts, retention.ts, session-drop.ts and write-batcher.ts.
// Here: opening the file (the data-dir lock, the pragmas, the schema), reads, deletes, retention.
// Writes go through write-batcher.ts: staged, committed once per tick, retried while failing.
import { openDatabase, type Database as Db } from './sqlite-binding.js';
import type { CommitListener, EventStore, SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';
import { migrate } from './migrations.js';
import { giveSpaceBack, pruneSessions, storeBytes } from './retention.js';
import { SessionDrops } from './session-drop.js';
import { WriteBatcher } from './write-batcher.js';

export interface SqliteStoreOptions {
  /** `normal`: WAL with synchronous=NORMAL (a power loss may lose the last commits, never corrupts);
   *  `always`: synchronous=FULL, every commit is fsynced (see docs/persistence.md for the cost). */
  fsync?: 'normal' | 'always';
  /** How often a failing store retries its staged writes. */
  retryMs?: number;
}

export class StoreInUseError extends Error {}

export class SqliteStore implements EventStore {
  readonly durable = true;
  private readonly db: Db;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly listeners = new Map<string, CommitListener>();
  private readonly writes: WriteBatcher;
  private readonly drops: SessionDrops;
  /** Retention dropped sessions: their space is given back once their events are deleted. */
  private spaceToGiveBack = false;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.db = open(path, options.fsync ?? 'normal');
    this.statements = prepare(this.db);
    this.writes = new WriteBatcher(this.db, options.retryMs ?? 1_000, (sessionId, sequence) => this.listeners.get(sessionId)?.(sequence));
    this.drops = new SessionDrops(this.db, () => {
      if (!this.spaceToGiveBack) return;
      this.spaceToGiveBack = false;
      giveSpaceBack(this.db);
    });
  }

  get failure(): StoreFailure {
    return this.writes.failure;
  }

  get pendingEvents(): number {
    return this.writes.pendingEvents;
  }

  attach(sessionId: string, onCommitted: CommitListener): void {
    this.listeners.set(sessionId, onCommitted);
  }

  detach(sessionId: string): void {
    this.listeners.delete(sessionId);
  }

  onHealth(listener: (failure: StoreFailure) => void): void {
    this.writes.onHealth(listener);
  }

  loadSessions(): SessionRecord[] {
    return (this.statements.loadSessions.all() as SessionRow[]).map(fromRow);
  }

  createSession(record: SessionRecord): void {
    this.drops.finish(record.id); // an id used again: the old session's events go first, now
    this.writes.createSession(record);
  }

  updateSession(id: string, progress: () => SessionProgress): void {
    this.writes.updateSession(id, progress);
  }

  appendEvent(sessionId: string, event: StoredEvent): void {
    this.writes.appendEvent(sessionId, event);
  }

  flush(): void {
    this.writes.flush();
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
    this.writes.stop();
    this.listeners.clear();
    if (this.db.open) this.db.close();
  }

  /** One session: its row now, its events in slices; its commits are no longer reported. */
  private dropRows(id: string): void {
    this.listeners.delete(id);
    this.drops.drop(id);
  }
}

/** Opens the file, takes the lock and brings the schema up to date. */
function open(path: string, fsync: 'normal' | 'always'): Db {
  const db = openDatabase(path);
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

function prepare(db: Db) {
  return {
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
