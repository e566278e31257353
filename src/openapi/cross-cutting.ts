// What every operation of the document shares, derived from the code that enforces it so the
// document cannot promise what the daemon does not do: its `security`, from the route's declared
// auth class (the one auth.ts enforces), and its problem+json responses, from the catalogue.
import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { CATALOGUE, type ErrorCode } from '../errors.js';
import type { ApiAuth } from '../http/auth.js';
import { Problem } from '../schema/api.js';

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
      'The same token as `?token=`, accepted on the two GET event streams only (and on the ACP WebSocket, under `x-websockets`), because a browser `EventSource` (or `WebSocket`) cannot send headers. Everywhere else a `?token=` is refused. Prefer the header: query strings end up in logs.',
  },
} as const;

type Method = RouteConfig['method'];

/** The `security` of one operation: none on open routes, else the header (or, on streams, the query). */
export function securityOf(auth: ApiAuth): NonNullable<RouteConfig['security']> {
  if (auth === 'open') return [];
  return auth === 'bearer-or-query-token' ? [{ bearerAuth: [] }, { tokenQuery: [] }] : [{ bearerAuth: [] }];
}

/**
 * The codes any operation can answer with whatever it does: a query parameter it does not take
 * or a bad Host header (400), a page on an origin that may not call (403), a Host that is not
 * this daemon's (421), a bug (500); behind the token a missing or wrong one (401) and a draining
 * daemon (503: app.ts lets open routes, health, answer while draining);
 * writes refused while the store cannot take them (507, app.ts: every method but GET/HEAD/OPTIONS).
 */
function crossCutting(method: Method, auth: ApiAuth): ErrorCode[] {
  const codes: ErrorCode[] = ['invalid_request', 'origin_not_allowed', 'host_not_allowed', 'internal_error'];
  if (auth !== 'open') codes.push('unauthorized', 'shutting_down');
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
export function problems(method: Method, auth: ApiAuth, codes: readonly ErrorCode[]): NonNullable<RouteConfig['responses']> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...crossCutting(method, auth)])) {
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
