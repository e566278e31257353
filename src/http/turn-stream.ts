// POST /messages/stream: send a message and stream that turn's events, as SSE or (Accept:
// application/x-ndjson) NDJSON, closed at the turn's end or when it pauses (HITL), errors or the
// session ends. With abort_on_disconnect the turn is interrupted if the client goes away first.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics/registry.js';
import { MessageRequest, TurnStreamQuery } from '../schema/api.js';
import type { UniversalEvent } from '../schema/events.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { openSubscriber } from './events.js';
import { NDJSON_HEADERS, SSE_HEADERS } from './log-stream.js';
import { parse, wantsRaw } from './validate.js';

const TURN_STOPS = new Set<UniversalEvent['type']>([
  'turn.ended',
  'permission.requested',
  'question.requested',
  'session.ended',
  'error',
]);

export function turnStreamRoutes(app: FastifyInstance, sessions: SessionManager, config: Config, metrics?: Metrics): void {
  app.post('/v1/sessions/:id/messages/stream', { config: { query: true } }, async (req, reply) => {
    const session = sessions.get((req.params as { id: string }).id);
    const q = parse(TurnStreamQuery, req.query, 'query');
    const body = parse(MessageRequest, req.body, 'body');
    const ndjson = (req.headers.accept ?? '').includes('application/x-ndjson');
    const abortOnDisconnect = q.abort_on_disconnect ?? q.abortOnDisconnect ?? false;
    const stream = openSubscriber(session, config, reply.raw, {
      format: ndjson ? 'ndjson' : 'sse',
      after: session.log.lastSequence,
      includeRaw: wantsRaw(q),
      until: (event) => TURN_STOPS.has(event.type),
      onClose: (byClient) => {
        if (byClient && abortOnDisconnect && session.status !== 'idle' && session.status !== 'ended') {
          session.interrupt().catch(() => {}); // the turn may have ended in the meantime
        }
      },
    }, metrics);
    try {
      await session.send(body);
    } catch (err) {
      stream.dispose();
      throw err;
    }
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...(ndjson ? NDJSON_HEADERS : SSE_HEADERS) });
    stream.start();
  });
}
