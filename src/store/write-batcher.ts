// The SQLite store's write path: writes staged and committed once per tick. SqliteStore owns one
// and passes its writes through it; what is staged is in staged-writes.ts, the SQL a commit runs in
// batch-sql.ts, a failing commit's report and retry in write-health.ts.
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
import type { Database as Db } from './sqlite-binding.js';
import type { FeedRecord, SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';
import { BatchSql } from './batch-sql.js';
import { emptyStaged, feedRecords, isEmpty, lastCursor, type ProgressRow, type Staged } from './staged-writes.js';
import { storableJson } from './storable-json.js';
import { WriteHealth } from './write-health.js';

/** A record part written without what could not be serialised: told to its session after the commit. */
export type DroppedListener = (sessionId: string, part: string, message: string) => void;

export class WriteBatcher {
  private staged: Staged = emptyStaged();
  private scheduled = false;
  private readonly health: WriteHealth;
  private readonly commit: (rows: ProgressRow[]) => void;
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
    retryMs: number,
    private readonly onCommitted: (sessionId: string, sequence: number) => void,
    private readonly agentOf: (sessionId: string) => string,
  ) {
    this.health = new WriteHealth(retryMs, () => this.flush());
    const sql = new BatchSql(db);
    this.commit = db.transaction((rows: ProgressRow[]) => sql.write(this.staged, rows));
    this.given = this.committedCursor = sql.feedHead();
  }

  /** Why the store takes no writes now (a commit failing), or null. */
  get failure(): StoreFailure {
    return this.health.failure;
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
    this.health.onHealth(listener);
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
    if (isEmpty(staged)) return;
    const rows = this.progressRows(staged);
    this.reportDropped();
    try {
      this.commit(rows);
    } catch (err) {
      return this.health.failed(err as Error & { code?: string });
    }
    this.staged = emptyStaged();
    if (this.health.failure) this.health.recovered();
    for (const [sessionId, sequence] of staged.last) this.onCommitted(sessionId, sequence);
    this.reportFeed(staged);
  }

  /** The committed entries, in cursor order, to the feed. */
  private reportFeed(s: Staged): void {
    if (s.sequences.length === 0 && s.marks.length === 0) return;
    this.committedCursor = Math.max(this.committedCursor, lastCursor(s));
    if (!this.onFeed) return;
    this.onFeed(feedRecords(s, this.agentOf));
  }

  /** Stops the retry timer: the store is closing. */
  stop(): void {
    this.health.stop();
  }

  private schedule(): void {
    // While failing, only the retry timer commits: a full disk would fail every tick's attempt.
    if (this.scheduled || this.health.failure) return;
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
}
