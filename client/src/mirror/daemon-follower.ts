// One daemon followed into PostgreSQL. A loop lists the daemon's sessions every poll interval (and,
// while the daemon does not answer, retries with backoff): it writes new and changed session rows,
// and makes sure every session with events not yet read has a stream open, resuming after the
// highest sequence stored or queued. That loop is the only retry: a stream that fails or ends just
// stops, and the next list opens it again from where it got to. A daemon that is down therefore
// costs one request per backoff period and never stops another daemon's follower.
import { BatchQueue, type BatchQueueOptions } from './batch-queue.js';
import { backoffDelay } from '../backoff.js';
import { sleep } from '../cancel.js';
import { oldestAvailable } from './client-source.js';
import type { EventRow, MirrorStore } from './mirror-store.js';
import type { DaemonSource, DaemonStats, DaemonTarget, MirrorLogEntry, SessionSummary } from './types.js';

export interface FollowerOptions extends Pick<BatchQueueOptions, 'batchSize' | 'maxDelayMs' | 'capacity' | 'capacityBytes'> {
  pollIntervalMs: number;
  /** The longest wait between attempts at a daemon that does not answer. */
  maxBackoffMs: number;
  log(entry: MirrorLogEntry): void;
  /** Events newly stored, for the mirror's totals. */
  onWritten(count: number): void;
}

interface SessionState {
  info: SessionSummary;
  /** The info as last written to agentwire_sessions (only changes are written again). */
  written: string;
  /** Highest sequence stored in PostgreSQL. */
  stored: number;
  /** Highest sequence handed to the queue: a reopened stream resumes after it. */
  read: number;
  stream: AbortController | undefined;
  lastError: string | undefined;
}

export class DaemonFollower {
  private readonly sessions = new Map<string, SessionState>();
  private readonly queue: BatchQueue;
  private readonly abort = new AbortController();
  private readonly streams = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private up = false;
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

  /** Closes the streams, writes what was read (for at most `flushTimeoutMs`), and returns. */
  async stop(flushTimeoutMs = 10_000): Promise<void> {
    this.abort.abort();
    await this.loop;
    // The queue first: a stream waiting for room in it (a database that does not answer) is let
    // go when the queue closes, and sees then that it was aborted.
    await this.queue.close(flushTimeoutMs);
    // Every stream was aborted; one that still does not return (a connection stuck below the
    // client) must not hold up the stop: its events are read again by the next start anyway.
    if (!(await settleWithin(Promise.all(this.streams), 5000))) this.log('warn', `${this.streams.size} event streams did not close within 5 s of the stop; left behind`);
  }

  stats(): DaemonStats {
    let lagEvents = 0;
    let following = 0;
    for (const s of this.sessions.values()) {
      lagEvents += Math.max(0, s.info.eventCount - s.stored);
      if (s.stream) following++;
    }
    const { id } = this.target;
    const { up, eventsWritten, eventsMissed, lastError } = this;
    return { id, up, sessions: this.sessions.size, following, eventsWritten, lagEvents, queued: this.queue.size, eventsMissed, lastError };
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    let failures = 0;
    while (!signal.aborted) {
      // Two different failures, both retried with backoff: the daemon's list, and the database.
      let failed: string | undefined;
      try {
        const list = await this.source.listSessions(signal);
        if (!this.up) this.log('info', failures > 0 ? 'daemon reachable again' : 'following');
        this.up = true;
        failed = 'writing session rows failed';
        await this.reconcile(list);
        this.lastError = null;
        failures = 0;
        await sleep(this.options.pollIntervalMs, signal);
      } catch (error) {
        if (signal.aborted) break;
        failures++;
        if (!failed) this.up = false;
        this.lastError = message(error);
        const what = failed ?? 'daemon not reachable';
        if (failures === 1 || failures % 20 === 0) this.log('warn', `${what} (attempt ${failures}); retrying with backoff`, error);
        await sleep(backoffDelay(failures, { initialDelayMs: 250, maxDelayMs: this.options.maxBackoffMs }), signal);
      }
    }
  }

