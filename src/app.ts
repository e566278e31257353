// buildApp(deps): the whole daemon as an un-listened Fastify instance (design rule 7). Tests call
// it with a fixed clock and counter ids and use inject(); main.ts listens.
import Fastify, { type FastifyInstance } from 'fastify';
import { createRegistry, type AgentRegistry } from './agents/registry.js';
import { Config } from './config.js';
import { ApiError } from './errors.js';
import { eventRoutes } from './http/events.js';
import { installProblemHandlers } from './http/problems.js';
import { sessionRoutes } from './http/sessions.js';
import { turnStreamRoutes } from './http/turn-stream.js';
import { buildOpenApi } from './schema/openapi.js';
import { SessionManager } from './sessions/session-manager.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './util/deps.js';
import { VERSION } from './version.js';

export interface AppDeps {
  config?: Partial<Config>;
  registry?: AgentRegistry;
  ids?: IdGenerator;
  clock?: Clock;
  /** Default and base directory for session cwds. */
  baseDir?: string;
  logger?: boolean | { level: string };
}

export interface App {
  app: FastifyInstance;
  sessions: SessionManager;
  config: Config;
}

export async function buildApp(deps: AppDeps = {}): Promise<App> {
  const config = Config.parse(deps.config ?? {});
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: config.bodyLimitBytes,
    // SSE and NDJSON streams stay open indefinitely; only idle keep-alive sockets time out.
    requestTimeout: 0,
  });
  const registry = deps.registry ?? createRegistry(config);
  const sessions = new SessionManager({
    registry,
    ids: deps.ids ?? randomIds,
    clock: deps.clock ?? systemClock,
    limits: { maxEvents: config.maxEventsPerSession, maxBytes: config.maxBytesPerSession },
    maxSessions: config.maxSessions,
    baseDir: deps.baseDir ?? process.cwd(),
  });

  installProblemHandlers(app);

  // An empty body with Content-Type: application/json is "no body", not a parse error: curl users
  // often send the header on bodiless POSTs such as /interrupt.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new ApiError('malformed_json', `The body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  app.removeContentTypeParser('text/plain'); // Fastify's default would let text bodies reach validation (400, not 415)

  const started = Date.now();
  const openapi = buildOpenApi(VERSION);
  app.get('/v1/health', async () => ({ status: 'ok' as const, version: VERSION, uptimeMs: Date.now() - started }));
  app.get('/openapi.json', async () => openapi);
  sessionRoutes(app, sessions);
  eventRoutes(app, sessions, config);
  turnStreamRoutes(app, sessions, config);

  // preClose, not onClose: the server waits for open connections before onClose runs, and live
  // SSE streams only end once their sessions are closed.
  app.addHook('preClose', async () => sessions.closeAll());
  return { app, sessions, config };
}
