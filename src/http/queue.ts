// A session's message queue (docs/queue-steer-fork.md): list what waits, cancel one message. Thin:
// the queue itself is src/sessions/message-queue.ts; messages join it through POST …/messages.
import { SessionRef } from '../schema/api.js';
import { QueueList } from '../schema/delivery.js';
import { empty, json } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { route, SESSION_ERRORS, SessionPath } from './route.js';

const listQueue = route({
  method: 'get', path: '/v1/sessions/:id/queue', operationId: 'listQueue', tag: 'sessions', auth: 'bearer',
  summary: "The messages waiting to start as the session's next turns, in order",
  params: SessionPath,
  ok: { 200: json(QueueList, 'Queued messages') }, errors: SESSION_ERRORS,
  handler: async ({ params }, { sessions }) => ({ messages: sessions.read(params.id).queue.list() }),
});

const cancelQueued = route({
  method: 'delete', path: '/v1/sessions/:id/queue/:messageId', operationId: 'cancelQueuedMessage', tag: 'sessions', auth: 'bearer',
  summary: 'Take a message out of the queue before it starts (message.dequeued, reason cancelled)',
  params: z.object({ id: SessionRef, messageId: z.string().min(1) }), body: 'none',
  ok: { 204: empty('Cancelled') }, errors: [...SESSION_ERRORS, 'queued_message_not_found'],
  async handler({ params, reply }, { sessions }) {
    sessions.get(params.id).queue.cancel(params.messageId);
    return reply.code(204).send();
  },
});

export const queueRoutes = [listQueue, cancelQueued];