  /** Brings the session rows and the open streams in line with one list of the daemon's sessions. */
  private async reconcile(list: SessionSummary[]): Promise<void> {
    const listed = new Set(list.map((s) => s.sessionId));
    for (const [id, state] of this.sessions) {
      // Deleted on the daemon: its rows stay as they were; there is nothing more to read.
      if (!listed.has(id)) {
        state.stream?.abort();
        this.sessions.delete(id);
      }
    }
    const fresh = list.filter((s) => !this.sessions.has(s.sessionId));
    const stored = await this.store.maxSequences(this.target.id, fresh.map((s) => s.sessionId));
    for (const info of fresh) {
      const max = stored.get(info.sessionId) ?? 0;
      this.sessions.set(info.sessionId, { info, written: '', stored: max, read: max, stream: undefined, lastError: undefined });
    }
    const changed: SessionSummary[] = [];
    for (const info of list) {
      const state = this.sessions.get(info.sessionId)!;
      state.info = info;
      const json = JSON.stringify(info);
      if (json !== state.written) {
        changed.push(info);
        state.written = json;
      }
    }
    // Rows first: a batch moves its sessions' rows on, so they must exist before their events.
    await this.store.upsertSessions(this.target.id, changed);
    for (const state of this.sessions.values()) {
      const complete = state.info.ended && state.read >= state.info.eventCount;
      if (complete) state.stream?.abort();
      else if (!state.stream) this.open(state);
    }
  }

  private open(state: SessionState): void {
    // stop() can come while a list is being reconciled: an abort listener added after the abort
    // would never fire, and the stream would follow forever.
    if (this.abort.signal.aborted) return;
    const stream = new AbortController();
    state.stream = stream;
    const onStop = () => stream.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    const done = this.follow(state, stream.signal).finally(() => {
      this.abort.signal.removeEventListener('abort', onStop);
      if (state.stream === stream) state.stream = undefined;
      this.streams.delete(done);
    });
    this.streams.add(done);
  }

  /** Reads one session's stream into the queue until it ends, fails, or is closed. */
  private async follow(state: SessionState, signal: AbortSignal): Promise<void> {
    const sessionId = state.info.sessionId;
    try {
      for await (const event of this.source.events(sessionId, state.read, signal)) {
        if (signal.aborted) return;
        if (event.sequence <= state.read) continue; // never twice (the client sees to it too)
        state.read = event.sequence;
        const pushed = this.queue.push({ sessionId, sequence: event.sequence, type: event.type, time: event.time, json: JSON.stringify(event) });
        if (pushed) await pushed; // the queue is full: stop reading until a batch is written
        if (event.type === 'session.ended') return;
      }
      state.lastError = undefined;
    } catch (error) {
      if (signal.aborted) return;
      const oldest = oldestAvailable(error);
      if (oldest !== undefined && oldest - 1 > state.read) {
        // An in-memory daemon's retention removed them before they were read: count them, go on.
        this.eventsMissed += oldest - 1 - state.read;
        this.log('warn', `events ${state.read + 1}..${oldest - 1} were gone from the daemon before they were read`, undefined, sessionId);
        state.read = oldest - 1;
        return;
      }
      const text = message(error);
      if (text !== state.lastError) this.log('warn', 'event stream failed; it is reopened at the next list of sessions', error, sessionId);
      state.lastError = text;
    }
  }

  private async write(rows: EventRow[]): Promise<void> {
    const inserted = await this.store.writeEvents(this.target.id, rows);
    this.eventsWritten += inserted;
    this.options.onWritten(inserted);
    for (const row of rows) {
      const state = this.sessions.get(row.sessionId);
      if (state && row.sequence > state.stored) state.stored = row.sequence;
    }
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
