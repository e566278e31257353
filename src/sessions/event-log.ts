// The append-only, sequenced, bounded event log of one session (the One stamp rule: the ONLY
// place that stamps sequence, event_id, time, session_id and native_session_id).
//
// Subscribers do not get their own copy of events: each one holds a cursor into this log and pulls
// when it can write. The log itself is the queue, so a subscriber's backlog is just
// `lastSequence - cursor`, bounded by `maxLag`; replay-then-live needs no hand-over (no gap, no
// duplicate at the seam) because replay and live delivery are the same loop.
import type { PendingEvent, UniversalEvent } from '../schema/events.js';
import { eventsEvicted, offsetAhead } from '../errors.js';
import type { EventStore } from '../store/event-store.js';
import { MemoryStore } from '../store/memory-store.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import { EnvelopeWriter } from './envelope.js';
import { EventBuffer } from './event-buffer.js';
import { HistoryPage, withRawJson } from './history-page.js';

export interface EventLogLimits {
  maxEvents: number;
  maxBytes: number;
}

/** Where a restored session's log resumes: its sequences continue after `lastSequence`. */
export interface LogOrigin {
  lastSequence: number;
  nativeSessionId: string | null;
}

/*
 * Each event is stored once, serialized: the envelope with `raw: null`, and the raw payload beside
 * it, so a poll or stream without include_raw never serializes anything twice. The window's bytes
 * live off the JS heap (event-buffer.ts), where the GC never copies or marks them.
 *
 * Durability (rule: Commit before serve): an appended event goes to the window and is staged in the store; it
 * becomes visible to readers (lastSequence, reads, listeners) only when the store reports it
 * committed. The memory store commits at once; SQLite commits once per tick, before any
 * subscriber's pump runs. Behind the window, a durable store serves the rest of the history.
 */

export type LogListener = (event: UniversalEvent) => void;

export class EventLog {
  /** The window: events firstSequence..appended, the newest possibly not yet committed. */
  private window = new EventBuffer();
  private firstSequence: number;
  private appended: number;
  /** The last committed event: what readers may see. */
  private visible: number;
  /** Appended, not yet committed: told to listeners once they are. */
  private uncommitted: UniversalEvent[] = [];
  private bytes = 0;
  private nativeSessionId: string | null;
  private readonly listeners = new Set<LogListener>();
  private readonly closeListeners = new Set<() => void>();
  private evictedCount = 0;
  private readonly envelope: EnvelopeWriter;
  private readonly history: HistoryPage;
  private lastMs = NaN;
  private lastTime = '';

  constructor(
    readonly sessionId: string,
    private readonly limits: EventLogLimits,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly store: EventStore = new MemoryStore(),
    origin: LogOrigin = { lastSequence: 0, nativeSessionId: null },
  ) {
    this.envelope = new EnvelopeWriter(sessionId);
    this.history = new HistoryPage(store, sessionId);
    this.appended = this.visible = origin.lastSequence;
    this.firstSequence = origin.lastSequence + 1;
    this.nativeSessionId = origin.nativeSessionId;
    store.attach(sessionId, (sequence) => this.committed(sequence));
  }

