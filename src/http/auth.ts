// Bearer-token auth (every daemon has a token unless --no-token: src/daemon-token.ts). Each route declares its auth class (route.ts; the inspector's static
// files in inspector.ts), registered as its `config.auth`, so the check reads it instead of
// matching paths; a request no route took, or a route that declares none, needs the token.
// CORS preflights are answered by the CORS plugin before the request gate (request-gate.ts) asks.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

// RFC 6750 §3: a 401 names the scheme it wants, and says whether the token presented was wrong.
const REALM = 'agentwire';

/**
 * - `open`: an API route anyone may call (health, for load balancers); it answers while draining.
 * - `bearer`: `Authorization: Bearer <token>`.
 * - `bearer-or-query-token`: the header, or `?token=`: only the GET event streams and the ACP
 *   WebSocket, which a browser opens with an EventSource or a WebSocket, neither of which can send
 *   headers. Nothing else takes it (a POST is sent by fetch, which can), so it never lands in a
 *   URL, and a log, for nothing.
 * - `public`: a static file of the inspector, which holds no data: the page must load to ask for
 *   the token. Not an API operation, so not in the document.
 * The OpenAPI document's `security` is derived from the same class (src/openapi/cross-cutting.ts).
 */
export type RouteAuth = 'open' | 'bearer' | 'bearer-or-query-token' | 'public';
/** The auth classes of API routes, the ones the document describes. */
export type ApiAuth = Exclude<RouteAuth, 'public'>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's auth class; absent (no route, or one that declares none): 'bearer'. */
    auth?: RouteAuth;
  }
}

export function authOf(req: FastifyRequest): RouteAuth {
  return req.routeOptions.config.auth ?? 'bearer';
}

/** The check, built once: `(req, auth) => refusal or undefined`; none for a daemon without a token. */
export function authCheck(token: string | undefined, help = ''): ((req: FastifyRequest, auth: RouteAuth) => ApiError | undefined) | undefined {
  if (!token) return undefined;
  // `help` says where the daemon's token is and how to print it (tokenHelp in daemon-token.ts).
  const after = help ? ` ${help}` : '';
  const matches = tokenMatcher(token);
  return (req, auth) => {
    if (auth === 'open' || auth === 'public') return undefined;
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) return undefined; // a preflight
    const presented = presentedToken(req, auth === 'bearer-or-query-token');
    if (presented === undefined) {
      return new ApiError('unauthorized', `This daemon needs Authorization: Bearer <token>.${after}`, {}, { 'www-authenticate': `Bearer realm="${REALM}"` });
    }
    if (!matches(presented)) {
      return new ApiError('unauthorized', `The bearer token is not valid.${after}`, {}, { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` });
    }
    return undefined;
  };
}

const BEARER = /^\s*Bearer\s+(.+?)\s*$/i;

function presentedToken(req: FastifyRequest, queryToken: boolean): string | undefined {
  const header = req.headers.authorization;
  if (header) {
    // The common spelling is read without a regular expression: every API request comes this way.
    if (header.startsWith('Bearer ') && header.charCodeAt(7) > 32 && header.charCodeAt(header.length - 1) > 32) return header.slice(7);
    return BEARER.exec(header)?.[1];
  }
  if (queryToken) {
    const value = (req.query as Record<string, unknown> | undefined)?.token;
    return typeof value === 'string' && value !== '' ? value : undefined;
  }
  return undefined;
}

/**
 * The comparison, in time that depends on the token's length and the presented one's, never on
 * where they differ: the presented token is copied into a scratch buffer the token's size (a
 * longer one is cut, a shorter one padded with zeros) and compared with timingSafeEqual; the
 * lengths are compared apart. It allocates nothing per request, where hashing both sides did
 * (a SHA-256 per request was 3 % of an authenticated request's CPU, docs/performance.md). The
 * token's length is no secret: the daemon's own are always 43 characters.
 */
function tokenMatcher(token: string): (presented: string) => boolean {
  const expected = Buffer.from(token, 'utf8');
  const scratch = Buffer.alloc(expected.length);
  return (presented) => {
    scratch.fill(0);
    const written = scratch.write(presented, 'utf8');
    const same = timingSafeEqual(scratch, expected);
    return same && written === expected.length && Buffer.byteLength(presented, 'utf8') === expected.length;
  };
}
