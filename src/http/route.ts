// A route, declared once (design rule "Thin routes, declared once"): its method and path, what the
// OpenAPI document says about it, the zod schemas of its parameters, query and body, its auth
// class and its handler. `registerRoutes` serves the declarations, the auth hook reads the auth
// class they register (auth.ts), src/openapi/document.ts writes the document from them and the
// tests enumerate them; nothing else lists routes. The table is src/http/routes.ts.
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { AgentRegistry } from '../agents/registry.js';
import type { AgentDiscovery } from '../agents/discovery.js';
import type { AgentOfferings } from '../agents/offerings.js';
import type { Config } from '../config.js';
import type { ErrorCode } from '../errors.js';
import type { Metrics } from '../metrics/registry.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { SessionRef } from '../schema/api.js';
import { z } from '../schema/zod.js';
import type { ApiAuth } from './auth.js';
import { noBody, parse } from './validate.js';

/** The document's groups of operations, in the order it lists them. */
export const TAGS = [
  { name: 'acp', description: 'agentwire as an Agent Client Protocol agent, over a WebSocket: `GET /v1/acp` with `Upgrade: websocket`, described under `x-websockets`, not `paths`, so that generators make no plain GET of it (docs/acp-server.md)' },
  { name: 'agents', description: 'The agent CLIs this daemon can run: discovery, install, models and modes' },
  { name: 'daemon', description: 'Health, metrics and this document' },
  { name: 'events', description: "Reading a session's event log, or every session's through the daemon-wide feed: poll, or stream with SSE" },
  { name: 'hitl', description: 'Answering the permission requests and questions an agent asks' },
  { name: 'sessions', description: 'Creating, messaging, stopping and forgetting sessions' },
] as const;
export type Tag = (typeof TAGS)[number]['name'];

/** Errors many routes share: an unknown session, and a JSON body the parser refused. */
export const SESSION_ERRORS: readonly ErrorCode[] = ['session_not_found'];
export const BODY_ERRORS: readonly ErrorCode[] = ['malformed_json', 'unsupported_media_type', 'body_too_large'];

/** The path of a route about one session: any id is looked up (an impossible one is not found). */
export const SessionPath = z.object({ id: SessionRef });

/** The domain a handler calls; built once by buildApp. */
export interface RouteDeps {
  sessions: SessionManager;
  registry: AgentRegistry;
  agents: AgentDiscovery;
  offerings: AgentOfferings;
  config: Config;
  metrics: Metrics;
  isDraining(): boolean;
  /** When the app was built (Date.now()), for health's uptime. */
  startedAt: number;
}

/** What a handler reads: params, query and body typed by the declaration's schemas. Each is
 *  validated when the handler first reads it, so a handler decides what it refuses first (an
 *  unknown session, 404, before a bad body, 400). Destructuring reads: a handler that looks
 *  something up before validating the rest reads `input.query` and `input.body` after it. */
export interface RouteInput<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  req: FastifyRequest;
  reply: FastifyReply;
}

type Schema = z.ZodType;

export interface RouteDeclaration<P extends Schema = z.ZodObject<{}>, Q extends Schema = z.ZodObject<{}>, B extends Schema = z.ZodUndefined> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** In the router's syntax (`:id`); also the `route` label of the HTTP metrics. The document
   *  spells its parameters in snake_case (`{permission_id}`, as the event data does). */
  path: string;
  /** A contract: generated clients key their operations by it, so renaming one breaks them. */
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  auth: ApiAuth;
  /** Path parameters, keyed by the router's names. */
  params?: P;
  /** Query strings arrive as text, in both spellings (`include_raw`, `includeRaw`), and the stream
   *  routes also take the EventSource's `token`: `schema` validates all that. `document` is what
   *  the document tells clients to send: typed, snake_case, the token left to its security scheme.
   *  A route without a query refuses one (validate.ts). */
  query?: { schema: Q; document: z.ZodObject };
  /** A JSON body, or 'none': the route refuses a body (an empty `{}` passes). GET routes say nothing. */
  body?: B | 'none';
  /** The body may be left out (the handler then reads `{}`). */
  optionalBody?: true;
  /** Request headers the route reads, for the document only (the handler reads `req.headers`). */
  headers?: z.ZodObject;
  /** Success responses; the document adds problem+json ones from `errors` and the cross-cutting codes. */
  ok: Record<number, ResponseConfig>;
  errors?: readonly ErrorCode[];
  // A method, not a function property: the table holds routes of different schemas, and method
  // parameters are compared bivariantly. A handler that answers at once (health) is not async and
  // returns nothing: no promise to make and settle per request.
  handler(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>, deps: RouteDeps): Promise<unknown> | void;
  /** A GET route a client upgrades to a WebSocket (@fastify/websocket): `handler` answers a plain
   *  GET, `websocket.check` runs before the upgrade (its throw is a problem+json answer, the
   *  socket never opens), `websocket.open` gets the socket and what check returned. */
  websocket?: {
    check(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>, deps: RouteDeps): unknown;
    open(socket: WebSocket, context: unknown, req: FastifyRequest, deps: RouteDeps): void;
  };
}

