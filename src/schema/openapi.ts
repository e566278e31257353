// The OpenAPI 3.1 document, generated from the same zod schemas that validate requests and type
// the code (rule: Schema is the type). `npm run openapi` writes it to openapi.json; a test fails on drift and
// another runs `redocly lint` on it. operationIds are a contract: generated clients (client/) key
// their operations by them, so renaming one is a breaking change.
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '../errors.js';
import {
  AgentIdParam,
  AgentList,
  ModelsResponse,
  ModesResponse,
  CreateSessionRequest,
  CreateSessionResponse,
  EventsResponse,
  HealthResponse,
  InstallAgentRequest,
  MessageRequest,
  PermissionReplyRequest,
  QuestionReplyRequest,
  SessionIdParam,
  SessionInfo,
  SessionList,
} from './api.js';
import { UniversalEvent } from './events.js';
import { body, draining, empty, json, problems, SECURITY_SCHEMES, securityOf, sseOrNdjsonStream, sseStream } from './openapi-responses.js';
import { z } from './zod.js';

const registry = new OpenAPIRegistry();
registry.register('UniversalEvent', UniversalEvent);
for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) registry.registerComponent('securitySchemes', name, scheme);

const TAGS = [
  { name: 'agents', description: 'The agent CLIs this daemon can run: discovery, install, models and modes' },
  { name: 'daemon', description: 'Health, metrics and this document' },
  { name: 'events', description: "Reading a session's event log: poll, or stream it with SSE" },
  { name: 'hitl', description: 'Answering the permission requests and questions an agent asks' },
  { name: 'sessions', description: 'Creating, messaging, stopping and forgetting sessions' },
];
type Tag = 'agents' | 'daemon' | 'events' | 'hitl' | 'sessions';

type Operation = Omit<RouteConfig, 'responses' | 'tags' | 'security'> & {
  operationId: string;
  tag: Tag;
  /** The success responses; problem+json errors come from `errors` plus the cross-cutting codes. */
  ok: NonNullable<RouteConfig['responses']>;
  errors?: readonly ErrorCode[];
};

function route({ tag, ok, errors = [], ...config }: Operation): void {
  registry.registerPath({
    ...config,
    tags: [tag],
    security: securityOf(config.path),
    responses: { ...ok, ...problems(config.method, config.path, errors) },
  });
}

const id = z.object({ id: SessionIdParam });
const rawQuery = {
  include_raw: z.boolean().optional().openapi({ description: 'Fill `raw` with the native payload (alias: includeRaw)' }),
};
const offset = z.number().int().min(0).optional().openapi({ description: 'Exclusive sequence cursor (default 0): events with a greater sequence follow' });
const sessionErrors: ErrorCode[] = ['session_not_found'];
const bodyErrors: ErrorCode[] = ['malformed_json', 'unsupported_media_type', 'body_too_large'];
const createErrors: ErrorCode[] = [...bodyErrors, 'invalid_cwd', 'too_many_sessions', 'agent_not_available', 'agent_start_failed', 'agent_install_failed'];

route({
  operationId: 'getHealth', tag: 'daemon', method: 'get', path: '/v1/health', summary: 'Liveness and version; never needs the token',
  ok: { 200: json(HealthResponse, 'Healthy: `{status: "ok"}`'), 503: draining },
});
route({
  operationId: 'getOpenApi', tag: 'daemon', method: 'get', path: '/openapi.json', summary: 'This document; its `servers` entry is the daemon\'s own address',
  ok: { 200: json(z.record(z.string(), z.unknown()), 'OpenAPI 3.1 document') },
});
route({
  operationId: 'getMetrics', tag: 'daemon', method: 'get', path: '/metrics', summary: 'Prometheus metrics: sessions, turns, HITL, streams, agent processes, installs, HTTP (docs/operations.md)',
  ok: { 200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: z.string() } } } },
});

route({
  operationId: 'createSessionWithId', tag: 'sessions', method: 'post', path: '/v1/sessions/{id}', summary: 'Create a session with a client-chosen id',
  description: 'Answers once the agent process is up and has said who it is, so `nativeSessionId` is known.',
  request: { params: id, ...body(CreateSessionRequest) },
  ok: { 200: json(CreateSessionResponse, 'Agent started') }, errors: [...createErrors, 'session_exists'],
});
route({
  operationId: 'createSession', tag: 'sessions', method: 'post', path: '/v1/sessions', summary: 'Create a session; the daemon picks the id',
  request: body(CreateSessionRequest),
  ok: { 201: json(SessionInfo, 'Agent started') }, errors: createErrors,
});
route({ operationId: 'listSessions', tag: 'sessions', method: 'get', path: '/v1/sessions', summary: 'All sessions, newest first', ok: { 200: json(SessionList, 'Sessions') } });
route({ operationId: 'getSession', tag: 'sessions', method: 'get', path: '/v1/sessions/{id}', summary: 'One session', request: { params: id }, ok: { 200: json(SessionInfo, 'Session') }, errors: sessionErrors });
route({
  operationId: 'deleteSession', tag: 'sessions', method: 'delete', path: '/v1/sessions/{id}', summary: 'Terminate (if live) and forget a session',
  request: { params: id }, ok: { 204: empty('Gone') }, errors: sessionErrors,
});
route({
  operationId: 'postMessage', tag: 'sessions', method: 'post', path: '/v1/sessions/{id}/messages', summary: 'Send a message; starts a turn',
  request: { params: id, ...body(MessageRequest) },
  ok: { 204: empty('Turn dispatched') }, errors: [...sessionErrors, ...bodyErrors, 'turn_in_progress', 'session_ended', 'agent_start_failed', 'agent_io_failed'],
});
route({
  operationId: 'postMessageStream', tag: 'sessions', method: 'post', path: '/v1/sessions/{id}/messages/stream',
  summary: "Send a message and stream the turn's events (SSE, or NDJSON with Accept: application/x-ndjson)",
  description: 'The stream starts with the turn\'s turn.started and is closed after turn.ended, permission.requested, question.requested, error or session.ended; follow the rest with streamEventsSse.',
  request: {
    params: id, ...body(MessageRequest),
    query: z.object({ ...rawQuery, abort_on_disconnect: z.boolean().optional().openapi({ description: 'Interrupt the turn if the client disconnects before it ends (alias: abortOnDisconnect)' }) }),
  },
  ok: { 200: sseOrNdjsonStream("This turn's events.") },
  errors: [...sessionErrors, ...bodyErrors, 'turn_in_progress', 'session_ended', 'too_many_subscribers', 'agent_start_failed', 'agent_io_failed'],
});
route({
  operationId: 'interruptSession', tag: 'sessions', method: 'post', path: '/v1/sessions/{id}/interrupt', summary: 'Stop the running turn; the session stays usable',
  request: { params: id }, ok: { 202: empty('Interrupt sent; turn.ended (reason interrupted) follows in the stream') }, errors: [...sessionErrors, 'no_turn_running', 'session_ended'],
});
route({
  operationId: 'terminateSession', tag: 'sessions', method: 'post', path: '/v1/sessions/{id}/terminate', summary: 'Kill the agent; emits session.ended',
  request: { params: id }, ok: { 204: empty('Terminated (or had already ended)') }, errors: sessionErrors,
});

