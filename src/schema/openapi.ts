// The OpenAPI 3.1 document, generated from the same zod schemas that validate requests and type
// the code (design rule 8). `npm run openapi` writes it to openapi.json; a test fails on drift.
import { OpenApiGeneratorV31, OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { CATALOGUE, type ErrorCode } from '../errors.js';
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
  Problem,
  QuestionReplyRequest,
  SessionIdParam,
  SessionInfo,
  SessionList,
} from './api.js';
import { UniversalEvent } from './events.js';
import { z } from './zod.js';

const registry = new OpenAPIRegistry();
registry.register('UniversalEvent', UniversalEvent);

const id = z.object({ id: SessionIdParam });
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const empty = (description: string) => ({ description });
const body = (schema: z.ZodType) => ({ body: { content: { 'application/json': { schema } } } });

const rawQuery = {
  include_raw: z.boolean().optional().openapi({ description: 'Fill `raw` with the native payload (alias: includeRaw)' }),
};
const eventStream = {
  description:
    'Server-sent events: `retry:` once, then one frame per event with `id: <sequence>` and a single `data:` line holding a UniversalEvent (no `event:` line); `: keep-alive` comments every 15 s.',
  content: { 'text/event-stream': { schema: UniversalEvent } },
};

function problems(...codes: ErrorCode[]): NonNullable<RouteConfig['responses']> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal_error' as const]) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      { description: list.map((c) => `\`${c}\`: ${CATALOGUE[c].title}`).join('; '), content: { 'application/problem+json': { schema: Problem } } },
    ]),
  );
}

const common: ErrorCode[] = ['invalid_request', 'not_found'];
const sessionErrors: ErrorCode[] = [...common, 'session_not_found'];
const bodyErrors: ErrorCode[] = ['malformed_json', 'unsupported_media_type', 'body_too_large'];

function route(config: RouteConfig): void {
  registry.registerPath(config);
}

route({ method: 'get', path: '/v1/health', summary: 'Liveness and version', responses: { 200: json(HealthResponse, 'Healthy') } });
route({ method: 'get', path: '/openapi.json', summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } } });

