// buildApp(deps): the whole daemon as an un-listened Fastify instance (rule: Injectable app). Tests call
// it with a fixed clock and counter ids and use inject(); main.ts listens.
import { join } from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import websocket from '@fastify/websocket';
import { AgentDiscovery } from './agents/discovery.js';
import { defaultAgentsDir } from './agents/install.js';
import { AgentOfferings } from './agents/offerings.js';
import { createRegistry, type AgentRegistry } from './agents/registry.js';
import { ConfigError } from './config-error.js';
import { Config, warmSizes } from './config.js';
import type { Budget } from './schema/usage.js';
import { ApiError } from './errors.js';
import { boundConnections, receiveTimeouts } from './http/connections.js';
import { installCors } from './http/cors.js';
import { inspectorRoutes } from './http/inspector.js';
import { installJsonParser } from './http/json-body.js';
import { installMetricsHooks } from './http/metrics.js';
import { answerConnect, recordRoutes, RouteTable } from './http/methods.js';
import { clientErrorAnswerer, installProblemHandlers, writeRawProblem } from './http/problems.js';
import { registerRoutes } from './http/route.js';
import { ROUTES } from './http/routes.js';
import { requestGate } from './http/request-gate.js';
import { lazyRequestLoggers } from './http/request-logger.js';
import { ZOD_ONLY_SCHEMAS } from './http/validate.js';
import { installRequestLog } from './http/request-log.js';
import { levelEnables, loggerOptions, requestIdOptions } from './logging.js';
import { Metrics } from './metrics/registry.js';
import type { EventStore } from './store/event-store.js';
import { openStore } from './store/open-store.js';
import { logPrepared } from './store/private-dir.js';
import type { AgentBoundary } from './process/agent-env.js';
import { agentCanEnter, agentCanRead, agentCanUse, resolveAgentUser } from './process/agent-user.js';
import { SessionManager } from './sessions/session-manager.js';
import { resolveCwd } from './sessions/session-paths.js';
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
  /** Where log lines go instead of stdout: tests read them, and main.ts gives a terminal the
   *  human format's stream (src/log-format.ts). */
  logStream?: { write(line: string): void };
  /** The environment agent discovery sees (PATH, credential variables) and the HOME it checks for
   *  credential files, default process.env and its HOME; model and mode queries also get it on top
   *  of process.env. Sessions' agents start from process.env (src/process/agent-env.ts). */
  agentEnv?: { env?: NodeJS.ProcessEnv; home?: string };
  /** The event store; default: SQLite in config.dataDir when persistence is on and a data dir is
   *  set (the CLI always sets one), memory otherwise. The app closes it. */
  store?: EventStore;
  /** The built inspector and API reference (dist/web); tests point it at a build of their own. */
  webDir?: string;
  /** Where the token is and how to print it, said in every 401 (the CLI's tokenHelp). */
  tokenHelp?: string;
  /** Called with the Fastify instance before anything is registered on it, so that its hooks run
   *  first, before the request gate: the tests' OpenAPI check (test/support/openapi-tap.ts) sees
   *  every answer, refusals included. */
  instrument?: (app: FastifyInstance) => void;
}

export interface App {
  app: FastifyInstance;
  sessions: SessionManager;
  config: Config;
  agents: AgentDiscovery;
  store: EventStore;
  /** Every route the app serves, as registered (src/http/methods.ts). */
  routes: RouteTable;
}

