// Daemon routes: health (503 while draining, so a load balancer stops sending work) and the
// OpenAPI document.
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { HealthResponse } from '../schema/api.js';
import { draining, json } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { VERSION } from '../version.js';
import { route } from './route.js';

// The committed document, which a test keeps identical to what the declarations generate: serving
// the file keeps the OpenAPI generator out of the daemon's start-up and memory. Only its `servers`
// entry is replaced, with the address this daemon really listens on. Read once per process: the
// file is part of the install.
const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url);
let openapi: Promise<Record<string, unknown>> | undefined;

const JSON_TYPE = 'application/json; charset=utf-8';
const VERSION_JSON = JSON.stringify(VERSION);

const getHealth = route({
  method: 'get', path: '/v1/health', operationId: 'getHealth', tag: 'daemon', auth: 'open',
  summary: 'Liveness and version; never needs the token',
  ok: { 200: json(HealthResponse, 'Healthy: `{status: "ok"}`'), 503: draining },
  // Answered at once, its JSON written from a template (the version is serialized once): the
  // route a load balancer polls should cost next to nothing (docs/performance.md).
  handler({ reply }, { isDraining, startedAt }) {
    const draining = isDraining();
    reply
      .code(draining ? 503 : 200)
      .type(JSON_TYPE)
      .send(`{"status":"${draining ? 'draining' : 'ok'}","version":${VERSION_JSON},"uptimeMs":${Date.now() - startedAt}}`);
  },
});

const getOpenApi = route({
  method: 'get', path: '/openapi.json', operationId: 'getOpenApi', tag: 'daemon', auth: 'bearer',
  summary: 'This document; its `servers` entry is the daemon\'s own address',
  ok: { 200: json(z.record(z.string(), z.unknown()), 'OpenAPI 3.1 document') },
  async handler({ req, reply }) {
    openapi ??= readFile(OPENAPI_FILE, 'utf8').then((text) => JSON.parse(text) as Record<string, unknown>);
    const document = { ...(await openapi), servers: [{ url: serverUrl(req), description: 'This daemon' }] };
    return reply.type(JSON_TYPE).send(JSON.stringify(document, null, 2));
  },
});

export const daemonRoutes = [getHealth, getOpenApi];

/**
 * The listen address and port. A wildcard address (0.0.0.0, ::) is nothing a client can connect
 * to, so then the Host the request came with (it passed the allow-list) names the daemon; so it
 * does before listen (inject), when there is no address yet.
 */
function serverUrl(req: FastifyRequest): string {
  const address = req.server.server.address() as AddressInfo | string | null;
  if (address === null || typeof address === 'string' || address.address === '0.0.0.0' || address.address === '::') {
    return `http://${req.headers.host ?? '127.0.0.1'}`;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
