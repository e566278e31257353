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
//
// A record is serialised before the transaction (a create's request and snapshot when staged, a
// session's progress just before the commit), one at a time: a value that cannot be serialised
// (nested past the depth bound, a cycle) is written without the part that failed and reported
// (`onDropped`: an `error` event on its session, a metric), so one bad record never fails the
// batch. What the transaction runs is SQL on prepared strings, so a commit that fails is the
// store's failure (disk, I/O, lock), which retrying can cure, never a record's.
//
// The feed's cursor is given here, when an entry is staged: staging order is commit order (a
// failed commit is retried whole), so cursors become visible in order, and the high-water mark
// (`feed_head`) is written in the same transaction, so a restart continues after it.
import type { Database as Db, Statement } from './sqlite-binding.js';
import type { FeedRecord, SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';
import { storableJson } from './storable-json.js';

/** A record part written without what could not be serialised: told to its session after the commit. */
export type DroppedListener = (sessionId: string, part: string, message: string) => void;

/** A create with its JSON columns serialised when staged. */
interface StagedCreate {
  record: SessionRecord;
  request: string;
  snapshot: string;
}

/** A session's row as the commit writes it. */
interface ProgressRow {
  id: string;
  progress: SessionProgress;
  snapshot: string;
}

/** A deletion entry staged for the feed; `keep` also marks the session's row deleted. */
interface StagedMark {
  cursor: number;
  sessionId: string;
  agent: string;
  json: string;
  at: string;
  keep: boolean;
}

interface Staged {
  sessions: string[];
  sequences: number[];
  cursors: number[];
  marks: StagedMark[];
  jsons: string[];
  raws: (string | null)[];
  bytes: Map<string, number>;
  progress: Map<string, () => SessionProgress>;
  creates: StagedCreate[];
  /** Last staged sequence per session, reported once committed. */
  last: Map<string, number>;
}

export class WriteBatcher {
  failure: StoreFailure = null;
  private readonly healthListeners: ((failure: StoreFailure) => void)[] = [];
  private staged: Staged = emptyStaged();
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly commit: (rows: ProgressRow[]) => void;
  private readonly statements: ReturnType<typeof prepare>;
  /** Multi-row INSERTs, largest first, each with its reused argument array. */
  private readonly multi: [number, Statement, unknown[]][];
  /** The last feed cursor given (staged or committed) and the last committed. */
  private given: number;
  committedCursor: number;
  /** Told of record parts written without what could not be serialised (after the commit). */
  onDropped: DroppedListener | undefined;
  private dropped: [string, string, string][] = [];
  /** Told of the committed feed entries, in cursor order, after each commit. */
  onFeed: ((records: FeedRecord[]) => void) | undefined;

  /** `onCommitted` is told each session's last committed sequence after every commit; `agentOf` names a session's agent for the feed. */
  constructor(
    db: Db,
    private readonly retryMs: number,
    private readonly onCommitted: (sessionId: string, sequence: number) => void,
    private readonly agentOf: (sessionId: string) => string,
  ) {
    this.statements = prepare(db);
    this.multi = MULTI_ROWS.map((size) => [size, insertEvents(db, size), new Array<unknown>(size * 5)]);
    this.commit = db.transaction((rows: ProgressRow[]) => this.write(this.staged, rows));
    this.given = this.committedCursor = db.prepare('SELECT last FROM feed_head').pluck().get() as number;
  }

  /** A deletion entry for the feed, after every event staged so far; `keep` marks the row deleted (kept for the feed). */
  stageDeletion(sessionId: string, agent: string, json: string, at: string, keep: boolean): void {
    this.staged.marks.push({ cursor: ++this.given, sessionId, agent, json, at, keep });
    this.schedule();
  }

  get pendingEvents(): number {
    return this.staged.sequences.length;
  }

  onHealth(listener: (failure: StoreFailure) => void): void {
    this.healthListeners.push(listener);
  }

  createSession(record: SessionRecord): void {
    const request = this.json(record.id, 'request', record.request, () => JSON.stringify({ agent: record.agent }));
    const snapshot = this.json(record.id, 'snapshot', record.snapshot, () => '{}');
    this.staged.creates.push({ record, request, snapshot });
    this.schedule();
    this.reportDropped();
  }

  updateSession(id: string, progress: () => SessionProgress): void {
    this.staged.progress.set(id, progress);
    this.schedule();
  }

  appendEvent(sessionId: string, event: StoredEvent): void {
    const s = this.staged;
    s.sessions.push(sessionId);
    s.sequences.push(event.sequence);
    s.cursors.push(++this.given);
    s.jsons.push(event.json);
    s.raws.push(event.raw);
    s.last.set(sessionId, event.sequence);
    s.bytes.set(sessionId, (s.bytes.get(sessionId) ?? 0) + (event.bytes ?? event.json.length + (event.raw?.length ?? 0)));
    this.schedule();
  }

  flush(): void {
    this.scheduled = false;
    const staged = this.staged;
    if (staged.sequences.length === 0 && staged.progress.size === 0 && staged.creates.length === 0 && staged.marks.length === 0) return;
    const rows = this.progressRows(staged);
    this.reportDropped();
    try {
      this.commit(rows);
    } catch (err) {
      return this.failed(err as Error & { code?: string });
    }
    this.staged = emptyStaged();
    if (this.failure) this.recovered();
    for (const [sessionId, sequence] of staged.last) this.onCommitted(sessionId, sequence);
    this.reportFeed(staged);
  }

  /** The committed entries in cursor order: events and deletion marks were given cursors in one sequence. */
  private reportFeed(s: Staged): void {
    const n = s.sequences.length;
    if (n === 0 && s.marks.length === 0) return;
    this.committedCursor = Math.max(this.committedCursor, s.cursors[n - 1] ?? 0, s.marks.at(-1)?.cursor ?? 0);
    if (!this.onFeed) return;
    const records: FeedRecord[] = new Array(n + s.marks.length);
    let agentFor = '';
    let agent = '';
    for (let i = 0, m = 0, r = 0; r < records.length; r++) {
      const mark = s.marks[m];
      if (mark && (i >= n || mark.cursor < s.cursors[i]!)) {
        records[r] = { cursor: mark.cursor, sessionId: mark.sessionId, agent: mark.agent, json: mark.json, raw: null, deleted: true };
        m++;
        continue;
      }
      const sessionId = s.sessions[i]!;
      if (sessionId !== agentFor) agent = this.agentOf((agentFor = sessionId));
      records[r] = { cursor: s.cursors[i]!, sessionId, agent, json: s.jsons[i]!, raw: s.raws[i]!, deleted: false };
      i++;
    }
    this.onFeed(records);
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

  /** Each session's progress, computed and serialised one at a time (see the head of this file). */
  private progressRows(s: Staged): ProgressRow[] {
    const rows: ProgressRow[] = [];
    for (const [id, progress] of s.progress) {
      let p: SessionProgress;
      try {
        p = progress();
      } catch (err) {
        this.dropped.push([id, 'progress', (err as Error).message]);
        continue;
      }
      rows.push({ id, progress: p, snapshot: this.json(id, 'snapshot', p.snapshot, () => '{}') });
    }
    return rows;
  }

  /** The JSON of one record part; what cannot be serialised is left out and reported. */
  private json(sessionId: string, part: string, value: unknown, fallback: () => string): string {
    const stored = storableJson(value, fallback);
    if (stored.dropped) this.dropped.push([sessionId, part, stored.dropped]);
    return stored.json;
  }

  /** Reports leave in a later tick: a session's `error` event must not be staged mid-commit. */
  private reportDropped(): void {
    if (this.dropped.length === 0) return;
    const dropped = this.dropped;
    this.dropped = [];
    process.nextTick(() => {
      for (const [sessionId, part, message] of dropped) this.onDropped?.(sessionId, part, message);
    });
  }

  private write(s: Staged, rows: ProgressRow[]): void {
    const st = this.statements;
    for (const { record: r, request, snapshot } of s.creates) {
      st.insertSession.run(r.id, r.agent, request, r.nativeSessionId, r.status, snapshot, r.createdAt, r.updatedAt, r.endedAt, r.lastSequence);
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
          args[a++] = s.cursors[i + k];
          args[a++] = s.jsons[i + k];
          args[a++] = s.raws[i + k];
        }
        statement.run(args);
      }
    }
    for (; i < n; i++) st.insertEvent.run(s.sessions[i], s.sequences[i], s.cursors[i], s.jsons[i], s.raws[i]);
    for (const m of s.marks) {
      st.insertMark.run(m.cursor, m.sessionId, m.agent, m.json, m.at);
      if (m.keep) st.markDeleted.run(m.at, m.at, m.sessionId);
    }
    const last = Math.max(s.cursors[n - 1] ?? 0, s.marks.at(-1)?.cursor ?? 0);
    if (last > 0) st.feedHead.run(last);
    // A session's row is written once per tick: its progress and the bytes its new events take.
    const written = new Set<string>();
    for (const { id, progress: p, snapshot } of rows) {
      st.updateSession.run(p.nativeSessionId, p.status, snapshot, p.updatedAt, p.endedAt, p.lastSequence, s.bytes.get(id) ?? 0, id);
      written.add(id);
    }
    for (const [id, bytes] of s.bytes) if (!written.has(id)) st.addBytes.run(bytes, id);
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
  return { sessions: [], sequences: [], cursors: [], marks: [], jsons: [], raws: [], bytes: new Map(), progress: new Map(), creates: [], last: new Map() };
}

const MULTI_ROWS = [64, 16];

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
