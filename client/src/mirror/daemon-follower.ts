// One daemon followed into PostgreSQL through its feed (GET /v1/events/sse): one connection, every
// session's events and deletions in commit order, from the cursor stored with the last batch
// written. A session that lived for less than a second, or while the mirror was down, is in the
// feed like any other, so nothing depends on listing sessions at the right moment. The loop here
// is the only retry beyond the client's own reconnections: the daemon is asked whether it is up,
// the feed is read until it fails, and then again after a backoff, from the last entry queued. A
// daemon that is down therefore costs one request per backoff period and never stops another
// daemon's follower.
import { BatchQueue, type BatchQueueOptions } from './batch-queue.js';
import { backoffDelay } from '../backoff.js';
import { sleep } from '../cancel.js';
import { AgentwireError } from '../errors.js';
import type { FeedEntry } from '../types.js';
import { oldestAvailable } from './client-source.js';
import type { EventRow, MirrorStore } from './mirror-store.js';
import type { DaemonSource, DaemonStats, DaemonTarget, MirrorLogEntry } from './types.js';

export interface FollowerOptions extends Pick<BatchQueueOptions, 'batchSize' | 'maxDelayMs' | 'capacity' | 'capacityBytes'> {
  /** The longest wait between attempts at a daemon that does not answer. */
  maxBackoffMs: number;
  log(entry: MirrorLogEntry): void;
  /** Events newly stored, for the mirror's totals. */
  onWritten(count: number): void;
}

export class DaemonFollower {
  /** Sessions started and not deleted, as the feed told them. */
  private readonly sessions = new Set<string>();
  private readonly queue: BatchQueue;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private up = false;
  /** The last cursor handed to the queue: a reconnection resumes after it. */
  private read: number | undefined;
  /** The cursor stored with the last batch. */
  private stored = 0;
  private eventsWritten = 0;
  private eventsMissed = 0;
  private lastError: string | null = null;

  constructor(
    readonly target: DaemonTarget,
    private readonly source: DaemonSource,
    private readonly store: MirrorStore,
    private readonly options: FollowerOptions,
  ) {
    this.queue = new BatchQueue({
      ...options,
      write: (rows) => this.write(rows),
      onError: (error, retryInMs) => this.log('error', `writing events failed; retrying in ${Math.round(retryInMs)} ms`, error),
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Closes the feed, writes what was read (for at most `flushTimeoutMs`), and returns. */
  async stop(flushTimeoutMs = 10_000): Promise<void> {
    this.abort.abort();
    // The queue first: a reader waiting for room in it (a database that does not answer) is let
    // go when the queue closes, and sees then that it was aborted.
    const closed = this.queue.close(flushTimeoutMs);
    if (!(await settleWithin(this.loop ?? Promise.resolve(), flushTimeoutMs + 5000))) this.log('warn', 'the feed did not close within 5 s of the stop; left behind');
    await closed;
  }

  stats(): DaemonStats {
    const { id } = this.target;
    const { up, eventsWritten, eventsMissed, lastError } = this;
    return { id, up, sessions: this.sessions.size, cursor: this.stored, eventsWritten, queued: this.queue.size, eventsMissed, lastError };
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    let failures = 0;
    while (!signal.aborted) {
      let what = 'daemon not reachable';
      try {
        if (this.read === undefined) {
          what = 'reading the stored cursor failed';
          const [cursor, live] = await Promise.all([this.store.cursor(this.target.id), this.store.liveSessions(this.target.id)]);
          this.read = this.stored = cursor;
          for (const id of live) this.sessions.add(id);
          what = 'daemon not reachable';
        }
        await this.source.check(signal);
        if (!this.up) this.log('info', failures > 0 ? 'daemon reachable again' : 'following');
        this.up = true;
        this.lastError = null;
        what = 'the feed failed';
        for await (const entry of this.source.feed(this.read, signal)) {
          if (signal.aborted) return;
          if (entry.cursor <= this.read) continue; // never twice (the client sees to it too)
          this.read = entry.cursor;
          failures = 0;
          const pushed = this.queue.push(this.row(entry));
          if (pushed) await pushed; // the queue is full: stop reading until a batch is written
        }
      } catch (error) {
        if (signal.aborted) break;
        if (this.skipped(error)) continue;
        failures++;
        this.up = false;
        this.lastError = message(error);
        if (failures === 1 || failures % 20 === 0) this.log('warn', `${what} (attempt ${failures}); retrying with backoff`, error);
        await sleep(backoffDelay(failures, { initialDelayMs: 250, maxDelayMs: this.options.maxBackoffMs }), signal);
      }
    }
  }

  /** A cursor the daemon no longer serves: go on from what it has, saying what was lost. */
  private skipped(error: unknown): boolean {
    const read = this.read ?? 0;
    const oldest = oldestAvailable(error);
    if (oldest !== undefined && oldest - 1 > read) {
      // A --persist off daemon's feed window moved on before the mirror read them.
      this.eventsMissed += oldest - 1 - read;
      this.log('warn', `feed entries ${read + 1}..${oldest - 1} were gone from the daemon before they were read`);
      this.read = oldest - 1;
      return true;
    }
    if (AgentwireError.is(error) && error.code === 'offset_ahead') {
      // Its feed started again (a --persist off daemon restarted): so does the mirror's reading.
      this.log('warn', `the daemon's feed ends before cursor ${read} (it restarted without its store?); reading it again from 0`);
      this.read = 0;
      return true;
    }
    return false;
  }

  private row(entry: FeedEntry): EventRow {
    if ('event' in entry) {
      const e = entry.event;
      if (e.sequence === 1) this.sessions.add(e.session_id);
      return { cursor: entry.cursor, sessionId: e.session_id, sequence: e.sequence, type: e.type, time: e.time, json: JSON.stringify(e), agent: entry.agent };
    }
    const d = entry.session_deleted;
    this.sessions.delete(d.session_id);
    return { cursor: entry.cursor, sessionId: d.session_id, sequence: d.last_sequence, type: 'session.deleted', time: d.time, json: JSON.stringify(d) };
  }

  private async write(rows: EventRow[]): Promise<void> {
    const inserted = await this.store.writeBatch(this.target.id, rows);
    this.stored = rows.at(-1)!.cursor;
    this.eventsWritten += inserted;
    this.options.onWritten(inserted);
  }

  private log(level: MirrorLogEntry['level'], msg: string, error?: unknown, session?: string): void {
    this.options.log({ level, msg, daemon: this.target.id, ...(session ? { session } : {}), ...(error === undefined ? {} : { err: message(error) }) });
  }
}

/** True when `promise` settled within `ms`. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
