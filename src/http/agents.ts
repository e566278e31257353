// Agent routes (docs/http-api.md, "Routes"): thin — validate, call the discovery service, map.
import type { FastifyInstance } from 'fastify';
import type { AgentDiscovery } from '../agents/discovery.js';
import { AgentIdParam, InstallAgentRequest } from '../schema/api.js';
import type { AgentOfferings } from '../agents/offerings.js';
import type { WarmCount } from '../sessions/warm-pool.js';
import { parse } from './validate.js';

const NO_SPARES: WarmCount = { size: 0, ready: 0, starting: 0 };

export function agentRoutes(app: FastifyInstance, agents: AgentDiscovery, offerings: AgentOfferings, warm: () => Partial<Record<string, WarmCount>>): void {
  app.get('/v1/agents', async () => {
    const spares = warm();
    return { agents: (await agents.list()).map((a) => ({ ...a, warm: spares[a.id] ?? NO_SPARES })) };
  });

  app.get('/v1/agents/:agent/models', async (req) => offerings.listModels(parse(AgentIdParam, req.params, 'path').agent));

  app.get('/v1/agents/:agent/modes', async (req) => offerings.listModes(parse(AgentIdParam, req.params, 'path').agent));

  app.post('/v1/agents/:agent/install', async (req, reply) => {
    const { agent } = parse(AgentIdParam, req.params, 'path');
    // A bodiless POST installs the pinned version.
    await agents.install(agent, parse(InstallAgentRequest, req.body ?? {}, 'body'), req.log);
    return reply.code(204).send();
  });
}
