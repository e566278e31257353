// Friendly names for the generated OpenAPI types (openapi.ts, from the daemon's openapi.json):
// the daemon's schemas are the one source, this file only names them.
import type { components } from './openapi.js';

type Schemas = components['schemas'];

export type UniversalEvent = Schemas['UniversalEvent'];
/** The event of one `type`: `EventOf<'turn.ended'>`. */
export type EventOf<T extends UniversalEvent['type']> = Extract<UniversalEvent, { type: T }>;
export type EventType = UniversalEvent['type'];
export type UniversalItem = Schemas['UniversalItem'];
export type ContentPart = Schemas['ContentPart'];
export type Problem = Schemas['Problem'];
/** The daemon's error catalogue (docs/http-api.md "Errors"). */
export type ProblemCode = Problem['code'];
export type TurnEndReason = Schemas['TurnEndReason'];
export type TurnEndedMetadata = Schemas['TurnEndedMetadata'];
export type TokenUsage = Schemas['TokenUsage'];
/** A session's running usage totals (SessionInfo.usage, usage.updated's `totals`). */
export type UsageTotals = Schemas['UsageTotals'];
export type UsageUpdatedData = Schemas['UsageUpdatedData'];
/** `{max_tokens?, max_cost_usd?, max_turns?}` (docs/budgets.md). */
export type Budget = Schemas['Budget'];

export type CreateSessionRequest = Schemas['CreateSessionRequest'];
export type CreateSessionResponse = Schemas['CreateSessionResponse'];
export type SessionInfo = Schemas['SessionInfo'];
export type SessionStatus = Schemas['SessionStatus'];
export type MessageRequest = Schemas['MessageRequest'];
export type Attachment = Schemas['Attachment'];
/** What to do with a message sent while a turn runs: `queue`, `steer` or `interrupt` (docs/queue-steer-fork.md). */
export type Delivery = Schemas['Delivery'];
/** The answer to a message sent with a delivery: `{messageId, delivery, status, position?}`. */
export type MessageAccepted = Schemas['MessageAccepted'];
/** One message waiting in a session's queue (GET …/queue). */
export type QueuedMessage = Schemas['QueuedMessage'];
export type ForkRequest = Schemas['ForkRequest'];
export type ForkedFrom = Schemas['ForkedFrom'];
export type EventsResponse = Schemas['EventsResponse'];
/** One entry of the daemon-wide feed: `{cursor, event}` or `{cursor, session_deleted}`. */
export type FeedEntry = Schemas['FeedEntry'];
export type FeedEventEntry = Schemas['FeedEventEntry'];
export type FeedDeletionEntry = Schemas['FeedDeletionEntry'];
export type SessionDeleted = Schemas['SessionDeleted'];
export type FeedResponse = Schemas['FeedResponse'];

export type AgentId = Schemas['AgentId'];
export type AgentInfo = Schemas['AgentInfo'];
export type InstallAgentRequest = Schemas['InstallAgentRequest'];
export type ModelsResponse = Schemas['ModelsResponse'];
export type ModesResponse = Schemas['ModesResponse'];
export type HealthResponse = Schemas['HealthResponse'];

/** POST /stream's body: a chat dispatch (docs/stream.md). */
export type StreamRequest = Schemas['StreamRequest'];
/** One line of POST /stream: `log`, `step`, `result` or `error`. */
export type StreamLine = Schemas['StreamLine'];
export type StreamErrorCode = Schemas['StreamErrorCode'];

export type PermissionReply = Schemas['PermissionReplyRequest']['reply'];
/** What a `permission.requested` event asks: its `data`. */
export type PermissionRequest = Schemas['PermissionEventData'];
/** What a `question.requested` event asks: its `data`. */
export type QuestionRequest = Schemas['QuestionEventData'];
/** One array of chosen options per question asked. */
export type QuestionAnswers = Schemas['QuestionReplyRequest']['answers'];

/** Every call takes these; defaults are in docs/client.md. */
export interface CallOptions {
  /** Aborts the call; it then rejects with AgentwireError code `aborted`. */
  signal?: AbortSignal;
  /** Milliseconds until the answer (its head, for streams); rejects with code `timeout`. 0: none. */
  timeoutMs?: number;
}
