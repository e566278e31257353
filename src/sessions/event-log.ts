// The append-only, sequenced, bounded event log of one session (design rule 2: the ONLY place that
// stamps sequence, event_id, time, session_id and native_session_id).
//
// Subscribers do not get their own copy of events: each one holds a cursor into this log and pulls
// when it can write. The log itself is the queue, so a subscriber's backlog is just
// `lastSequence - cursor`, bounded by `maxLag`; replay-then-live needs no hand-over (no gap, no
// duplicate at the seam) because replay and live delivery are the same loop.
import type { PendingEvent, UniversalEvent } from '../schema/events.js';
import { eventsEvicted, offsetAhead } from '../errors.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import { EnvelopeWriter } from './envelope.js';
import { EventStore } from './event-store.js';

export interface EventLogLimits {
  maxEvents: number;
  maxBytes: number;
}

/*
 * Each event is stored once, serialized: the envelope with `raw: null`, and the raw payload beside
 * it, so a poll or stream without include_raw never serializes anything twice. The bytes live off
 * the JS heap (event-store.ts), where the GC never copies or marks them.
 */

export type LogListener = (event: UniversalEvent) => void;

export class EventLog {
  /** Its oldest event has sequence `firstSequence`. */
  private readonly store = new EventStore();
  private firstSequence = 1;
  private bytes = 0;
  private nativeSessionId: string | null = null;
  private readonly listeners = new Set<LogListener>();
  private readonly closeListeners = new Set<() => void>();
  private evictedCount = 0;
  private readonly envelope: EnvelopeWriter;
  private lastMs = NaN;
  private lastTime = '';

  constructor(
    readonly sessionId: string,
    private readonly limits: EventLogLimits,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {
    this.envelope = new EnvelopeWriter(sessionId);
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

  get lastSequence(): number {
    return this.firstSequence + this.count - 1;
  }

  /** Sequence of the oldest event still held (lastSequence + 1 when empty). */
  get oldestSequence(): number {
    return this.firstSequence;
  }

  get size(): { events: number; bytes: number; evicted: number } {
    return { events: this.count, bytes: this.bytes, evicted: this.evictedCount };
  }

  private get count(): number {
    return this.store.count;
  }

  get currentNativeSessionId(): string | null {
    return this.nativeSessionId;
  }

  append(pending: PendingEvent, raw: unknown = null, nativeSessionId?: string | null): UniversalEvent {
    if (nativeSessionId) this.nativeSessionId = nativeSessionId;
    const event = {
      event_id: this.ids.next('evt'),
      sequence: this.lastSequence + 1,
      time: this.time(),
      session_id: this.sessionId,
      native_session_id: this.nativeSessionId,
      source: pending.source,
      synthetic: pending.synthetic,
      type: pending.type,
      data: pending.data,
      raw: null,
    } as UniversalEvent;
    const json = this.envelope.serialize(event);
    const rawJson = raw === null || raw === undefined ? null : safeJson(raw);
    this.bytes += this.store.push(json, rawJson === 'null' ? null : rawJson);
    this.evict();
    for (const listener of this.listeners) listener(event);
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
    const start = Math.max(0, after + 1 - this.firstSequence);
    const end = Math.min(this.count, start + limit);
    const out: string[] = [];
    for (let i = start; i < end; i++) out.push(this.store.json(i, includeRaw));
    return out;
  }

  /** Bytes of event `sequence`'s JSON (as readJson gives it); the caller has checked it is held. */
  jsonSize(sequence: number, includeRaw: boolean): number {
    return this.store.size(sequence - this.firstSequence, includeRaw);
  }

  /**
   * Copies event `sequence`'s JSON into `target` at `at` without decoding it (frames for many
   * readers are built from bytes); returns the position after it.
   */
  copyJson(sequence: number, includeRaw: boolean, target: Buffer, at: number): number {
    return this.store.copy(sequence - this.firstSequence, includeRaw, target, at);
  }

  /**
   * Throws when `after` is not a cursor into this log: older than what is still held (evicted),
   * or past the last event (a cursor from another log, e.g. a session re-created under the same
   * id); serving either would silently skip events.
   */
  assertAvailable(after: number): void {
    if (after + 1 < this.firstSequence) throw eventsEvicted(this.sessionId, after, this.firstSequence);
    if (after > this.lastSequence) throw offsetAhead(this.sessionId, after, this.lastSequence);
  }

  /** Called synchronously after every append. Returns the unsubscribe function. */
  listen(listener: LogListener, onClose?: () => void): () => void {
    this.listeners.add(listener);
    if (onClose) this.closeListeners.add(onClose);
    return () => {
      this.listeners.delete(listener);
      if (onClose) this.closeListeners.delete(onClose);
    };
  }

  /** No more events will come (the session was deleted or the daemon is stopping): tell listeners. */
  close(): void {
    const pending = [...this.closeListeners];
    this.listeners.clear();
    this.closeListeners.clear();
    for (const onClose of pending) onClose();
  }

  private evict(): void {
    // Always keep the newest event, even if it alone is over the byte budget: a log that cannot
    // hold its last event would lose it without anyone being able to notice.
    while (this.count > 1 && (this.count > this.limits.maxEvents || this.bytes > this.limits.maxBytes)) {
      this.bytes -= this.store.shift();
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
