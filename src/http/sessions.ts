// Session lifecycle routes (docs/http-api.md, "Routes"): thin — validate, call one domain method, map.
import type { ErrorCode } from '../errors.js';
import { CreateSessionRequest, CreateSessionResponse, MessageRequest, SessionIdParam, SessionInfo, SessionList } from '../schema/api.js';
import { ForkRequest, MessageAccepted } from '../schema/delivery.js';
import { UpdateSessionRequest } from '../schema/usage.js';
import { empty, json } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { BODY_ERRORS, route, SESSION_ERRORS, SessionPath } from './route.js';
import { postMessageStream } from './turn-stream.js';

const createErrors: ErrorCode[] = [...BODY_ERRORS, 'invalid_cwd', 'too_many_sessions', 'agent_not_available', 'agent_start_failed', 'agent_install_failed'];

const createSessionWithId = route({
  method: 'post', path: '/v1/sessions/:id', operationId: 'createSessionWithId', tag: 'sessions', auth: 'bearer',
  summary: 'Create a session with a client-chosen id',
  description: 'Answers once the agent process is up and has said who it is, so `nativeSessionId` is known.',
  params: z.object({ id: SessionIdParam }), body: CreateSessionRequest,
  ok: { 200: json(CreateSessionResponse, 'Agent started') }, errors: [...createErrors, 'session_exists'],
  async handler({ params, body }, { sessions }) {
    const session = await sessions.create(params.id, body);
    const nativeSessionId = session.log.currentNativeSessionId;
    return { healthy: true, ...(nativeSessionId ? { nativeSessionId } : {}) };
  },
});

const createSession = route({
  method: 'post', path: '/v1/sessions', operationId: 'createSession', tag: 'sessions', auth: 'bearer',
  summary: 'Create a session; the daemon picks the id',
  body: CreateSessionRequest,
  ok: { 201: json(SessionInfo, 'Agent started') }, errors: createErrors,
  async handler({ body, reply }, { sessions }) {
    const session = await sessions.create(undefined, body);
    return reply.code(201).send(session.info());
  },
});

const listSessions = route({
  method: 'get', path: '/v1/sessions', operationId: 'listSessions', tag: 'sessions', auth: 'bearer',
  summary: 'All sessions, newest first',
  ok: { 200: json(SessionList, 'Sessions') },
  handler: async (_input, { sessions }) => ({ sessions: sessions.list() }),
});

const getSession = route({
  method: 'get', path: '/v1/sessions/:id', operationId: 'getSession', tag: 'sessions', auth: 'bearer',
  summary: 'One session',
  params: SessionPath,
  ok: { 200: json(SessionInfo, 'Session') }, errors: SESSION_ERRORS,
  handler: async ({ params }, { sessions }) => sessions.read(params.id).info(),
});

const updateSession = route({
  method: 'patch', path: '/v1/sessions/:id', operationId: 'updateSession', tag: 'sessions', auth: 'bearer',
  summary: "Change a session's budget",
  description: 'The new budget replaces the one in force (earlier raises included); a budget request already pending stays until answered. See docs/budgets.md.',
  params: SessionPath, body: UpdateSessionRequest,
  ok: { 200: json(SessionInfo, 'Session') }, errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'session_ended'],
  async handler({ params, body }, { sessions }) {
    const session = sessions.get(params.id);
    session.updateBudget(body.budget);
    return session.info();
  },
});

const deleteSession = route({
  method: 'delete', path: '/v1/sessions/:id', operationId: 'deleteSession', tag: 'sessions', auth: 'bearer',
  summary: 'Terminate (if live) and forget a session',
  params: SessionPath, body: 'none',
  ok: { 204: empty('Gone') }, errors: SESSION_ERRORS,
  async handler({ params, reply }, { sessions }) {
    await sessions.delete(params.id);
    return reply.code(204).send();
  },
});

const postMessage = route({
  method: 'post', path: '/v1/sessions/:id/messages', operationId: 'postMessage', tag: 'sessions', auth: 'bearer',
  summary: 'Send a message; starts a turn, or with `delivery` is queued, steered or starts after an interrupt',
  description: 'Without `delivery`, 204 once the turn is dispatched and 409 turn_in_progress while one runs. With `delivery` (queue, steer, interrupt), 202 saying what became of it.',
  params: SessionPath, body: MessageRequest,
  ok: { 204: empty('Turn dispatched'), 202: json(MessageAccepted, 'Message taken with its delivery') },
  errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'turn_in_progress', 'steer_unsupported', 'queue_full', 'session_ended', 'agent_start_failed', 'agent_io_failed', 'attachment_refused'],
  async handler(input, { sessions }) {
    const session = sessions.get(input.params.id);
    const accepted = await session.send(input.body);
    return accepted ? input.reply.code(202).send(accepted) : input.reply.code(204).send();
  },
});

const forkSession = route({
  method: 'post', path: '/v1/sessions/:id/fork', operationId: 'forkSession', tag: 'sessions', auth: 'bearer',
  summary: 'Branch a session: a new session with its own agent and a copy of the conversation up to a turn',
  description: "The new session's log starts with the parent's events up to the branch point, then `session.forked`. Agents say in their capabilities whether they fork at the end (`fork`) and at an earlier turn (`forkAtTurn`); anything else is 409 fork_unsupported.",
  params: SessionPath, body: ForkRequest, optionalBody: true,
  ok: { 201: json(SessionInfo, 'The new session') },
  errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'invalid_fork_point', 'fork_unsupported', 'turn_in_progress', 'session_exists', 'events_evicted', 'too_many_sessions', 'agent_start_failed'],
  async handler({ params, body, reply }, { sessions }) {
    const session = await sessions.fork(params.id, body);
    return reply.code(201).send(session.info());
  },
});

const interruptSession = route({
  method: 'post', path: '/v1/sessions/:id/interrupt', operationId: 'interruptSession', tag: 'sessions', auth: 'bearer',
  summary: 'Stop the running turn; the session stays usable',
  params: SessionPath, body: 'none',
  ok: { 202: empty('Interrupt sent; turn.ended (reason interrupted) follows in the stream') }, errors: [...SESSION_ERRORS, 'no_turn_running', 'session_ended'],
  async handler({ params, reply }, { sessions }) {
    await sessions.get(params.id).interrupt();
    return reply.code(202).send();
  },
});

const terminateSession = route({
  method: 'post', path: '/v1/sessions/:id/terminate', operationId: 'terminateSession', tag: 'sessions', auth: 'bearer',
  summary: 'Kill the agent; emits session.ended',
  params: SessionPath, body: 'none',
  ok: { 204: empty('Terminated (or had already ended)') }, errors: SESSION_ERRORS,
  async handler({ params, reply }, { sessions }) {
    await sessions.get(params.id).terminate();
    return reply.code(204).send();
  },
});

export const sessionRoutes = [
  createSessionWithId,
  createSession,
  listSessions,
  getSession,
  updateSession,
  deleteSession,
  postMessage,
  postMessageStream,
  interruptSession,
  forkSession,
  terminateSession,
];
