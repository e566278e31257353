// Messages during a turn (queue, steer, interrupt) and forks: the request and response bodies of
// their routes and the data of their four events (docs/queue-steer-fork.md). The events are ours,
// like turn.started: the universal schema has no queue and no branches.
import { Attachment, SessionIdParam } from './session-id.js';
import { z } from './zod.js';

export const Delivery = z
  .enum(['queue', 'steer', 'interrupt'])
  .openapi('Delivery', {
    description:
      'What to do with a message while a turn runs: queue it as the next turn, give it to the running turn (agents with capability steer), or interrupt the running turn and start it next. Absent: 409 turn_in_progress while a turn runs.',
  });
export type Delivery = z.infer<typeof Delivery>;

/** How the daemon took a message sent with `delivery`. */
export const MessageAccepted = z
  .object({
    messageId: z.string().openapi({ description: 'The message id its events name (message.queued, turn.started, message.steered)', example: 'msg_q1x2' }),
    delivery: Delivery,
    status: z.enum(['started', 'queued', 'steered']).openapi({
      description: 'started: no turn was running, so it started one now; queued: it waits in the queue (an interrupt was sent for delivery interrupt); steered: the running turn has it',
    }),
    position: z.number().int().min(0).optional().openapi({ description: 'With status queued: its place in the queue, 0 first' }),
  })
  .openapi('MessageAccepted');
export type MessageAccepted = z.infer<typeof MessageAccepted>;

export const QueuedMessage = z
  .object({
    messageId: z.string(),
    message: z.string(),
    attachments: z.array(Attachment).optional(),
    delivery: z.enum(['queue', 'interrupt']),
    queuedAt: z.string(),
  })
  .openapi('QueuedMessage');
export type QueuedMessage = z.infer<typeof QueuedMessage>;

export const QueueList = z.object({ messages: z.array(QueuedMessage).openapi({ description: 'In the order they will start' }) }).openapi('QueueList');

export const ForkRequest = z
  .object({
    id: SessionIdParam.optional().openapi({ description: "The new session's id; the daemon picks one when absent" }),
    at: z
      .number()
      .int()
      .min(1)
      .optional()
      .openapi({ description: "The sequence of a turn.ended event of the parent: branch after that turn. Absent: after the parent's last turn" }),
  })
  .strict()
  .openapi('ForkRequest');
export type ForkRequest = z.infer<typeof ForkRequest>;

export const ForkedFrom = z
  .object({ sessionId: z.string(), sequence: z.number().int().min(0).openapi({ description: "The parent's last event the fork copied" }) })
  .openapi('ForkedFrom');
export type ForkedFrom = z.infer<typeof ForkedFrom>;

// ---- event data ------------------------------------------------------------------------------

export const MessageQueuedData = z
  .object({
    message_id: z.string(),
    message: z.string(),
    attachments: z.array(Attachment).optional(),
    delivery: z.enum(['queue', 'interrupt']),
    position: z.number().int().min(0),
  })
  .openapi('MessageQueuedData');
export type MessageQueuedData = z.infer<typeof MessageQueuedData>;

export const MessageDequeuedData = z
  .object({
    message_id: z.string(),
    reason: z.enum(['started', 'cancelled', 'session_ended']).openapi({
      description: 'started: its turn.started follows; cancelled: DELETE …/queue/{messageId}; session_ended: the session ended first',
    }),
  })
  .openapi('MessageDequeuedData');
export type MessageDequeuedData = z.infer<typeof MessageDequeuedData>;

export const MessageSteeredData = z
  .object({ message_id: z.string(), turn_id: z.string(), message: z.string(), attachments: z.array(Attachment).optional() })
  .openapi('MessageSteeredData');
export type MessageSteeredData = z.infer<typeof MessageSteeredData>;

export const SessionForkedData = z
  .object({
    forked_from: z.object({ session_id: z.string(), sequence: z.number().int().min(0) }),
    at_turn: z.string().nullable().openapi({ description: "The parent's turn the fork branched after (null: before any turn)" }),
  })
  .openapi('SessionForkedData');
export type SessionForkedData = z.infer<typeof SessionForkedData>;
