// `--persist off`: the store that keeps nothing. The in-memory window of each EventLog is all there
// is, so an event is "committed" the moment it is appended (readers see it at once, as before the
// store existed), a read behind the window is 410, and no session outlives the process.
import type { CommitListener, EventStore, SessionProgress, SessionRecord, StoredEvent, StoreFailure } from './event-store.js';

export class MemoryStore implements EventStore {
  readonly durable = false;
  readonly failure: StoreFailure = null;
  readonly pendingEvents = 0;
  private readonly listeners = new Map<string, CommitListener>();

  attach(sessionId: string, onCommitted: CommitListener): void {
    this.listeners.set(sessionId, onCommitted);
  }

  detach(sessionId: string): void {
    this.listeners.delete(sessionId);
  }

  onHealth(): void {
    // Memory never fails to take a write.
  }

  loadSessions(): SessionRecord[] {
    return [];
  }

  createSession(): void {}

  updateSession(_id: string, _progress: () => SessionProgress): void {}

  appendEvent(sessionId: string, event: StoredEvent): void {
    this.listeners.get(sessionId)?.(event.sequence);
  }

  flush(): void {}

  readEvents(): StoredEvent[] {
    return [];
  }

  deleteSession(id: string): void {
    this.listeners.delete(id);
  }

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
