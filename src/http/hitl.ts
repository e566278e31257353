// Answering what an agent asked (api.md "Permissions and questions"): a permission request, or a
// question, which the client answers or declines. Thin: validate, call the session, map. The body
// is read after the session is found: an unknown session is a 404 whatever the body says.
import { PermissionReplyRequest, QuestionReplyRequest, SessionRef } from '../schema/api.js';
import { empty } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { BODY_ERRORS, route, SESSION_ERRORS } from './route.js';

const PermissionPath = z.object({ id: SessionRef, permissionId: z.string().min(1) });
const QuestionPath = z.object({ id: SessionRef, questionId: z.string().min(1) });

const replyPermission = route({
  method: 'post', path: '/v1/sessions/:id/permissions/:permissionId/reply', operationId: 'replyPermission', tag: 'hitl', auth: 'bearer',
  summary: 'Answer a permission request',
  params: PermissionPath, body: PermissionReplyRequest,
  ok: { 204: empty('Reply delivered') }, errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'permission_not_found', 'permission_already_resolved', 'session_ended'],
  async handler(input, { sessions }) {
    const { params } = input;
    await sessions.get(params.id).replyPermission(params.permissionId, input.body.reply);
    return input.reply.code(204).send();
  },
});

const replyQuestion = route({
  method: 'post', path: '/v1/sessions/:id/questions/:questionId/reply', operationId: 'replyQuestion', tag: 'hitl', auth: 'bearer',
  summary: 'Answer a question',
  params: QuestionPath, body: QuestionReplyRequest,
  ok: { 204: empty('Answer delivered') }, errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'question_not_found', 'question_already_resolved', 'session_ended'],
  async handler(input, { sessions }) {
    const { params } = input;
    await sessions.get(params.id).replyQuestion(params.questionId, input.body.answers);
    return input.reply.code(204).send();
  },
});

const rejectQuestion = route({
  method: 'post', path: '/v1/sessions/:id/questions/:questionId/reject', operationId: 'rejectQuestion', tag: 'hitl', auth: 'bearer',
  summary: 'Decline a question',
  params: QuestionPath, body: 'none',
  ok: { 204: empty('Rejection delivered') }, errors: [...SESSION_ERRORS, 'question_not_found', 'question_already_resolved', 'session_ended'],
  async handler({ params, reply }, { sessions }) {
    await sessions.get(params.id).replyQuestion(params.questionId, null);
    return reply.code(204).send();
  },
});

export const hitlRoutes = [replyPermission, replyQuestion, rejectQuestion];
