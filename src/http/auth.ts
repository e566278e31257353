// Bearer-token auth (--token). Every route but /v1/health and the inspector's static files (routes
// with `config: { public: true }`, src/http/inspector.ts) needs `Authorization: Bearer <token>`;
// the two streaming routes also take `?token=` because a browser EventSource cannot send headers.
// CORS preflights are answered by the CORS plugin before this hook runs.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { OPEN_ROUTES, QUERY_TOKEN_ROUTES } from '../schema/route-security.js';

// RFC 6750 §3: a 401 names the scheme it wants, and says whether the token presented was wrong.
const REALM = 'agentwire';

export function installAuth(app: FastifyInstance, token: string | undefined): void {
  if (!token) return;
  const expected = digest(token);
  app.addHook('onRequest', async (req) => {
    if (OPEN_ROUTES.has(req.routeOptions.url ?? '') || req.routeOptions.config.public) return;
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) return; // a preflight
    const presented = presentedToken(req);
    // Hashing first gives equal-length buffers, so the comparison time says nothing about the token.
    if (presented === undefined) {
      throw new ApiError('unauthorized', 'This daemon needs Authorization: Bearer <token>.', {}, { 'www-authenticate': `Bearer realm="${REALM}"` });
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      throw new ApiError('unauthorized', 'The bearer token is not valid.', {}, { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token"` });
    }
  });
}

function presentedToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    return match?.[1];
  }
  if (QUERY_TOKEN_ROUTES.has(req.routeOptions.url ?? '')) {
    const value = (req.query as Record<string, unknown> | undefined)?.token;
    return typeof value === 'string' && value !== '' ? value : undefined;
  }
  return undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
