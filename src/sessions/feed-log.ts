// The daemon-wide feed (docs/feed.md): every committed entry of every session (its events, and its
// deletion) in commit order, positioned by the store's cursor. Like a session's EventLog it keeps
// a bounded window of the newest entries, off the JS heap, for live readers; a reader behind the
// window reads the store one keyset page at a time (never the history in memory), and with the
// memory store, which keeps nothing, a cursor behind the window is 410 as for a session's log.
//
// The feed stamps nothing: events come stamped by their EventLog, cursors from the store, which
// reports each commit's entries in cursor order (EventStore.onFeed).
import { feedAhead, feedEvicted } from '../errors.js';
import type { EventStore, FeedRecord } from '../store/event-store.js';
import { EventBuffer } from './event-buffer.js';
import type { EventLogLimits } from './event-log.js';

/** One entry as a reader gets it: the event's JSON bytes (raw spliced in if asked), or a deletion's. */
export interface FeedEntry {
  cursor: number;
  sessionId: string;
  agent: string;
  deleted: boolean;
  json: Buffer;
}

/** Entries a reader gets in one read: the page size of the store and of a stream's write. */
export const FEED_PAGE = 256;

interface Meta {
  sessionId: string;
  agent: string;
  deleted: boolean;
}

export class FeedLog {
  private window = new EventBuffer();
  private meta: Meta[] = [];
  private metaStart = 0;
  /** Cursor of the window's oldest entry; the window is contiguous (every cursor of this run is committed in order). */
  private first: number;
  private head: number;
  private bytes = 0;
  private readonly listeners = new Set<() => void>();
  private readonly closeListeners = new Set<() => void>();
  /** Open SSE readers, counted against --max-subscribers. */
  subscribers = 0;

  constructor(
    private readonly store: EventStore,
    private readonly limits: EventLogLimits,
  ) {
    this.head = store.feedHead;
    this.first = this.head + 1;
    store.onFeed((records) => this.committed(records));
  }

  /** The last committed cursor. */
  get lastCursor(): number {
    return this.head;
  }

  /** Throws unless `after` is a cursor this feed can continue from without a hole. */
  assertAvailable(after: number): void {
    if (after + 1 < this.first && !this.store.durable) throw feedEvicted(after, this.first);
    if (after > this.head) throw feedAhead(after, this.head);
  }

  /**
   * Entries with cursor > after, at most `limit`, and `to`: the cursor read up to (entries between
   * `after` and `to` not returned were dropped from the store). Behind the window: the store.
   */
  read(after: number, limit: number, includeRaw: boolean): { entries: FeedEntry[]; to: number } {
    this.assertAvailable(after);
    const entries: FeedEntry[] = [];
    let to = after;
    if (after + 1 < this.first) {
      const rows = this.store.readFeed(after, limit);
      // A short page means nothing else is stored before the window.
      let reached = rows.length < limit;
      for (const r of rows) {
        if (r.cursor >= this.first) {
          reached = true; // the window has it from here
          break;
        }
        entries.push(fromRecord(r, includeRaw));
        to = r.cursor;
      }
      if (!reached) return { entries, to };
      to = this.first - 1;
    }
    const start = Math.max(0, to + 1 - this.first);
    const end = Math.min(this.head - this.first + 1, start + limit - entries.length);
    for (let i = start; i < end; i++) {
      const m = this.meta[this.metaStart + i]!;
      entries.push({ cursor: this.first + i, sessionId: m.sessionId, agent: m.agent, deleted: m.deleted, json: this.window.bytes(i, includeRaw) });
      to = this.first + i;
    }
    return { entries, to };
  }

  /** Told after every commit that added entries; `onClose` when the daemon stops. Returns the unsubscribe. */
  listen(listener: () => void, onClose?: () => void): () => void {
    this.listeners.add(listener);
    if (onClose) this.closeListeners.add(onClose);
    return () => {
      this.listeners.delete(listener);
      if (onClose) this.closeListeners.delete(onClose);
    };
  }

  /** The daemon is stopping: readers get what they have not had, then their streams end. */
  close(): void {
    const pending = [...this.closeListeners];
    this.listeners.clear();
    this.closeListeners.clear();
    for (const onClose of pending) onClose();
  }

  private committed(records: FeedRecord[]): void {
    for (const r of records) {
      this.bytes += this.window.push(r.json, r.raw);
      this.meta.push({ sessionId: r.sessionId, agent: r.agent, deleted: r.deleted });
      this.head = r.cursor;
    }
    this.evict();
    for (const listener of this.listeners) listener();
  }

  private evict(): void {
    const { maxEvents, maxBytes } = this.limits;
    while (this.window.count > 1 && (this.window.count > maxEvents || this.bytes > maxBytes)) {
      this.bytes -= this.window.shift();
      this.metaStart++;
      this.first++;
    }
    // The metadata array is compacted now and then, not shifted per entry.
    if (this.metaStart > 4096 && this.metaStart > this.meta.length / 2) {
      this.meta = this.meta.slice(this.metaStart);
      this.metaStart = 0;
    }
  }
}

function fromRecord(r: FeedRecord, includeRaw: boolean): FeedEntry {
  const json = includeRaw && r.raw !== null ? `${r.json.slice(0, -'null}'.length)}${r.raw}}` : r.json;
  return { cursor: r.cursor, sessionId: r.sessionId, agent: r.agent, deleted: r.deleted, json: Buffer.from(json) };
}

/** An entry's event type without parsing it (the envelope's first `"type":"`; deletions: session.deleted). */
export function entryType(entry: FeedEntry): string {
  if (entry.deleted) return 'session.deleted';
  const at = entry.json.indexOf(TYPE_KEY);
  if (at < 0) return '';
  const start = at + TYPE_KEY.length;
  return entry.json.toString('latin1', start, entry.json.indexOf(0x22, start));
}

const TYPE_KEY = Buffer.from('"type":"');
