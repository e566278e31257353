// How OpenCode is run: ONE `opencode serve` per session (docs/opencode.md says why), driven over
// its HTTP API with one `GET /event` SSE subscription. Endpoints are those of the pinned server's
// own OpenAPI document (GET /doc, 1.18.33):
//
//   start      spawn, wait for its "listening" line, subscribe to /event, POST /session
//              (resume: GET /session/{nativeSessionId} instead)
//   send       POST /session/{id}/prompt_async {parts, model?, agent, variant?} (204 at once)
//   replies    POST /permission/{id}/reply {reply}; POST /question/{id}/reply {answers} | /reject
//   interrupt  POST /session/{id}/abort
//   terminate  close the stream, kill the process group
//
// Events are routed by session id (route.ts): the session's own, those of no session, and the
// permission and question requests of its subagents' child sessions.
// The server is watched through its process and its stream: if the stream ends while the process
// lives, the process is killed and its exit reported as a crash, so a session never hangs on it.
import { ApiError } from '../../errors.js';
import type { Config } from '../../config.js';
import { agentLocator } from '../discovery.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions } from '../types.js';
import { opencodeCapabilities } from './capabilities.js';
import { modelRef, promptParts, serverConfig } from './config.js';
import { MCP_SERVERS, opencodeConverter, RESUMED } from './convert.js';
import { callJson } from './http.js';
import { listModels, listModes } from './queries.js';
import { SessionRouter } from './route.js';
import { startServer } from './server.js';
import { subscribe } from './sse.js';

export type LocateOpencode = () => Promise<string>;

export function opencodeLocator(config: Partial<Pick<Config, 'agentsDir' | 'opencodeBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateOpencode {
  return agentLocator('opencode', 'OpenCode', config, env);
}

export function createOpencodeDriver(limits: ProcessLimits, locate: LocateOpencode = opencodeLocator()): AgentDriver {
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
    start: (options, sink) => startOpencode(options, sink, limits, locate),
    // The server's project directory and permission config are fixed at spawn, its session is
    // created already, and the handle binds model, agent and variant at start.
    spareServes: sameSpareOptions,
  };
}

/** Largest SSE frame kept whole; bigger ones are cut and reported as agent.unparsed. */
const frameLimit = (limits: ProcessLimits) => limits.maxLineChars;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The OpenCode agent a prompt names: the session's agentMode; for the daemon's generic 'default',
 *  none (OpenCode's own default, `build`), or `plan` when the permissionMode is plan. */
export function agentFor(agentMode: string, permissionMode: string): string | undefined {
  if (agentMode !== 'default') return agentMode;
  return permissionMode === 'plan' ? 'plan' : undefined;
}

async function startOpencode(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateOpencode): Promise<AgentHandle> {
  const executable = await locate();
  const timeout = Math.max(limits.startTimeoutMs, 5_000);
  const fail = (why: string) => new ApiError('agent_start_failed', `OpenCode ${why}`, { agent: 'opencode' });
  const env = { ...options.env, OPENCODE_CONFIG_CONTENT: JSON.stringify(serverConfig(options)) };
  const server = await startServer(executable, options.cwd, env, limits, options.logger).catch((err: Error) => Promise.reject(fail(err.message)));
  const { proc, url } = server;

  let sessionId: string | undefined;
  /** Events that came before the POST /session answer named our session (bounded). */
  let early: unknown[] = [];
  let streamLost = false;
  let created: (() => void) | undefined;
  const createdSeen = new Promise<void>((resolve) => (created = resolve));
  let router: SessionRouter | undefined;
  const deliver = (event: unknown) => {
    if (!router?.accepts(event)) return;
    sink.native(event);
    if (isObject(event) && event.type === 'session.created') created?.();
  };
  let stream: { close(): void } | undefined;
  try {
    stream = await subscribe(
      url,
      frameLimit(limits),
      {
        event: (event) => {
          if (sessionId !== undefined) return deliver(event);
          if (early.length < 1_000) early.push(event);
        },
        end: (reason) => {
          if (reason === 'closed' || !proc.running) return;
          // The server lives but its stream is gone: nothing more would reach the session.
          options.logger.warn({ reason }, 'opencode event stream ended; killing the server');
          streamLost = true;
          void proc.kill();
        },
      },
      timeout,
    );
    if (options.mcp && Object.keys(options.mcp).length > 0) sink.native({ type: MCP_SERVERS, properties: { servers: Object.keys(options.mcp) } });
    if (options.nativeSessionId) {
      // Resume: the session is in OpenCode's storage (under the user's data dir). No
      // session.created comes for it; its GET answer starts the session instead (RESUMED).
      const path = `/session/${encodeURIComponent(options.nativeSessionId)}`;
      const answer = await callJson(url, 'GET', path, undefined, timeout);
      if (!isObject(answer.json) || answer.json.id !== options.nativeSessionId) throw new Error(`GET ${path} answered ${JSON.stringify(answer.json).slice(0, 200)}`);
      sessionId = answer.json.id;
      router = new SessionRouter(sessionId);
      sink.native({ type: RESUMED, properties: { sessionID: sessionId, info: answer.json } });
      early.forEach(deliver);
      early = [];
    } else {
      const answer = await callJson(url, 'POST', '/session', {}, timeout);
      if (!isObject(answer.json) || typeof answer.json.id !== 'string') throw new Error(`POST /session answered ${JSON.stringify(answer.json).slice(0, 200)}`);
      sessionId = answer.json.id;
      router = new SessionRouter(sessionId);
      // Its session.created event (the session's start, with its id) may come before or after the
      // answer: ready once it has been delivered, so the session is created with its native id.
      const waiting = early;
      early = [];
      waiting.forEach(deliver);
      let timer: NodeJS.Timeout | undefined;
      const seen = await Promise.race([createdSeen.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeout)))]);
      clearTimeout(timer);
      if (!seen) throw new Error('no session.created event for the new session');
    }
  } catch (err) {
    stream?.close();
    await proc.kill();
    throw fail(`did not start a session: ${(err as Error).message}`);
  }
  const id = sessionId;
  proc.exited.then((exit) => {
    stream?.close();
    const requested = exit.killed && !streamLost;
    sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested });
  });

  const io = (err: unknown) => new ApiError('agent_io_failed', `OpenCode did not accept the call: ${(err as Error).message}`, { agent: 'opencode' });
  const call = (method: string, path: string, body?: unknown) => callJson(url, method, path, body, timeout).catch((err) => Promise.reject(io(err)));
  const model = modelRef(options.model);
  const agent = agentFor(options.agentMode, options.permissionMode);

  return {
    get pid() {
      return proc.pid;
    },
    send: async (turn) => {
      const body = {
        parts: promptParts(turn.message, turn.attachments),
        ...(agent ? { agent } : {}),
        ...(model ? { model } : {}),
        ...(options.variant ? { variant: options.variant } : {}),
      };
      await call('POST', `/session/${id}/prompt_async`, body);
    },
    replyPermission: async (permissionId, reply) => {
      await call('POST', `/permission/${encodeURIComponent(permissionId)}/reply`, { reply });
    },
    replyQuestion: async (questionId, answers) => {
      const path = `/question/${encodeURIComponent(questionId)}`;
      await (answers === null ? call('POST', `${path}/reject`) : call('POST', `${path}/reply`, { answers }));
    },
    interrupt: async () => {
      await call('POST', `/session/${id}/abort`);
    },
    terminate: async () => {
      stream?.close();
      await proc.kill();
    },
  };
}
