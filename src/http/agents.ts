// Agent routes (api.md "Agents and daemon"): thin — validate, call the discovery service, map.
import type { FastifyInstance } from 'fastify';
import type { AgentDiscovery } from '../agents/discovery.js';
import { AgentIdParam, InstallAgentRequest } from '../schema/api.js';
import { parse } from './validate.js';

export function agentRoutes(app: FastifyInstance, agents: AgentDiscovery): void {
  app.get('/v1/agents', async () => ({ agents: await agents.list() }));

  app.post('/v1/agents/:agent/install', async (req, reply) => {
    const { agent } = parse(AgentIdParam, req.params, 'path');
    // A bodiless POST installs the pinned version.
    await agents.install(agent, parse(InstallAgentRequest, req.body ?? {}, 'body'), req.log);
    return reply.code(204).send();
  });
}
