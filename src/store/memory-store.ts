// `--persist off`: the store that keeps nothing. The in-memory window of each EventLog is all there
// is, so an event is "committed" the moment it is appended (readers see it at once, as before the
// store existed), a read behind the window is 410, and no session outlives the process. The feed's
// cursor is a counter here: it starts at 0 with every process, as everything else does. Feed
// entries are handed on once per tick, as the SQLite store's commits are: one call for a flood's
// stdout read rather than one per event.
import { deletionJson, type CommitListener, type Deletion, type EventStore, type FeedRecord, type SessionProgress, type SessionRecord, type StoredEvent, type StoreFailure } from './event-store.js';

export class MemoryStore implements EventStore {
  readonly durable = false;
  readonly failure: StoreFailure = null;
  readonly pendingEvents = 0;
  private readonly listeners = new Map<string, CommitListener>();
  private readonly agents = new Map<string, string>();
  private feedListener: ((records: FeedRecord[]) => void) | undefined;
  private cursor = 0;
  private pendingFeed: FeedRecord[] = [];

  get feedHead(): number {
    return this.cursor;
  }

  onFeed(listener: (records: FeedRecord[]) => void): void {
    this.feedListener = listener;
  }

  readFeed(): FeedRecord[] {
    return [];
  }

  attach(sessionId: string, onCommitted: CommitListener): void {
    this.listeners.set(sessionId, onCommitted);
  }

  detach(sessionId: string): void {
    this.listeners.delete(sessionId);
  }

  onHealth(): void {
    // Memory never fails to take a write.
  }

  onRecordDropped(): void {
    // Memory keeps records as values: nothing is serialised, nothing dropped.
  }

  loadSessions(): SessionRecord[] {
    return [];
  }

  createSession(record: SessionRecord): void {
    this.agents.set(record.id, record.agent);
  }

  updateSession(_id: string, _progress: () => SessionProgress): void {}

  appendEvent(sessionId: string, event: StoredEvent): void {
    this.listeners.get(sessionId)?.(event.sequence);
    const agent = this.agents.get(sessionId) ?? '';
    this.stage({ cursor: ++this.cursor, sessionId, agent, json: event.json, raw: event.raw, deleted: false });
  }

  /** Hands on the feed entries of this tick now (the daemon is stopping: its readers get them before they close). */
  flush(): void {
    this.deliver();
  }

  readEvents(): StoredEvent[] {
    return [];
  }

  deleteSession(id: string, deletion: Deletion): void {
    this.listeners.delete(id);
    const agent = this.agents.get(id) ?? '';
    this.agents.delete(id);
    this.stage({ cursor: ++this.cursor, sessionId: id, agent, json: deletionJson(id, agent, deletion), raw: null, deleted: true });
  }

  private stage(record: FeedRecord): void {
    if (this.pendingFeed.length === 0) process.nextTick(this.deliver);
    this.pendingFeed.push(record);
  }

  private readonly deliver = (): void => {
    if (this.pendingFeed.length === 0) return;
    const records = this.pendingFeed;
    this.pendingFeed = [];
    this.feedListener?.(records);
  };

  prune(): string[] {
    return [];
  }

  sizeBytes(): number {
    return 0;
  }

  close(): void {
    this.listeners.clear();
  }
}
