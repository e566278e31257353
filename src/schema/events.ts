// The universal event envelope and every event's data (docs/events.md), plus the events that are
// ours: turn.started / turn.ended, the queue, steer and fork events (delivery.ts) and the sub-agent
// events (subagent.ts).
import { UniversalItem } from './content.js';
import { MessageDequeuedData, MessageQueuedData, MessageSteeredData, SessionForkedData } from './delivery.js';
import { inSubagent, SubagentEndedData, SubagentStartedData } from './subagent.js';
import { TurnEndedData, TurnStartedData } from './turn.js';
import { UsageUpdatedData } from './usage.js';
import { z } from './zod.js';

export * from './content.js';
export * from './turn.js';
export * from './usage.js';
export * from './subagent.js';
export { MessageDequeuedData, MessageQueuedData, MessageSteeredData, SessionForkedData } from './delivery.js';

const Metadata = z.record(z.string(), z.unknown());

export const SessionStartedData = z.object({ metadata: Metadata.optional() }).openapi('SessionStartedData');

export const StderrOutput = z
  .object({
    head: z.string().optional().openapi({ description: 'First 20 lines (or all of stderr when not truncated)' }),
    tail: z.string().optional().openapi({ description: 'Last 50 lines; present only when truncated' }),
    truncated: z.boolean(),
    total_lines: z.number().int().optional(),
  })
  .openapi('StderrOutput');
export type StderrOutput = z.infer<typeof StderrOutput>;

export const SessionEndReason = z.enum(['completed', 'error', 'terminated']);
export const SessionEndedData = z
  .object({
    reason: SessionEndReason,
    terminated_by: z.enum(['agent', 'daemon']),
    message: z.string().optional(),
    exit_code: z.number().int().nullable().optional(),
    stderr: StderrOutput.optional(),
  })
  .openapi('SessionEndedData');
export type SessionEndedData = z.infer<typeof SessionEndedData>;

export const ItemEventData = z.object({ item: UniversalItem, ...inSubagent }).openapi('ItemEventData');
export const ItemDeltaData = z
  .object({ item_id: z.string(), native_item_id: z.string().nullable(), delta: z.string(), ...inSubagent })
  .openapi('ItemDeltaData');

export const ErrorData = z
  .object({ message: z.string(), code: z.string().optional(), details: z.unknown().optional(), ...inSubagent })
  .openapi('ErrorData');
export const AgentUnparsedData = z
  .object({ error: z.string(), location: z.string(), raw_hash: z.string().optional() })
  .openapi('AgentUnparsedData');

export const PermissionStatus = z.enum(['requested', 'approved', 'denied']);
export const PermissionEventData = z
  .object({ permission_id: z.string(), action: z.string(), status: PermissionStatus, metadata: z.unknown().optional(), ...inSubagent })
  .openapi('PermissionEventData');
export type PermissionEventData = z.infer<typeof PermissionEventData>;

export const QuestionStatus = z.enum(['requested', 'answered', 'rejected']);
export const QuestionEventData = z
  .object({
    question_id: z.string(),
    prompt: z.string(),
    options: z.array(z.string()),
    status: QuestionStatus,
    response: z.string().optional(),
    ...inSubagent,
  })
  .openapi('QuestionEventData');
export type QuestionEventData = z.infer<typeof QuestionEventData>;

/** Every event type with the schema of its `data`. The one table the union is built from. */
export const EVENT_DATA = {
  'session.started': SessionStartedData,
  'session.ended': SessionEndedData,
  'turn.started': TurnStartedData,
  'turn.ended': TurnEndedData,
  'item.started': ItemEventData,
  'item.delta': ItemDeltaData,
  'item.completed': ItemEventData,
  'permission.requested': PermissionEventData,
  'permission.resolved': PermissionEventData,
  'question.requested': QuestionEventData,
  'question.resolved': QuestionEventData,
  error: ErrorData,
  'agent.unparsed': AgentUnparsedData,
  'message.queued': MessageQueuedData,
  'message.dequeued': MessageDequeuedData,
  'message.steered': MessageSteeredData,
  'session.forked': SessionForkedData,
  'usage.updated': UsageUpdatedData,
  'subagent.started': SubagentStartedData,
  'subagent.ended': SubagentEndedData,
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA)[T]>;

const envelope = {
  event_id: z.string().openapi({ example: 'evt_3k9x0q2m7c1v8b4n' }),
  sequence: z.number().int().positive().openapi({ description: 'Dense per-session sequence: 1, 2, 3 …' }),
  time: z.string().openapi({ description: 'RFC 3339 timestamp', example: '2026-01-27T19:10:11.123Z' }),
  session_id: z.string(),
  native_session_id: z.string().nullable(),
  source: z.enum(['agent', 'daemon']),
  synthetic: z.boolean(),
  // Any JSON value, never absent: `raw` is always present (null unless include_raw=true).
  raw: z
    .union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string(), z.number(), z.boolean()])
    .nullable()
    .openapi({ description: 'The native payload when include_raw=true; null otherwise' }),
};

function eventVariant<T extends EventType>(type: T) {
  const name = type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') + 'Event';
  return z.object({ ...envelope, type: z.literal(type), data: EVENT_DATA[type] }).openapi(name);
}

export const UniversalEvent = z
  .discriminatedUnion('type', [
    eventVariant('session.started'),
    eventVariant('session.ended'),
    eventVariant('turn.started'),
    eventVariant('turn.ended'),
    eventVariant('item.started'),
    eventVariant('item.delta'),
    eventVariant('item.completed'),
    eventVariant('permission.requested'),
    eventVariant('permission.resolved'),
    eventVariant('question.requested'),
    eventVariant('question.resolved'),
    eventVariant('error'),
    eventVariant('agent.unparsed'),
    eventVariant('message.queued'),
    eventVariant('message.dequeued'),
    eventVariant('message.steered'),
    eventVariant('session.forked'),
    eventVariant('usage.updated'),
    eventVariant('subagent.started'),
    eventVariant('subagent.ended'),
  ])
  .openapi('UniversalEvent');
export type UniversalEvent = z.infer<typeof UniversalEvent>;

/** What the log is handed: everything but the fields only EventLog.append may stamp. */
export type EventDraftOf<T extends EventType> = {
  type: T;
  data: EventData<T>;
  source: 'agent' | 'daemon';
  synthetic: boolean;
};
export type PendingEvent = { [T in EventType]: EventDraftOf<T> }[EventType];
