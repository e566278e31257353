// Daemon routes: health (503 while draining, so a load balancer stops sending work) and the
// OpenAPI document.
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../schema/openapi.js';
import { VERSION } from '../version.js';

export function daemonRoutes(app: FastifyInstance, isDraining: () => boolean): void {
  const started = Date.now();
  const openapi = buildOpenApi(VERSION);
  app.get('/v1/health', async (_req, reply) => {
    const body = { status: isDraining() ? ('draining' as const) : ('ok' as const), version: VERSION, uptimeMs: Date.now() - started };
    return reply.code(isDraining() ? 503 : 200).send(body);
  });
  app.get('/openapi.json', async () => openapi);
}
