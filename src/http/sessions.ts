// Session lifecycle routes (docs/http-api.md, "Routes"): thin — validate, call one domain method, map.
import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../sessions/session-manager.js';
import {
  CreateSessionRequest,
  MessageRequest,
  PermissionReplyRequest,
  QuestionReplyRequest,
  SessionIdParam,
} from '../schema/api.js';
import { z } from '../schema/zod.js';
import { noBody, parse } from './validate.js';

const IdParams = z.object({ id: SessionIdParam });
const PermissionParams = z.object({ id: z.string(), permissionId: z.string().min(1) });
const QuestionParams = z.object({ id: z.string(), questionId: z.string().min(1) });

export function sessionRoutes(app: FastifyInstance, sessions: SessionManager): void {
  app.post('/v1/sessions/:id', async (req) => {
    const { id } = parse(IdParams, req.params, 'path');
    const session = await sessions.create(id, parse(CreateSessionRequest, req.body, 'body'));
    const nativeSessionId = session.log.currentNativeSessionId;
    return { healthy: true, ...(nativeSessionId ? { nativeSessionId } : {}) };
  });

  app.post('/v1/sessions', async (req, reply) => {
    const session = await sessions.create(undefined, parse(CreateSessionRequest, req.body, 'body'));
    return reply.code(201).send(session.info());
  });

  app.get('/v1/sessions', async () => ({ sessions: sessions.list() }));

  app.get('/v1/sessions/:id', async (req) => sessions.get((req.params as { id: string }).id).info());

  app.delete('/v1/sessions/:id', async (req, reply) => {
    noBody(req.body);
    await sessions.delete((req.params as { id: string }).id);
    return reply.code(204).send();
  });

  app.post('/v1/sessions/:id/messages', async (req, reply) => {
    const session = sessions.get((req.params as { id: string }).id);
    await session.send(parse(MessageRequest, req.body, 'body'));
    return reply.code(204).send();
  });

  app.post('/v1/sessions/:id/interrupt', async (req, reply) => {
    noBody(req.body);
    await sessions.get((req.params as { id: string }).id).interrupt();
    return reply.code(202).send();
  });

  app.post('/v1/sessions/:id/terminate', async (req, reply) => {
    noBody(req.body);
    await sessions.get((req.params as { id: string }).id).terminate();
    return reply.code(204).send();
  });

  app.post('/v1/sessions/:id/permissions/:permissionId/reply', async (req, reply) => {
    const { id, permissionId } = parse(PermissionParams, req.params, 'path');
    await sessions.get(id).replyPermission(permissionId, parse(PermissionReplyRequest, req.body, 'body').reply);
    return reply.code(204).send();
  });

  app.post('/v1/sessions/:id/questions/:questionId/reply', async (req, reply) => {
    const { id, questionId } = parse(QuestionParams, req.params, 'path');
    await sessions.get(id).replyQuestion(questionId, parse(QuestionReplyRequest, req.body, 'body').answers);
    return reply.code(204).send();
  });

  app.post('/v1/sessions/:id/questions/:questionId/reject', async (req, reply) => {
    const { id, questionId } = parse(QuestionParams, req.params, 'path');
    noBody(req.body);
    await sessions.get(id).replyQuestion(questionId, null);
    return reply.code(204).send();
  });
}