  /** Events appended in the same millisecond share one ISO string (thousands of events a second). */
  private time(): string {
    const now = this.clock.now();
    const ms = now.getTime();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTime = now.toISOString();
    }
    return this.lastTime;
  }

  /** The last event readers can see (committed). */
  get lastSequence(): number {
    return this.visible;
  }

  /** The last event appended, committed or not (what the store's session row records). */
  get lastAppended(): number {
    return this.appended;
  }

  /** Sequence of the oldest event a reader can get (1 with a durable store). */
  get oldestSequence(): number {
    return this.store.durable ? 1 : this.firstSequence;
  }

  get size(): { events: number; bytes: number; evicted: number } {
    return { events: this.window.count, bytes: this.bytes, evicted: this.evictedCount };
  }

  get currentNativeSessionId(): string | null {
    return this.nativeSessionId;
  }

  append(pending: PendingEvent, raw: unknown = null, nativeSessionId?: string | null): UniversalEvent {
    if (nativeSessionId) this.nativeSessionId = nativeSessionId;
    return this.stamp(pending, this.time(), this.nativeSessionId, raw);
  }

  /**
   * A fork's copy of one of its parent's events (fork.ts): stamped for this log (event_id,
   * session_id and the next sequence, which is the parent's own since both count from 1), with the
   * time and native session id it had. The native session id this log carries forward is not
   * changed: the fork's agent names its own.
   */
  copy(event: UniversalEvent): UniversalEvent {
    const { source, synthetic, type, data } = event;
    return this.stamp({ source, synthetic, type, data } as PendingEvent, event.time, event.native_session_id, event.raw);
  }

  private stamp(pending: PendingEvent, time: string, nativeSessionId: string | null, raw: unknown): UniversalEvent {
    const sequence = ++this.appended;
    const event = {
      event_id: this.ids.next('evt'),
      sequence,
      time,
      session_id: this.sessionId,
      native_session_id: nativeSessionId,
      source: pending.source,
      synthetic: pending.synthetic,
      type: pending.type,
      data: pending.data,
      raw: null,
    } as UniversalEvent;
    const json = this.envelope.serialize(event);
    const rawJson = raw === null || raw === undefined ? null : safeJson(raw);
    const stored = rawJson === 'null' ? null : rawJson;
    const bytes = this.window.push(json, stored);
    this.bytes += bytes;
    this.evict();
    this.uncommitted.push(event);
    // The memory store reports the commit from inside this call: listeners run now, as they always did.
    this.store.appendEvent(this.sessionId, { sequence, json, raw: stored, bytes });
    return event;
  }

  /**
   * Events with sequence > `after`, at most `limit`. Throws EventsEvicted when the first wanted
   * event is gone, so a client never sees a silent hole.
   */
  read(after: number, limit = Infinity, includeRaw = false): UniversalEvent[] {
    return this.readJson(after, limit, includeRaw).map((json) => JSON.parse(json) as UniversalEvent);
  }

  /** The serialized events for SSE/NDJSON/poll, with or without raw, without re-serializing. */
  readJson(after: number, limit: number, includeRaw: boolean): string[] {
    this.assertAvailable(after);
    const out: string[] = [];
    let cursor = after;
    if (cursor + 1 < this.firstSequence) {
      // Behind the window: keyset pages from the store (assertAvailable said it is durable).
      const want = Math.min(limit, this.firstSequence - 1 - cursor);
      for (const row of this.store.readEvents(this.sessionId, cursor, want)) {
        out.push(includeRaw ? withRawJson(row.json, row.raw) : row.json);
        cursor = row.sequence;
      }
    }
    const start = Math.max(0, cursor + 1 - this.firstSequence);
    const end = Math.min(this.visible - this.firstSequence + 1, start + limit - out.length);
    for (let i = start; i < end; i++) out.push(this.window.json(i, includeRaw));
    return out;
  }

  /** Bytes of event `sequence`'s JSON (as readJson gives it); the caller has checked it is readable. */
  jsonSize(sequence: number, includeRaw: boolean): number {
    if (sequence < this.firstSequence) return this.history.size(sequence, includeRaw);
    return this.window.size(sequence - this.firstSequence, includeRaw);
  }

  /**
   * Copies event `sequence`'s JSON into `target` at `at` without decoding it (frames for many
   * readers are built from bytes); returns the position after it.
   */
  copyJson(sequence: number, includeRaw: boolean, target: Buffer, at: number): number {
    if (sequence < this.firstSequence) return this.history.copy(sequence, includeRaw, target, at);
    return this.window.copy(sequence - this.firstSequence, includeRaw, target, at);
  }

  /**
   * Throws when `after` is not a cursor into this log: older than what is still held (evicted, and
   * the store keeps nothing), or past the last event (a cursor from another log, e.g. a session
   * re-created under the same id); serving either would silently skip events.
   */
  assertAvailable(after: number): void {
    if (after + 1 < this.firstSequence && !this.store.durable) throw eventsEvicted(this.sessionId, after, this.firstSequence);
    if (after > this.visible) throw offsetAhead(this.sessionId, after, this.visible);
  }

  /** Called after every commit, with each event committed. Returns the unsubscribe function. */
  listen(listener: LogListener, onClose?: () => void): () => void {
    this.listeners.add(listener);
    if (onClose) this.closeListeners.add(onClose);
    return () => {
      this.listeners.delete(listener);
      if (onClose) this.closeListeners.delete(onClose);
    };
  }

  /**
   * Frees the window of a log whose events are all committed to a durable store (an ended session
   * nobody reads): reads then come from the store. Returns false when it cannot.
   */
  releaseWindow(): boolean {
    if (!this.store.durable || this.visible !== this.appended) return false;
    if (this.window.count === 0) return true; // already released (the sweep asks every minute)
    this.window = new EventBuffer();
    this.firstSequence = this.appended + 1;
    this.bytes = 0;
    this.history.clear();
    return true;
  }

  /** No more events will come (the session was deleted or the daemon is stopping): tell listeners. */
  close(): void {
    const pending = [...this.closeListeners];
    this.listeners.clear();
    this.closeListeners.clear();
    this.history.clear();
    for (const onClose of pending) onClose();
  }

  private committed(sequence: number): void {
    this.visible = sequence;
    const events = this.uncommitted;
    this.uncommitted = [];
    for (const event of events) for (const listener of this.listeners) listener(event);
  }

  private evict(): void {
    // Always keep the newest event, even if it alone is over the byte budget: a log that cannot
    // hold its last event would lose it without anyone being able to notice.
    while (this.window.count > 1 && (this.window.count > this.limits.maxEvents || this.bytes > this.limits.maxBytes)) {
      this.bytes -= this.window.shift();
      this.firstSequence++;
      this.evictedCount++;
    }
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    // Cycles, BigInts or absurd depth: the log must still take the event (String() of such a
    // value can throw too, so no attempt is made to describe it further).
    return '"[unserializable raw payload]"';
  }
}
