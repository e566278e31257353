// Which methods each path answers to, learned from the routes as Fastify registers them. A known
// path asked with another method is a 405 with `Allow` (RFC 9110 §15.5.6), whether the method
// reached the router (PUT, OPTIONS, PROPFIND …), Node's parser refused it (an unknown token, see
// problems.ts) or it is CONNECT (which Node hands to the server's 'connect' event, never to the
// router); a path no route has is a 404. All of them are problem+json.
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

interface Entry {
  /** undefined: the route matches every path (the CORS plugin's `OPTIONS *`). */
  pattern: RegExp | undefined;
  methods: Set<string>;
}

export class RouteTable {
  private readonly entries: Entry[] = [];
  private readonly registered: { method: string; url: string }[] = [];

  add(methods: string | string[], url: string): void {
    for (const m of [methods].flat()) this.registered.push({ method: m.toUpperCase(), url });
    const pattern = url === '*' ? undefined : compile(url);
    const source = pattern?.source;
    let entry = this.entries.find((e) => e.pattern?.source === source);
    if (!entry) this.entries.push((entry = { pattern, methods: new Set() }));
    for (const m of [methods].flat()) entry.methods.add(m.toUpperCase());
  }

  /** Every route as Fastify registered it (its HEAD twins included), e.g. for a test comparing
   *  them with the OpenAPI document. */
  list(): readonly { method: string; url: string }[] {
    return this.registered;
  }

  /** The methods some route serves at this path, sorted; empty when no route has the path. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const e of this.entries) if (e.pattern?.test(path)) for (const m of e.methods) methods.add(m);
    if (methods.size === 0) return [];
    for (const e of this.entries) if (!e.pattern) for (const m of e.methods) methods.add(m);
    return [...methods].sort();
  }

  /** The problem for a request no route took: 405 on a known path, 404 otherwise. */
  refusal(method: string, url: string): ApiError {
    const path = url.split('?')[0]!;
    const allow = this.allowed(path);
    if (allow.length === 0) return new ApiError('not_found', `No route ${method} ${path.slice(0, 200)}; see GET /openapi.json.`);
    return new ApiError('method_not_allowed', `${method} is not allowed on ${path}; it answers to ${allow.join(', ')}.`, { allow }, { allow: allow.join(', ') });
  }
}

/** '/v1/sessions/:id/events' → /^\/v1\/sessions\/[^/]+\/events$/ ('*' matches the rest). */
function compile(url: string): RegExp {
  const parts = url.split('/').map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

/** Records every route added after this call into `table` (install it before routes and plugins). */
export function recordRoutes(app: FastifyInstance, table: RouteTable): void {
  app.addHook('onRoute', (route) => table.add(route.method, route.url ?? route.path));
}

/**
 * CONNECT asks a proxy for a tunnel. Node gives it to the 'connect' event and closes the socket
 * silently when nobody listens: answer it instead, like any other method the path does not take.
 */
export function answerConnect(table: RouteTable, write: (socket: Socket, problem: ApiError) => void) {
  return (req: { url?: string }, socket: Socket): void => write(socket, table.refusal('CONNECT', req.url ?? '*'));
}