route({
  method: 'post', path: '/v1/sessions/{id}', summary: 'Create a session with a client-chosen id', request: { params: id, ...body(CreateSessionRequest) },
  responses: { 200: json(CreateSessionResponse, 'Agent started'), ...problems('store_unavailable', ...common, ...bodyErrors, 'invalid_cwd', 'session_exists', 'too_many_sessions', 'agent_not_available', 'agent_start_failed', 'agent_install_failed', 'shutting_down') },
});
route({
  method: 'post', path: '/v1/sessions', summary: 'Create a session; the daemon picks the id', request: body(CreateSessionRequest),
  responses: { 201: json(SessionInfo, 'Agent started'), ...problems('store_unavailable', ...common, ...bodyErrors, 'invalid_cwd', 'too_many_sessions', 'agent_not_available', 'agent_start_failed', 'agent_install_failed', 'shutting_down') },
});
route({ method: 'get', path: '/v1/sessions', summary: 'All sessions, newest first', responses: { 200: json(SessionList, 'Sessions') } });
route({ method: 'get', path: '/v1/sessions/{id}', summary: 'One session', request: { params: id }, responses: { 200: json(SessionInfo, 'Session'), ...problems(...sessionErrors) } });
route({ method: 'delete', path: '/v1/sessions/{id}', summary: 'Terminate (if live) and forget a session', request: { params: id }, responses: { 204: empty('Gone'), ...problems('store_unavailable', ...sessionErrors) } });
route({
  method: 'post', path: '/v1/sessions/{id}/messages', summary: 'Send a message; starts a turn', request: { params: id, ...body(MessageRequest) },
  responses: { 204: empty('Turn dispatched'), ...problems('store_unavailable', ...sessionErrors, ...bodyErrors, 'turn_in_progress', 'session_ended', 'agent_start_failed', 'agent_io_failed') },
});
route({
  method: 'post', path: '/v1/sessions/{id}/messages/stream',
  summary: "Send a message and stream the turn's events (SSE, or NDJSON with Accept: application/x-ndjson)",
  description: 'Closed after turn.ended, permission.requested, question.requested, error or session.ended.',
  request: {
    params: id, ...body(MessageRequest),
    query: z.object({ ...rawQuery, abort_on_disconnect: z.boolean().optional().openapi({ description: 'Interrupt the turn if the client disconnects before it ends' }) }),
  },
  responses: {
    200: { description: eventStream.description, content: { ...eventStream.content, 'application/x-ndjson': { schema: UniversalEvent } } },
    ...problems('store_unavailable', ...sessionErrors, ...bodyErrors, 'turn_in_progress', 'session_ended', 'too_many_subscribers', 'agent_start_failed', 'agent_io_failed'),
  },
});
route({ method: 'post', path: '/v1/sessions/{id}/interrupt', summary: 'Stop the running turn', request: { params: id }, responses: { 202: empty('Interrupt sent'), ...problems('store_unavailable', ...sessionErrors, 'no_turn_running', 'session_ended') } });
route({ method: 'post', path: '/v1/sessions/{id}/terminate', summary: 'Kill the agent; emits session.ended', request: { params: id }, responses: { 204: empty('Terminated'), ...problems('store_unavailable', ...sessionErrors) } });
route({
  method: 'get', path: '/v1/sessions/{id}/events', summary: 'Poll events after an offset',
  request: { params: id, query: z.object({ offset: z.number().int().min(0).optional().openapi({ description: 'Exclusive sequence cursor (default 0)' }), limit: z.number().int().min(1).max(10000).optional().openapi({ description: 'Default 1000' }), ...rawQuery }) },
  responses: { 200: json(EventsResponse, 'A page of events'), ...problems(...sessionErrors, 'events_evicted', 'offset_ahead') },
});
route({
  method: 'get', path: '/v1/sessions/{id}/events/sse', summary: 'Replay events after the cursor, then stream live',
  request: {
    params: id,
    query: z.object({ offset: z.number().int().min(0).optional(), ...rawQuery, token: z.string().optional() }),
    headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume cursor; wins over offset' }) }),
  },
  responses: { 200: eventStream, ...problems(...sessionErrors, 'events_evicted', 'offset_ahead', 'too_many_subscribers') },
});
route({ method: 'get', path: '/v1/agents', summary: 'Every agent: installed?, version, path, credentials, capabilities', responses: { 200: json(AgentList, 'Agents'), ...problems('shutting_down') } });
route({
  method: 'post', path: '/v1/agents/{agent}/install', summary: 'Install the pinned (or an exact) agent CLI version from the npm registry into the agents dir',
  description: 'Concurrent requests for one agent share one install. A failure answers 502 agent_install_failed with npm\'s stderr tail in `stderrTail`.',
  request: { params: AgentIdParam, ...body(InstallAgentRequest) },
  responses: { 204: empty('Installed (or a complete install was already there)'), ...problems('store_unavailable', ...common, ...bodyErrors, 'agent_install_failed', 'shutting_down') },
});
route({
  method: 'get', path: '/v1/agents/{agent}/models', summary: "The models a session of this agent can use (asked of the agent CLI, cached; else the build's built-in list)",
  request: { params: AgentIdParam },
  responses: { 200: json(ModelsResponse, 'Models'), ...problems(...common, 'agent_not_available', 'shutting_down') },
});
route({
  method: 'get', path: '/v1/agents/{agent}/modes', summary: 'The agentMode and permissionMode values this agent accepts',
  request: { params: AgentIdParam },
  responses: { 200: json(ModesResponse, 'Modes'), ...problems(...common, 'agent_not_available', 'shutting_down') },
});
const permissionParams = z.object({ id: SessionIdParam, permission_id: z.string() });
route({
  method: 'post', path: '/v1/sessions/{id}/permissions/{permission_id}/reply', summary: 'Answer a permission request', request: { params: permissionParams, ...body(PermissionReplyRequest) },
  responses: { 204: empty('Reply delivered'), ...problems('store_unavailable', ...sessionErrors, ...bodyErrors, 'permission_not_found', 'permission_already_resolved', 'session_ended') },
});
const questionParams = z.object({ id: SessionIdParam, question_id: z.string() });
route({
  method: 'post', path: '/v1/sessions/{id}/questions/{question_id}/reply', summary: 'Answer a question', request: { params: questionParams, ...body(QuestionReplyRequest) },
  responses: { 204: empty('Answer delivered'), ...problems('store_unavailable', ...sessionErrors, ...bodyErrors, 'question_not_found', 'question_already_resolved', 'session_ended') },
});
route({
  method: 'post', path: '/v1/sessions/{id}/questions/{question_id}/reject', summary: 'Decline a question', request: { params: questionParams },
  responses: { 204: empty('Rejection delivered'), ...problems('store_unavailable', ...sessionErrors, 'question_not_found', 'question_already_resolved', 'session_ended') },
});
route({
  method: 'get', path: '/metrics', summary: 'Prometheus metrics: sessions, turns, HITL, streams, agent processes, installs, HTTP (docs/operations.md)',
  description: 'Behind the token like every route but /v1/health.',
  responses: { 200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: z.string() } } }, ...problems('shutting_down') },
});

export function buildOpenApi(version: string): Record<string, unknown> {
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'agentwire',
      version,
      description: 'Runs coding-agent CLIs and serves their output as one universal, sequenced event stream.',
    },
    servers: [{ url: 'http://127.0.0.1:2468' }],
  }) as unknown as Record<string, unknown>;
}