/** Any declared route, as the table holds it (each declaration's types were checked by `route`). */
export type Route = RouteDeclaration<any, any, any>;

/** Infers a declaration's schema types, so its handler's input is typed. */
export function route<P extends Schema = z.ZodObject<{}>, Q extends Schema = z.ZodObject<{}>, B extends Schema = z.ZodUndefined>(
  declaration: RouteDeclaration<P, Q, B>,
): RouteDeclaration<P, Q, B> {
  return declaration;
}

export function registerRoutes(app: FastifyInstance, routes: readonly Route[], deps: RouteDeps): void {
  for (const declared of routes) {
    if (declared.method !== 'get' && declared.body === undefined) throw new Error(`${declared.operationId}: a ${declared.method} route declares its body, or 'none'`);
    const ws = declared.websocket;
    const upgraded = new WeakMap<FastifyRequest, unknown>();
    app.route({
      method: declared.method.toUpperCase() as 'GET' | 'POST' | 'PATCH' | 'DELETE',
      url: declared.path,
      config: { auth: declared.auth, ...(declared.query ? { query: true as const } : {}) },
      ...(ws
        ? {
            preHandler: (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
              if (!req.ws) return done();
              try {
                upgraded.set(req, ws.check(new Input(declared, req, reply), deps));
                done();
              } catch (err) {
                done(err as Error);
              }
            },
            wsHandler: (socket: WebSocket, req: FastifyRequest) => ws.open(socket, upgraded.get(req), req, deps),
          }
        : {}),
      // Not async: the declaration's handler makes the one promise; a throw here (a body where
      // none is taken) reaches the error handler all the same.
      handler: (req, reply) => {
        const input = new Input(declared, req, reply);
        // A route that takes no body checks its path and then that nothing came, before it acts.
        if (declared.body === 'none') {
          void input.params;
          noBody(req.body);
        }
        return declared.handler(input, deps);
      },
    });
  }
}

// Which parts an Input has parsed, as bits.
const PARAMS = 1;
const QUERY = 2;
const BODY = 4;

/** A handler's input: each part parsed on first read and kept (a part that fails to parse throws
 *  again on the next read). A class, so that a request allocates one object and no closures. */
class Input implements RouteInput<unknown, unknown, unknown> {
  private parsed = 0;
  private paramsValue: unknown;
  private queryValue: unknown;
  private bodyValue: unknown;

  constructor(
    private readonly declared: Route,
    readonly req: FastifyRequest,
    readonly reply: FastifyReply,
  ) {}

  get params(): unknown {
    if (!(this.parsed & PARAMS)) {
      this.paramsValue = this.declared.params ? parse(this.declared.params, this.req.params, 'path') : {};
      this.parsed |= PARAMS;
    }
    return this.paramsValue;
  }

  get query(): unknown {
    if (!(this.parsed & QUERY)) {
      this.queryValue = this.declared.query ? parse(this.declared.query.schema, this.req.query, 'query') : {};
      this.parsed |= QUERY;
    }
    return this.queryValue;
  }

  get body(): unknown {
    if (!(this.parsed & BODY)) {
      const { body, optionalBody } = this.declared;
      this.bodyValue = !body || body === 'none' ? undefined : parse(body, optionalBody ? (this.req.body ?? {}) : this.req.body, 'body');
      this.parsed |= BODY;
    }
    return this.bodyValue;
  }
}
