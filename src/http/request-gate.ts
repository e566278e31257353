// The request gate: every check an API request passes before its route runs, in one onRequest hook
// instead of one hook each (rule: Untrusted agent, untrusted web). In order:
//   1. the Host allow-list (host.ts): a request for a name that is not ours runs nothing else;
//   2. the Origin check (origin.ts): nor does one a page on another origin sent;
//      (the CORS plugin's hook comes here, when CORS is configured: its preflights end there)
//   3. the token (auth.ts), by the route's auth class;
//   4. the request id, as `x-request-id` on the answer;
//   5. draining: only open routes (health) answer; a store that cannot take writes: reads only;
//   6. a query string on a route that takes none (validate.ts).
// Why one hook: Fastify runs each hook through its hook runner, and an async hook also makes a
// promise, so five hooks cost more than the checks in them. The checks are built once from the
// configuration (a check the configuration turns off is not called at all), and the route's
// config (its auth class, whether it takes a query) is read once per request.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from '../errors.js';
import type { StoreFailure } from '../store/event-store.js';
import { authCheck } from './auth.js';
import { hostCheck } from './host.js';
import { originCheck } from './origin.js';
import { undeclaredQuery } from './validate.js';

export interface GateOptions {
  listenHost: string;
  allowedHosts: readonly string[];
  corsOrigins: readonly string[];
  token: string | undefined;
  /** Where the token is and how to print it, added to a 401's detail. */
  tokenHelp?: string;
  isDraining(): boolean;
  /** Why the event store cannot take writes now, if it cannot. */
  storeFailure(): StoreFailure;
}

export interface RequestGate {
  /** The whole gate, for a daemon without CORS. */
  all: onRequestHookHandler;
  /** Steps 1–2 and 3–6, for a daemon with CORS: the CORS plugin's hook goes between them. */
  front: onRequestHookHandler;
  back: onRequestHookHandler;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function requestGate(options: GateOptions): RequestGate {
  const host = hostCheck(options.listenHost, options.allowedHosts);
  const origin = originCheck(options.corsOrigins);
  const auth = authCheck(options.token, options.tokenHelp);

  const front = (req: FastifyRequest): ApiError | undefined => host(req.raw.rawHeaders) ?? origin?.(req);

  const back = (req: FastifyRequest, reply: FastifyReply): ApiError | undefined => {
    const config = req.routeOptions.config;
    const authClass = config.auth ?? 'bearer';
    const refused = auth?.(req, authClass);
    if (refused) return refused;
    reply.header('x-request-id', req.id);
    // Open routes (health) answer while draining: a load balancer reads "draining" there.
    if (authClass !== 'open' && options.isDraining()) {
      return new ApiError('shutting_down', 'The daemon is shutting down; retry against its replacement.');
    }
    // A store that cannot take writes (full disk, read-only data dir): reads still work, new work
    // would produce events nobody could keep.
    const failure = options.storeFailure();
    if (failure && !SAFE_METHODS.has(req.method)) {
      return new ApiError('store_unavailable', `The event store cannot take writes (${failure.code}: ${failure.message}) since ${failure.since}; free space in the data dir, the daemon recovers by itself.`);
    }
    // A request no route took gets its 404 or 405, whatever its query.
    if (!config.query && config.url !== undefined) return undeclaredQuery(req);
    return undefined;
  };

  return {
    all: (req, reply, done) => done(front(req) ?? back(req, reply)),
    front: (req, _reply, done) => done(front(req)),
    back: (req, reply, done) => done(back(req, reply)),
  };
}
