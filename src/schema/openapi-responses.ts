// The building blocks every operation of the OpenAPI document is made of: its security, its
// problem+json error responses and the event-stream bodies. The cross-cutting parts are derived
// from what the code enforces (route-security.ts's route sets, which src/http/auth.ts enforces;
// the catalogue), so the document cannot promise what the daemon does not do.
import type { ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { CATALOGUE, type ErrorCode } from '../errors.js';
import { HealthResponse, Problem } from './api.js';
import { UniversalEvent } from './events.js';
import { OPEN_ROUTES, QUERY_TOKEN_ROUTES } from './route-security.js';
import { z } from './zod.js';

/** components.securitySchemes. Names are part of the contract (generated clients key on them). */
export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The daemon\'s token as `Authorization: Bearer <token>`: the one given with `--token-file`, `AGENTWIRE_TOKEN` or `--token`, or else the one the daemon made at its first start (`agentwire token` prints it). Only a daemon started with `--no-token` has none, and then every route is open.',
  },
  tokenQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description:
      'The same token as `?token=`, accepted on the two streaming routes only, because a browser `EventSource` cannot send headers. Prefer the header: query strings end up in logs.',
  },
} as const;

export const json = <T extends z.ZodType>(schema: T, description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});
export const empty = (description: string): ResponseConfig => ({ description });
export const body = (schema: z.ZodType) => ({ body: { required: true, content: { 'application/json': { schema } } } });

const SSE_FRAMES =
  '`text/event-stream`: `retry:` once, then one frame per event with `id: <sequence>` and a single `data:` line holding one UniversalEvent as JSON (no `event:` line, so `EventSource.onmessage` sees every event); a `: keep-alive` comment every 15 s. The schema is the type of one frame\'s `data`.';
const NDJSON_LINES = '`application/x-ndjson` (with `Accept: application/x-ndjson`): one UniversalEvent JSON per line. The schema is the type of one line.';

/** GET …/events/sse: SSE only. */
export const sseStream = (what: string): ResponseConfig => ({
  description: `${what} ${SSE_FRAMES}`,
  content: { 'text/event-stream': { schema: UniversalEvent } },
});
/** POST …/messages/stream: SSE, or NDJSON when the client asks for it. */
export const sseOrNdjsonStream = (what: string): ResponseConfig => ({
  description: `${what} ${SSE_FRAMES} ${NDJSON_LINES}`,
  content: { 'text/event-stream': { schema: UniversalEvent }, 'application/x-ndjson': { schema: UniversalEvent } },
});

/** Health answers 503 with its own body (not a problem) while the daemon drains. */
export const draining: ResponseConfig = json(HealthResponse, 'Draining: `{status: "draining"}`; a load balancer should stop sending work');

export type Method = RouteConfig['method'];

/** `{id}` → `:id`: the document's path in the router's syntax, to look it up in auth.ts's sets. */
function routerPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function isOpen(path: string): boolean {
  return OPEN_ROUTES.has(routerPath(path));
}

/** The `security` of one operation: none on open routes, else the header (or, on streams, the query). */
export function securityOf(path: string): NonNullable<RouteConfig['security']> {
  if (isOpen(path)) return [];
  return QUERY_TOKEN_ROUTES.has(routerPath(path)) ? [{ bearerAuth: [] }, { tokenQuery: [] }] : [{ bearerAuth: [] }];
}

/**
 * The codes any operation can answer with whatever it does: a query parameter it does not take
 * or a bad Host header (400), a page on an origin that may not call (403), a Host that is not
 * this daemon's (421), a bug (500); behind the
 * token a missing or wrong one (401) and a draining daemon (503, app.ts exempts health only);
 * writes refused while the store cannot take them (507, app.ts: every method but GET/HEAD/OPTIONS).
 */
function crossCutting(method: Method, path: string): ErrorCode[] {
  const codes: ErrorCode[] = ['invalid_request', 'origin_not_allowed', 'host_not_allowed', 'internal_error'];
  if (!isOpen(path)) codes.push('unauthorized', 'shutting_down');
  if (method !== 'get' && method !== 'head' && method !== 'options') codes.push('store_unavailable');
  return codes;
}

const UNAUTHORIZED_HEADERS = {
  'WWW-Authenticate': {
    description: '`Bearer realm="agentwire"`, with `error="invalid_token"` when a token was sent but is wrong (RFC 6750)',
    schema: { type: 'string' as const },
  },
};

/** One problem+json response per status, its description naming the codes it can carry. */
export function problems(method: Method, path: string, codes: readonly ErrorCode[]): NonNullable<RouteConfig['responses']> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...crossCutting(method, path)])) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const sorted = [...byStatus].sort(([a], [b]) => a - b);
  return Object.fromEntries(
    sorted.map(([status, list]) => [
      status,
      {
        description: list.map((c) => `\`${c}\`: ${CATALOGUE[c].title}`).join('; '),
        ...(status === 401 ? { headers: UNAUTHORIZED_HEADERS } : {}),
        content: { 'application/problem+json': { schema: Problem } },
      },
    ]),
  );
}
