// How OpenCode is run: `opencode serve` processes shared by the sessions whose executable and
// whole environment (config included) are the same, whatever their directories, or one per session
// (--opencode-servers per-session); shared-server.ts keeps them, grants.ts keeps each session's
// `always` answers on a shared one, docs/opencode.md says why and what it costs. Each is driven over
// its HTTP API, every call naming the session's directory (`?directory=`: OpenCode's instance
// there), with one `GET /event?directory=` SSE subscription per directory. Endpoints are those of
// the pinned server's own OpenAPI document (GET /doc, 1.18.33):
//
//   start      a lease on the key's server (spawned, "listening", /event subscribed, when none
//              runs), then POST /session (resume: GET /session/{nativeSessionId} instead; fork:
//              GET /session/{id}/message, then POST /session/{id}/fork {messageID?}, fork.ts)
//   send       POST /session/{id}/prompt_async {parts, model?, agent, variant?} (204 at once)
//   replies    POST /permission/{id}/reply {reply} (`always` as `once` on a shared server, the
//              grant kept by the driver); POST /question/{id}/reply {answers} | /reject
//   interrupt  POST /session/{id}/abort
//   terminate  on a shared server: POST /session/{id}/abort, stop routing; the last session's
//              terminate kills the process group
//
// Events are routed by session id (route.ts): the session's own, those of no session, and the
// permission and question requests of its subagents' child sessions.
// The server is watched through its process and its stream: if the stream ends while the process
// lives, the process is killed; either way its exit is reported to every session on it as a
// crash, so no session hangs on it.
//
// The live session and its state are in session.ts (OpencodeSession).
import { ApiError } from '../../errors.js';
import type { Config } from '../../config.js';
import { agentLocator } from '../locator.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentSink, StartOptions } from '../types.js';
import { opencodeCapabilities } from './capabilities.js';
import { serverConfig } from './config.js';
import { opencodeConverter } from './convert.js';
import { opencodeForkPoint } from './fork.js';
import { atDirectory, callJson } from './http.js';
import { listModels, listModes } from './offerings.js';
import { startServer } from './server.js';
import { OpencodeSession } from './session.js';
import { ServerPool, type ServerLauncher } from './shared-server.js';
import { subscribe } from './sse.js';

export { agentFor } from './session.js';

export type LocateOpencode = () => Promise<string>;

export function opencodeLocator(config: Partial<Pick<Config, 'agentsDir' | 'opencodeBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateOpencode {
  return agentLocator('opencode', 'OpenCode', config, env);
}

/** `share` false: one server per session (--opencode-servers per-session). */
export function createOpencodeDriver(limits: ProcessLimits, locate: LocateOpencode = opencodeLocator(), share = true): AgentDriver {
  const servers = new ServerPool(serverLauncher(limits), share);
  return {
    id: 'opencode',
    capabilities: opencodeCapabilities,
    converter: opencodeConverter,
    modes: [
      // First, so it is the default: OpenCode picks the agent itself (build; plan under permissionMode plan).
      { id: 'default', name: 'Default', description: "OpenCode's own default agent: build, or plan when permissionMode is plan." },
      { id: 'build', name: 'Build', description: "OpenCode's default agent: runs tools as its permissions allow." },
      { id: 'plan', name: 'Plan', description: 'OpenCode’s planning agent: reads and proposes, does not edit.' },
    ],
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: { models: [] },
    listModels: (ctx) => listModels(locate, limits, ctx),
    listModes: (ctx) => listModes(locate, limits, ctx),
    start: (options, sink) => startOpencode(options, sink, limits, locate, servers),
    // A spare's session is created already, in its directory's instance, under the permission
    // config its server was started with, and the handle binds model, agent and variant at start.
    // A spare on a shared server is a native session made ahead on it (docs/opencode.md).
    spareServes: sameSpareOptions,
    forkPoint: (events) => opencodeForkPoint(events),
  };
}

function serverLauncher(limits: ProcessLimits): ServerLauncher {
  const timeout = Math.max(limits.startTimeoutMs, 5_000);
  return {
    launch: (spec, logger) => startServer(spec.executable, spec.cwd, spec.env, limits, logger),
    subscribe: (url, directory, handlers) => subscribe(url, directory, frameLimit(limits), handlers, timeout),
    dispose: async (url, directory) => void (await callJson(url, 'POST', atDirectory('/instance/dispose', directory), undefined, timeout)),
  };
}

/** Largest SSE frame kept whole; bigger ones are cut and reported as agent.unparsed. */
const frameLimit = (limits: ProcessLimits) => limits.maxLineChars;

/** A lease on the server for the session's executable and environment (config included), then the session on it. */
async function startOpencode(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateOpencode, servers: ServerPool): Promise<OpencodeSession> {
  const executable = await locate();
  const env = { ...options.env, OPENCODE_CONFIG_CONTENT: JSON.stringify(serverConfig(options)) };
  const lease = await servers.acquire({ executable, cwd: options.cwd, env }, options.logger).catch((err: Error) =>
    Promise.reject(new ApiError('agent_start_failed', `OpenCode ${err.message}`, { agent: 'opencode' })),
  );
  return OpencodeSession.start(options, sink, lease, servers.shares, Math.max(limits.startTimeoutMs, 5_000));
}
