// Agent routes (docs/http-api.md, "Routes"): thin — validate, call the discovery service, map.
import { AgentIdParam, AgentList, InstallAgentRequest, ModelsResponse, ModesResponse } from '../schema/api.js';
import { empty, json } from '../schema/openapi-responses.js';
import type { WarmCount } from '../sessions/warm-pool.js';
import { BODY_ERRORS, route } from './route.js';

const NO_SPARES: WarmCount = { size: 0, ready: 0, starting: 0 };

const listAgents = route({
  method: 'get', path: '/v1/agents', operationId: 'listAgents', tag: 'agents', auth: 'bearer',
  summary: 'Every agent: installed?, version, path, credentials, capabilities',
  ok: { 200: json(AgentList, 'Agents') },
  async handler(_input, { agents, sessions }) {
    const spares = sessions.warmCounts();
    return { agents: (await agents.list()).map((a) => ({ ...a, warm: spares[a.id] ?? NO_SPARES })) };
  },
});

const installAgent = route({
  method: 'post', path: '/v1/agents/:agent/install', operationId: 'installAgent', tag: 'agents', auth: 'bearer',
  summary: 'Install the pinned (or an exact) agent CLI version from the npm registry into the agents dir',
  description: 'Concurrent requests for one agent share one install. A failure answers 502 agent_install_failed with npm\'s stderr tail in `stderrTail`. The body is optional.',
  // A bodiless POST installs the pinned version.
  params: AgentIdParam, body: InstallAgentRequest, optionalBody: true,
  ok: { 204: empty('Installed (or a complete install was already there)') }, errors: [...BODY_ERRORS, 'agent_install_failed'],
  async handler({ params, body, req, reply }, { agents }) {
    await agents.install(params.agent, body, req.log);
    return reply.code(204).send();
  },
});

const getAgentModels = route({
  method: 'get', path: '/v1/agents/:agent/models', operationId: 'getAgentModels', tag: 'agents', auth: 'bearer',
  summary: "The models a session of this agent can use (asked of the agent CLI, cached; else the build's built-in list)",
  params: AgentIdParam,
  ok: { 200: json(ModelsResponse, 'Models') }, errors: ['agent_not_available'],
  handler: async ({ params }, { offerings }) => offerings.listModels(params.agent),
});

const getAgentModes = route({
  method: 'get', path: '/v1/agents/:agent/modes', operationId: 'getAgentModes', tag: 'agents', auth: 'bearer',
  summary: 'The agentMode and permissionMode values this agent accepts',
  params: AgentIdParam,
  ok: { 200: json(ModesResponse, 'Modes') }, errors: ['agent_not_available'],
  handler: async ({ params }, { offerings }) => offerings.listModes(params.agent),
});

export const agentRoutes = [listAgents, installAgent, getAgentModels, getAgentModes];