route({
  operationId: 'getEvents', tag: 'events', method: 'get', path: '/v1/sessions/{id}/events', summary: 'Poll events after an offset',
  request: { params: id, query: z.object({ offset, limit: z.number().int().min(1).max(10000).optional().openapi({ description: 'Default 1000' }), ...rawQuery }) },
  ok: { 200: json(EventsResponse, 'A page of events') }, errors: [...sessionErrors, 'events_evicted', 'offset_ahead'],
});
route({
  operationId: 'streamEventsSse', tag: 'events', method: 'get', path: '/v1/sessions/{id}/events/sse', summary: 'Replay events after the cursor, then stream live',
  request: {
    params: id,
    query: z.object({ offset, ...rawQuery }),
    headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume cursor (what a reconnecting EventSource sends); wins over offset' }) }),
  },
  ok: { 200: sseStream('The backlog after the cursor, then live events.') },
  errors: [...sessionErrors, 'events_evicted', 'offset_ahead', 'too_many_subscribers'],
});

const permissionParams = z.object({ id: SessionIdParam, permission_id: z.string() });
route({
  operationId: 'replyPermission', tag: 'hitl', method: 'post', path: '/v1/sessions/{id}/permissions/{permission_id}/reply', summary: 'Answer a permission request',
  request: { params: permissionParams, ...body(PermissionReplyRequest) },
  ok: { 204: empty('Reply delivered') }, errors: [...sessionErrors, ...bodyErrors, 'permission_not_found', 'permission_already_resolved', 'session_ended'],
});
const questionParams = z.object({ id: SessionIdParam, question_id: z.string() });
route({
  operationId: 'replyQuestion', tag: 'hitl', method: 'post', path: '/v1/sessions/{id}/questions/{question_id}/reply', summary: 'Answer a question',
  request: { params: questionParams, ...body(QuestionReplyRequest) },
  ok: { 204: empty('Answer delivered') }, errors: [...sessionErrors, ...bodyErrors, 'question_not_found', 'question_already_resolved', 'session_ended'],
});
route({
  operationId: 'rejectQuestion', tag: 'hitl', method: 'post', path: '/v1/sessions/{id}/questions/{question_id}/reject', summary: 'Decline a question',
  request: { params: questionParams },
  ok: { 204: empty('Rejection delivered') }, errors: [...sessionErrors, 'question_not_found', 'question_already_resolved', 'session_ended'],
});

route({ operationId: 'listAgents', tag: 'agents', method: 'get', path: '/v1/agents', summary: 'Every agent: installed?, version, path, credentials, capabilities', ok: { 200: json(AgentList, 'Agents') } });
route({
  operationId: 'installAgent', tag: 'agents', method: 'post', path: '/v1/agents/{agent}/install', summary: 'Install the pinned (or an exact) agent CLI version from the npm registry into the agents dir',
  description: 'Concurrent requests for one agent share one install. A failure answers 502 agent_install_failed with npm\'s stderr tail in `stderrTail`. The body is optional.',
  request: { params: AgentIdParam, body: { required: false, content: { 'application/json': { schema: InstallAgentRequest } } } },
  ok: { 204: empty('Installed (or a complete install was already there)') }, errors: [...bodyErrors, 'agent_install_failed'],
});
route({
  operationId: 'getAgentModels', tag: 'agents', method: 'get', path: '/v1/agents/{agent}/models', summary: "The models a session of this agent can use (asked of the agent CLI, cached; else the build's built-in list)",
  request: { params: AgentIdParam }, ok: { 200: json(ModelsResponse, 'Models') }, errors: ['agent_not_available'],
});
route({
  operationId: 'getAgentModes', tag: 'agents', method: 'get', path: '/v1/agents/{agent}/modes', summary: 'The agentMode and permissionMode values this agent accepts',
  request: { params: AgentIdParam }, ok: { 200: json(ModesResponse, 'Modes') }, errors: ['agent_not_available'],
});

export function buildOpenApi(version: string): Record<string, unknown> {
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'agentwire',
      version,
      description: 'Runs coding-agent CLIs and serves their output as one universal, sequenced event stream.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:2468', description: 'The default listen address' }],
    tags: TAGS,
  }) as unknown as Record<string, unknown>;
}
