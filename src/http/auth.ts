// Bearer-token auth (every daemon has a token unless --no-token: src/daemon-token.ts). Each route declares its auth class (route.ts; the inspector's static
// files in inspector.ts), registered as its `config.auth`, so the check reads it instead of
// matching paths; a request no route took, or a route that declares none, needs the token.
// CORS preflights are answered by the CORS plugin before the request gate (request-gate.ts) asks.
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

// RFC 6750 §3: a 401 names the scheme it wants, and says whether the token presented was wrong.
const REALM = 'agentwire';

/**
 * - `open`: an API route anyone may call (health, for load balancers); it answers while draining.
 * - `bearer`: `Authorization: Bearer <token>`.
 * - `bearer-or-query-token`: the header, or `?token=` (the streams: a browser EventSource cannot
 *   send headers).
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
export function authCheck(token: string | undefined): ((req: FastifyRequest, auth: RouteAuth) => ApiError | undefined) | undefined {
  if (!token) return undefined;
  const expected = digest(token);
  return (req, auth) => {
    if (auth === 'open' || auth === 'public') return undefined;
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) return undefined; // a preflight
    const presented = presentedToken(req, auth === 'bearer-or-query-token');
    // Hashing first gives equal-length buffers, so the comparison time says nothing about the token.
    if (presented === undefined) {
      return new ApiError('unauthorized', 'This daemon needs Authorization: Bearer <token>.', {}, { 'www-authenticate': `Bearer realm="${REALM}"` });
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      return new ApiError('unauthorized', 'The bearer token is not valid.', {}, { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` });
    }
    return undefined;
  };
}

function presentedToken(req: FastifyRequest, queryToken: boolean): string | undefined {
  const header = req.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    return match?.[1];
  }
  if (queryToken) {
    const value = (req.query as Record<string, unknown> | undefined)?.token;
    return typeof value === 'string' && value !== '' ? value : undefined;
  }
  return undefined;
}

// crypto.hash, one call into the native side, not a Hash object per request (Node >= 20.12).
function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}
