// POST /messages/stream: send a message and stream that turn's events, as SSE or (Accept:
// application/x-ndjson) NDJSON, closed at the turn's end or when it pauses (HITL), errors or the
// session ends. With abort_on_disconnect the turn is interrupted if the client goes away first.
import { MessageRequest, TurnStreamQuery } from '../schema/api.js';
import type { MessageAccepted } from '../schema/delivery.js';
import type { UniversalEvent } from '../schema/events.js';
import { sseOrNdjsonStream } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { openSubscriber, RAW_QUERY } from './events.js';
import { NDJSON_HEADERS, SSE_HEADERS } from './log-stream.js';
import { BODY_ERRORS, route, SESSION_ERRORS, SessionPath } from './route.js';
import { wantsRaw } from './validate.js';

/**
 * Where the stream of a message sent with a delivery ends: at the end (or pause) of the turn that
 * runs it, which for a queued message comes after the running turn's; or when it leaves the queue
 * without starting, or the session ends. The message is known once send resolved, before the
 * stream's first event is written.
 */
function turnStops(accepted: () => MessageAccepted | undefined): (event: UniversalEvent) => boolean {
  let turn: string | undefined;
  return (event) => {
    const m = accepted();
    if (event.type === 'session.ended') return true;
    if (!m) return false;
    if (event.type === 'message.dequeued') return event.data.message_id === m.messageId && event.data.reason !== 'started';
    if (event.type === 'turn.started' && event.data.message_id === m.messageId) turn = event.data.turn_id;
    if (event.type === 'message.steered' && event.data.message_id === m.messageId) turn = event.data.turn_id;
    if (turn === undefined) return false;
    if (event.type === 'turn.ended') return event.data.turn_id === turn;
    return TURN_STOPS.has(event.type);
  };
}

const TURN_STOPS = new Set<UniversalEvent['type']>([
  'turn.ended',
  'permission.requested',
  'question.requested',
  'session.ended',
  'error',
]);

export const postMessageStream = route({
  method: 'post', path: '/v1/sessions/:id/messages/stream', operationId: 'postMessageStream', tag: 'sessions', auth: 'bearer',
  summary: "Send a message and stream the turn's events (SSE, or NDJSON with Accept: application/x-ndjson)",
  description: 'The stream starts with the turn\'s turn.started and is closed after turn.ended, permission.requested, question.requested, error or session.ended; follow the rest with streamEventsSse. With `delivery`, it runs from the moment the message is taken until the turn that runs it ends (for a queued message, the running turn comes first).',
  params: SessionPath,
  query: {
    schema: TurnStreamQuery,
    document: z.object({ ...RAW_QUERY, abort_on_disconnect: z.boolean().optional().openapi({ description: 'Interrupt the turn if the client disconnects before it ends (alias: abortOnDisconnect)' }) }),
  },
  body: MessageRequest,
  ok: { 200: sseOrNdjsonStream("This turn's events.") },
  errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'turn_in_progress', 'steer_unsupported', 'queue_full', 'session_ended', 'too_many_subscribers', 'agent_start_failed', 'agent_io_failed', 'attachment_refused'],
  async handler(input, { sessions, config, metrics }) {
    const { req, reply } = input;
    const session = sessions.get(input.params.id);
    const query = input.query;
    const message = input.body;
    const ndjson = (req.headers.accept ?? '').includes('application/x-ndjson');
    const abortOnDisconnect = query.abort_on_disconnect ?? query.abortOnDisconnect ?? false;
    let accepted: MessageAccepted | undefined;
    const stops = turnStops(() => accepted);
    const stream = openSubscriber(session, config, reply.raw, {
      format: ndjson ? 'ndjson' : 'sse',
      after: session.log.lastSequence,
      includeRaw: wantsRaw(query),
      until: message.delivery ? stops : (event) => TURN_STOPS.has(event.type),
      onClose: (byClient) => {
        if (byClient && abortOnDisconnect && session.status !== 'idle' && session.status !== 'ended') {
          session.interrupt().catch(() => {}); // the turn may have ended in the meantime
        }
      },
    }, metrics);
    try {
      accepted = await session.send(message);
    } catch (err) {
      stream.dispose();
      throw err;
    }
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...(ndjson ? NDJSON_HEADERS : SSE_HEADERS) });
    stream.start();
  },
});