export async function buildApp(deps: AppDeps = {}): Promise<App> {
  const config = Config.parse(deps.config ?? {});
  const ids = deps.ids ?? randomIds;
  const routes = new RouteTable();
  const timeouts = receiveTimeouts(config.requestTimeoutMs);
  const logging = Boolean(deps.logger || deps.logStream);
  const app = Fastify({
    logger: logging ? loggerOptions(config.logLevel, deps.logStream) : false,
    // Requests are logged at debug only, one line each (src/http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    ...requestIdOptions(ids),
    // req.log is made when a request first logs, not for every request (src/http/request-logger.ts).
    ...(logging ? { childLoggerFactory: lazyRequestLoggers } : {}),
    bodyLimit: config.bodyLimitBytes,
    // A request must arrive whole in time (408); the answer, an SSE stream say, is not bounded.
    requestTimeout: timeouts.requestTimeout,
    clientErrorHandler: clientErrorAnswerer(routes),
    // Node would answer a request without Host with a bare 400; the Host check answers it instead.
    http: { requireHostHeader: false, headersTimeout: timeouts.headersTimeout, connectionsCheckingInterval: timeouts.connectionsCheckingInterval },
    // While draining, our own hook answers (problem+json, and health says "draining").
    return503OnClosing: false,
    // Session ids may be 128 characters; longer ones get a 400 from validation, not a 414.
    routerOptions: { maxParamLength: 256 },
    schemaController: ZOD_ONLY_SCHEMAS,
    // Errors Fastify raises before routing (a bad percent-escape, an over-long path parameter).
    frameworkErrors: (error, _req, reply) => {
      const problem = new ApiError('invalid_request', `The request URL is not valid: ${error.message}`);
      void (reply as FastifyReply).code(problem.status).type('application/problem+json').send(problem.toProblem());
    },
  });
  deps.instrument?.(app);
  // Start-up refusals (ConfigError): an unknown agent user, a daemon that cannot switch to it, a
  // token file that user could read.
  const user = config.agentUser ? resolveAgentUser(config.agentUser) : undefined;
  if (user && config.tokenFile && (await agentCanRead(config.tokenFile, user))) {
    throw new ConfigError(`--token-file ${config.tokenFile}: the agent user '${user.name}' can read it; make it readable by the daemon only (chmod 600)`);
  }
  const boundary: AgentBoundary = { env: process.env, user };
  // Agent CLIs live in the data dir unless --agents-dir says otherwise. Resolved here, from the
  // daemon's own environment: an agent's environment (its XDG_DATA_HOME, say) must not move them.
  const agentsDir = config.agentsDir ?? (config.dataDir ? join(config.dataDir, 'agents') : defaultAgentsDir());
  const agentConfig = { ...config, agentsDir };
  const registry = deps.registry ?? createRegistry({ ...agentConfig, boundary }, deps.agentEnv?.env);
  const metrics: Metrics = new Metrics({ sessions: () => sessions.all(), warm: () => sessions.warmCounts(), connections: () => connections.open });
  const connections = boundConnections(app.server, config.maxConnections, () => metrics.connectionRefused());
  const warm = warmSizes(config.warm);
  for (const agent of Object.keys(warm)) {
    if (!registry[agent as keyof AgentRegistry]?.spareServes) throw new ConfigError(`--warm ${agent}=…: agent '${agent}' keeps no warm spares in this build`);
  }
  // Agents look for their credential files in their own HOME: the agent user's, with one.
  const agents = new AgentDiscovery({
    registry,
    config: agentConfig,
    ...deps.agentEnv,
    home: deps.agentEnv?.home ?? user?.home,
    user,
    onInstall: (agent, outcome) => metrics.agentInstalled(agent, outcome),
  });
  const store = deps.store ?? openStore(config, (prepared) => logPrepared(app.log, prepared));
  // The data dir is 0700 by now (private-dir.ts); the kernel still has the last word (an ACL).
  if (user && !deps.store && store.durable && config.dataDir && (await agentCanEnter(config.dataDir, user))) {
    store.close();
    throw new ConfigError(`--data-dir ${config.dataDir}: the agent user '${user.name}' can enter or list it (an ACL?); make it readable by the daemon only (setfacl -b, chmod 700) or choose another --data-dir`);
  }
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
    budget: defaultBudget(config),
    baseDir,
    logger: app.log,
    store,
    retentionMs: config.retentionMs,
    deletedRetentionMs: config.deletedRetentionMs,
    maxStoreBytes: config.maxStoreMb * 1024 * 1024,
    onEvent: metrics.events.observe,
    agentUser: user,
    warm,
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

  // GET /v1/acp upgrades through the router, so the request gate checks it as every route
  // (src/http/acp.ts); a frame is bounded as a body is. Registered before the gate: its onRequest
  // hook only marks upgrade requests, and an upgrade the gate refuses must be marked for the
  // plugin to close its socket after the problem is written.
  // At shutdown each client is told (1001) and, if it does not finish the close handshake within a
  // second, cut, so a client that stopped reading cannot hold the daemon's close for ws's 30 s.
  await app.register(websocket, {
    options: { maxPayload: config.bodyLimitBytes },
    preClose(done) {
      draining = true; // before the sockets close: a socket the stop closes is not a client leaving (src/http/acp.ts)
      for (const client of app.websocketServer.clients) {
        client.close(1001, 'the daemon is shutting down');
        setTimeout(() => client.terminate(), 1000).unref();
      }
      app.websocketServer.close(() => done());
    },
  });
  // At debug, the request log's hook comes before every check, so that refused requests are logged
  // too; it only waits for the answer (src/http/request-log.ts). At info it is not there at all.
  if (logging && levelEnables(config.logLevel, 'debug')) installRequestLog(app);
  // The request gate: the Host check first (a request for a name that is not ours runs nothing
  // else), then the Origin check (nor does one a page on another origin sent, its CORS preflight
  // included), then the token, the request id, draining and the query string, in one hook
  // (src/http/request-gate.ts). With CORS configured, its hook goes between the Origin check and
  // the token: preflights end there, and refusals still carry its headers.
  let draining = false;
  const gate = requestGate({
    listenHost: config.host,
    allowedHosts: config.allowedHosts,
    corsOrigins: config.corsOrigins,
    token: config.token,
    ...(deps.tokenHelp ? { tokenHelp: deps.tokenHelp } : {}),
    isDraining: () => draining,
    storeFailure: () => store.failure,
  });
  const cors = config.corsOrigins.length > 0;
  app.addHook('onRequest', cors ? gate.front : gate.all);
  recordRoutes(app, routes);
  app.server.on('connect', answerConnect(routes, writeRawProblem));
  installProblemHandlers(app, routes);
  await installCors(app, config);
  if (cors) app.addHook('onRequest', gate.back);
  installJsonParser(app);

  registerRoutes(app, ROUTES, { sessions, registry, agents, offerings, config, metrics, isDraining: () => draining, startedAt: Date.now() });
  installMetricsHooks(app, metrics);
  inspectorRoutes(app, { dir: deps.webDir, tokenRequired: config.token !== undefined });

  // preClose, not onClose: the server waits for open connections before onClose runs, and live
  // SSE streams only end once their sessions are closed.
  app.addHook('preClose', async () => {
    draining = true;
    await sessions.closeAll();
  });
  app.addHook('onClose', async () => store.close());
  const restored = sessions.restoreStored();
  if (restored > 0) app.log.info({ restored }, 'sessions restored from the store');
  app.addHook('onReady', async () => sessions.fillWarmPool());
  return { app, sessions, config, agents, store, routes };
}

/** The --budget-* flags as a budget (docs/budgets.md): what a session created without one gets. */
function defaultBudget(config: Config): Budget {
  return {
    ...(config.budgetMaxTokens !== undefined ? { max_tokens: config.budgetMaxTokens } : {}),
    ...(config.budgetMaxCostUsd !== undefined ? { max_cost_usd: config.budgetMaxCostUsd } : {}),
    ...(config.budgetMaxTurns !== undefined ? { max_turns: config.budgetMaxTurns } : {}),
  };
}
