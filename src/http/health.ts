// Daemon routes: health (503 while draining, so a load balancer stops sending work) and the
// OpenAPI document.
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VERSION } from '../version.js';

// The committed document, which a test keeps identical to what the schemas generate: serving the
// file keeps the OpenAPI generator out of the daemon's start-up and memory. Only its `servers`
// entry is replaced, with the address this daemon really listens on.
const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url);

export function daemonRoutes(app: FastifyInstance, isDraining: () => boolean): void {
  const started = Date.now();
  let openapi: Promise<Record<string, unknown>> | undefined;
  app.get('/v1/health', async (_req, reply) => {
    const body = { status: isDraining() ? ('draining' as const) : ('ok' as const), version: VERSION, uptimeMs: Date.now() - started };
    return reply.code(isDraining() ? 503 : 200).send(body);
  });
  app.get('/openapi.json', async (req, reply) => {
    openapi ??= readFile(OPENAPI_FILE, 'utf8').then((text) => JSON.parse(text) as Record<string, unknown>);
    const document = { ...(await openapi), servers: [{ url: serverUrl(app, req), description: 'This daemon' }] };
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(document, null, 2));
  });
}

/**
 * The listen address and port. A wildcard address (0.0.0.0, ::) is nothing a client can connect
 * to, so then the Host the request came with (it passed the allow-list) names the daemon; so it
 * does before listen (inject), when there is no address yet.
 */
function serverUrl(app: FastifyInstance, req: FastifyRequest): string {
  const address = app.server.address() as AddressInfo | string | null;
  if (address === null || typeof address === 'string' || address.address === '0.0.0.0' || address.address === '::') {
    return `http://${req.headers.host ?? '127.0.0.1'}`;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
