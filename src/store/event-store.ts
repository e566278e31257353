// The one storage interface of the daemon (rule: Commit before serve): where sessions and their events are
// kept beyond the in-memory window. Two implementations: MemoryStore (`--persist off`: nothing
// outlives the process, reads behind the window are 410 as before) and SqliteStore (the default:
// everything in `<data-dir>/agentwire.db`). Session code never knows which one runs.
//
// Writes are staged and committed in one transaction per tick (flush), so a flood of events costs
// one commit per stdout read, not one per event. The EventLog shows an event to readers only once
// `onCommitted` said it is stored: nothing a client saw can be lost by a crash.
import type { Budget, PermissionEventData, QuestionEventData, UniversalItem, UsageTotals } from '../schema/events.js';
import type { SessionStatus } from '../schema/api.js';
import type { QueuedMessage } from '../schema/delivery.js';

/** What the normalizer must know to restore a session whose agent is gone (see Normalizer.restore). */
export interface SessionSnapshot {
  turnId: string | null;
  /** Its turn.started is in the stream (absent in rows written before it existed: announced). */
  turnAnnounced?: boolean;
  turnCount: number;
  permissions: PermissionEventData[];
  questions: QuestionEventData[];
  /** Items started in the open turn and not completed, as their failed completion would show them. */
  openItems: UniversalItem[];
  /** Messages waiting in the session's queue (message-queue.ts); absent in rows written before it existed. */
  queue?: QueuedMessage[];
  /** The session's usage totals (usage-book.ts); absent in rows written before they existed. */
  usage?: UsageTotals;
  /** The budget in force and the one set (budget.ts); absent in rows written before they existed. */
  budget?: { inForce: Budget; set: Budget };
  /** Sub-agents started and not ended (src/sessions/subagents.ts); absent in rows written before they existed. */
  openSubagents?: { subagent_id: string; parent_item_id: string | null }[];
}

/** The part of a session's row that changes as it runs. */
export interface SessionProgress {
  nativeSessionId: string | null;
  status: SessionStatus;
  snapshot: SessionSnapshot;
  updatedAt: string;
  endedAt: string | null;
  lastSequence: number;
}

/** A session as stored: the resolved create request (JSON) and its progress. */
export interface SessionRecord extends SessionProgress {
  id: string;
  agent: string;
  /** The resolved create request (agent defaults filled in, cwd absolute). */
  request: Record<string, unknown>;
  createdAt: string;
}

/** One stored event: its envelope JSON (with `"raw":null`) and the raw payload's JSON beside it. */
export interface StoredEvent {
  sequence: number;
  json: string;
  raw: string | null;
  /** UTF-8 bytes of json + raw when the caller knows them (the window measured them). */
  bytes?: number;
}

/** Why the store could not take writes (a full disk, a read-only data dir …); null when healthy. */
export type StoreFailure = { code: string; message: string; since: string } | null;

/**
 * One committed entry of the daemon-wide feed (docs/feed.md): an event of a session, or a session's
 * deletion. `cursor` is the store's position, given when the entry is staged and committed with
 * it: it only grows, is never given twice (the SQLite store keeps its high-water mark in the same
 * transaction as the rows), and is no part of the event (rule: One stamp).
 */
export interface FeedRecord {
  cursor: number;
  /** The session's id as clients know it (the events' `session_id`). */
  sessionId: string;
  agent: string;
  /** An event's JSON as stored (with `"raw":null`), or a deletion's data as JSON. */
  json: string;
  raw: string | null;
  deleted: boolean;
}

/** Why a session left the list, as its feed deletion entry says. */
export type DeletionReason = 'deleted' | 'forgotten' | 'retention';

/** What a session's deletion entry records (docs/feed.md). */
export interface Deletion {
  time: string;
  lastSequence: number;
  reason: DeletionReason;
  /** Keep its events readable through the feed until the deleted-retention passes (else dropped now). */
  keep: boolean;
}

/** Told that a session's events up to `sequence` are committed and may be shown to readers. */
export type CommitListener = (sequence: number) => void;

export interface EventStore {
  /** False for the memory store: events behind the window are gone, sessions die with the process. */
  readonly durable: boolean;
  /** The current failure, if writes are being refused (staged writes are kept and retried). */
  readonly failure: StoreFailure;
  /** Events staged but not yet committed (bounded by the caller while the store is failing). */
  readonly pendingEvents: number;
  /** The last feed cursor committed (0: none yet); a new daemon on the same store continues after it. */
  readonly feedHead: number;
  /** Told of every committed feed entry, in cursor order, once per commit. One listener (the FeedLog). */
  onFeed(listener: (records: FeedRecord[]) => void): void;
  /** Committed feed entries with cursor > after, oldest first, at most `limit` (keyset); [] in memory. */
  readFeed(after: number, limit: number): FeedRecord[];
  /** Where a session's commits are reported (its EventLog); one per session. */
  attach(sessionId: string, onCommitted: CommitListener): void;
  detach(sessionId: string): void;
  /** Told when the store stops (a failure) or resumes (null) taking writes. */
  onHealth(listener: (failure: StoreFailure) => void): void;
  /** Told of a record part written without what could not be serialised (write-batcher.ts); one listener. */
  onRecordDropped(listener: (sessionId: string, part: string, message: string) => void): void;

  /** Every stored session's record, without reading any event (start-up is lazy). */
  loadSessions(): SessionRecord[];
  /** A new session's row; committed with the next flush (before any of its events can be read). */
  createSession(record: SessionRecord): void;
  /** The session's changing fields, asked for once at the commit (so a busy tick computes them once). */
  updateSession(id: string, progress: () => SessionProgress): void;
  /** Stages one event. Sequences of a session arrive in order, 1, 2, 3 …, never reused. */
  appendEvent(sessionId: string, event: StoredEvent): void;
  /** Commits what is staged now. Never throws: a failure is reported through the listener. */
  flush(): void;
  /** Committed events of a session with sequence > after, oldest first, at most `limit` (keyset). */
  readEvents(sessionId: string, after: number, limit: number): StoredEvent[];
  /**
   * Removes a session from the list (DELETE, a failed create, a forgotten session): its deletion
   * entry goes into the feed after its last event; its events are dropped now, or with
   * `deletion.keep` kept for the feed until prune's `deletedBefore` passes.
   */
  deleteSession(id: string, deletion: Deletion): void;
  /**
   * Drops ended sessions older than the retention, deleted ones older than the deleted-retention
   * and, over `maxBytes`, the oldest ended ones. Returns the ids of listed sessions it dropped.
   */
  prune(options: { endedBefore: string; deletedBefore: string; maxBytes: number }): string[];
  /** Bytes the store takes on disk (0 in memory). */
  sizeBytes(): number;
  close(): void;
}

/** A deletion entry's data, as the feed serves it under `session_deleted` (docs/feed.md). */
export function deletionJson(sessionId: string, agent: string, d: Pick<Deletion, 'time' | 'lastSequence' | 'reason'>): string {
  return JSON.stringify({ session_id: sessionId, agent, time: d.time, last_sequence: d.lastSequence, reason: d.reason });
}
