// The durable store: one SQLite file (`<data-dir>/agentwire.db`) through better-sqlite3, the only
// code with SQL in it besides migrations.ts, retention.ts, session-drop.ts and batch-sql.ts.
// Here: opening the file (the data-dir lock, the pragmas, the schema), reads, deletes, retention.
// Writes go through write-batcher.ts: staged, committed once per tick, retried while failing.
import { openDatabase, type Database as Db } from './sqlite-binding.js';
import { deletionJson, type CommitListener, type Deletion, type EventStore, type FeedRecord, type SessionProgress, type SessionRecord, type StoredEvent, type StoreFailure } from './event-store.js';
import { readFeedPage } from './feed-read.js';
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
  /** Each listed session's agent, for its feed entries. */
  private readonly agents = new Map<string, string>();
  /** Retention dropped sessions: their space is given back once their events are deleted. */
  private spaceToGiveBack = false;

  constructor(
    readonly path: string,
    options: SqliteStoreOptions = {},
  ) {
    this.db = open(path, options.fsync ?? 'normal');
    this.statements = prepare(this.db);
    this.writes = new WriteBatcher(
      this.db,
      options.retryMs ?? 1_000,
      (sessionId, sequence) => this.listeners.get(sessionId)?.(sequence),
      (sessionId) => this.agents.get(sessionId) ?? '',
    );
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

  get feedHead(): number {
    return this.writes.committedCursor;
  }

  onFeed(listener: (records: FeedRecord[]) => void): void {
    this.writes.onFeed = listener;
  }

  readFeed(after: number, limit: number): FeedRecord[] {
    return readFeedPage(this.statements, after, limit);
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

  onRecordDropped(listener: (sessionId: string, part: string, message: string) => void): void {
    this.writes.onDropped = listener;
  }

  loadSessions(): SessionRecord[] {
    const records = (this.statements.loadSessions.all() as SessionRow[]).map(fromRow);
    for (const r of records) this.agents.set(r.id, r.agent);
    return records;
  }

  createSession(record: SessionRecord): void {
    this.drops.finish(record.id); // an id used again: the old session's events go first, now
    // …or, kept for the feed after a DELETE, they move to a key no session id can have ('/' is
    // not allowed in one), so the new session starts at sequence 1 and the feed still serves both.
    this.statements.renameDeleted(`${record.id}/${this.writes.committedCursor}`, record.id);
    this.agents.set(record.id, record.agent);
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

  deleteSession(id: string, deletion: Deletion): void {
    const agent = this.agents.get(id) ?? '';
    // After its last staged event, and committed with it (and with the row marked deleted).
    this.writes.stageDeletion(id, agent, deletionJson(id, agent, deletion), deletion.time, deletion.keep);
    this.flush(); // its staged rows go first, so a drop removes them too
    this.agents.delete(id);
    if (deletion.keep) this.listeners.delete(id);
    else this.dropRows(id);
  }

  prune(options: { endedBefore: string; deletedBefore: string; maxBytes: number }): string[] {
    this.flush();
    const time = new Date().toISOString();
    const dropped = pruneSessions(this.db, options, (s) => {
      // A listed session leaving by retention is announced in the feed, as a deletion is.
      if (!s.deleted) this.writes.stageDeletion(s.id, s.agent, deletionJson(s.id, s.agent, { time, lastSequence: s.last_sequence, reason: 'retention' }), time, false);
      this.agents.delete(s.id);
      this.dropRows(s.id);
    });
    if (dropped.length > 0) this.spaceToGiveBack = true;
    return dropped.filter((s) => !s.deleted).map((s) => s.id);
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
  const renameSession = db.prepare('UPDATE sessions SET id = ? WHERE id = ? AND deleted_at IS NOT NULL');
  const renameEvents = db.prepare('UPDATE events SET session_id = ? WHERE session_id = ?');
  return {
    readEvents: db.prepare('SELECT sequence, json, raw FROM events WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?'),
    loadSessions: db.prepare('SELECT * FROM sessions WHERE deleted_at IS NULL ORDER BY created_at, rowid'),
    // CROSS JOIN keeps events the outer loop, walked in cursor order on its index; the join drops
    // events whose session row is gone (being dropped).
    feedEvents: db.prepare(
      'SELECT e.cursor, e.session_id AS key, s.agent, e.json, e.raw FROM events e CROSS JOIN sessions s ON s.id = e.session_id WHERE e.cursor > ? ORDER BY e.cursor LIMIT ?',
    ),
    feedMarks: db.prepare('SELECT cursor, session_id AS key, agent, json FROM feed_marks WHERE cursor > ? ORDER BY cursor LIMIT ?'),
    renameDeleted: db.transaction((to: string, from: string) => {
      if (renameSession.run(to, from).changes > 0) renameEvents.run(to, from);
    }),
  };
}

export type FeedStatements = Pick<ReturnType<typeof prepare>, 'feedEvents' | 'feedMarks'>;

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
