// Daemon routes: health (503 while draining, so a load balancer stops sending work) and the
// OpenAPI document.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.js';

// The committed document, which a test keeps identical to what the schemas generate: serving the
// file keeps the OpenAPI generator out of the daemon's start-up and memory.
const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url);

export function daemonRoutes(app: FastifyInstance, isDraining: () => boolean): void {
  const started = Date.now();
  let openapi: Promise<string> | undefined;
  app.get('/v1/health', async (_req, reply) => {
    const body = { status: isDraining() ? ('draining' as const) : ('ok' as const), version: VERSION, uptimeMs: Date.now() - started };
    return reply.code(isDraining() ? 503 : 200).send(body);
  });
  app.get('/openapi.json', async (_req, reply) => {
    openapi ??= readFile(OPENAPI_FILE, 'utf8');
    return reply.type('application/json; charset=utf-8').send(await openapi);
  });
}
