// buildApp(deps): the whole daemon as an un-listened Fastify instance (design rule 7). Tests call
// it with a fixed clock and counter ids and use inject(); main.ts listens.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { AgentDiscovery } from './agents/discovery.js';
import { AgentOfferings } from './agents/offerings.js';
import { createRegistry, type AgentRegistry } from './agents/registry.js';
import { Config, ConfigError } from './config.js';
import { ApiError } from './errors.js';
import { agentRoutes } from './http/agents.js';
import { installAuth } from './http/auth.js';
import { installCors } from './http/cors.js';
import { eventRoutes } from './http/events.js';
import { daemonRoutes } from './http/health.js';
import { answerClientError, installProblemHandlers } from './http/problems.js';
import { sessionRoutes } from './http/sessions.js';
import { turnStreamRoutes } from './http/turn-stream.js';
import { loggerOptions, requestIdOptions } from './logging.js';
import type { AgentBoundary } from './process/agent-env.js';
import { agentCanRead, agentCanUse, resolveAgentUser } from './process/agent-user.js';
import { SessionManager } from './sessions/session-manager.js';
import { resolveCwd } from './sessions/session.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './util/deps.js';

export interface AppDeps {
  config?: Partial<Config>;
  registry?: AgentRegistry;
  ids?: IdGenerator;
  clock?: Clock;
  /** Default and base directory for session cwds. */
  baseDir?: string;
  /** true: pino JSON to stdout at config.logLevel. */
  logger?: boolean;
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void };
  /** The environment agent discovery sees (PATH, credential variables) and the HOME it checks for
   *  credential files, default process.env and its HOME; model and mode queries also get it on top
   *  of process.env. Sessions' agents start from process.env (src/process/agent-env.ts). */
  agentEnv?: { env?: NodeJS.ProcessEnv; home?: string };
}

export interface App {
  app: FastifyInstance;
  sessions: SessionManager;
  config: Config;
  agents: AgentDiscovery;
}

export async function buildApp(deps: AppDeps = {}): Promise<App> {
  const config = Config.parse(deps.config ?? {});
  const ids = deps.ids ?? randomIds;
  const app = Fastify({
    logger: deps.logger || deps.logStream ? loggerOptions(config.logLevel, deps.logStream) : false,
    ...requestIdOptions(ids),
    bodyLimit: config.bodyLimitBytes,
    // SSE and NDJSON streams stay open indefinitely; only idle keep-alive sockets time out.
    requestTimeout: 0,
    clientErrorHandler: answerClientError,
    // While draining, our own hook answers (problem+json, and health says "draining").
    return503OnClosing: false,
    // Session ids may be 128 characters; longer ones get a 400 from validation, not a 414.
    routerOptions: { maxParamLength: 256 },
    // Errors Fastify raises before routing (a bad percent-escape, an over-long path parameter).
    frameworkErrors: (error, _req, reply) => {
      const problem = new ApiError('invalid_request', `The request URL is not valid: ${error.message}`);
      void (reply as FastifyReply).code(problem.status).type('application/problem+json').send(problem.toProblem());
    },
  });
  // Start-up refusals (ConfigError): an unknown agent user, a daemon that cannot switch to it, a
  // token file that user could read.
  const user = config.agentUser ? resolveAgentUser(config.agentUser) : undefined;
  if (user && config.tokenFile && (await agentCanRead(config.tokenFile, user))) {
    throw new ConfigError(`--token-file ${config.tokenFile}: the agent user '${user.name}' can read it; make it readable by the daemon only (chmod 600)`);
  }
  const boundary: AgentBoundary = { env: process.env, user };
  const registry = deps.registry ?? createRegistry({ ...config, boundary }, deps.agentEnv?.env);
  // Agents look for their credential files in their own HOME: the agent user's, with one.
  const agents = new AgentDiscovery({ registry, config, ...deps.agentEnv, home: deps.agentEnv?.home ?? user?.home, user });
  const offerings = new AgentOfferings({
    registry,
    boundary: { env: { ...process.env, ...deps.agentEnv?.env }, user },
    logger: app.log,
    timeoutMs: config.agentQueryTimeoutMs,
  });
  const baseDir = deps.baseDir ?? process.cwd();
  const sessions = new SessionManager({
    registry,
    ids,
    clock: deps.clock ?? systemClock,
    limits: { maxEvents: config.maxEventsPerSession, maxBytes: config.maxBytesPerSession },
    maxSessions: config.maxSessions,
    endedSessionTtlMs: config.endedSessionTtlMs,
    hitl: { policy: config.permissionPolicy, timeoutMs: config.hitlTimeoutMs },
    baseDir,
    logger: app.log,
    prepare: async (request, log) => {
      if (user) {
        const cwd = await resolveCwd(request.cwd, baseDir);
        if (!(await agentCanUse(cwd, user))) {
          throw new ApiError('invalid_cwd', `The agent user '${user.name}' cannot read cwd '${cwd}': it needs read and search rights on it, and search rights on every directory above it.`, { cwd });
        }
      }
      const resolved = await offerings.resolve(request);
      if (!config.noAutoInstall) await agents.ensureInstalled(request.agent, log);
      return resolved;
    },
  });

  installProblemHandlers(app);
  await installCors(app, config);
  installAuth(app, config.token);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  // An empty body with Content-Type: application/json is "no body", not a parse error: curl users
  // often send the header on bodiless POSTs such as /interrupt.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text, refusePoison));
    } catch (err) {
      done(err instanceof ApiError ? err : new ApiError('malformed_json', `The body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  app.removeContentTypeParser('text/plain'); // Fastify's default would let text bodies reach validation (400, not 415)

  let draining = false;
  app.addHook('onRequest', async (req) => {
    if (draining && req.routeOptions.url !== '/v1/health') {
      throw new ApiError('shutting_down', 'The daemon is shutting down; retry against its replacement.');
    }
  });
  daemonRoutes(app, () => draining);
  sessionRoutes(app, sessions);
  eventRoutes(app, sessions, config);
  turnStreamRoutes(app, sessions, config);
  agentRoutes(app, agents, offerings);

  // preClose, not onClose: the server waits for open connections before onClose runs, and live
  // SSE streams only end once their sessions are closed.
  app.addHook('preClose', async () => {
    draining = true;
    await sessions.closeAll();
  });
  return { app, sessions, config, agents };
}

/** JSON reviver refusing the keys of prototype-poisoning payloads (as Fastify's own parser does). */
function refusePoison(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) {
    throw new ApiError('invalid_request', 'The body must not contain __proto__ or constructor.prototype keys.');
  }
  return value;
}
