// How OpenCode is run: `opencode serve` processes shared by the sessions whose executable and
// whole environment (config included) are the same, whatever their directories, or one per session
// (--opencode-servers per-session); shared-server.ts keeps them, grants.ts keeps each session's
// `always` answers on a shared one, docs/opencode.md says why and what it costs. Each is driven over
// its HTTP API, every call naming the session's directory (`?directory=`: OpenCode's instance
// there), with one `GET /event?directory=` SSE subscription per directory. Endpoints are those of
// the pinned server's own OpenAPI document (GET /doc, 1.18.33):
//
//   start      a lease on the key's server (spawned, "listening", /event subscribed, when none
//              runs), then POST /session (resume: GET /session/{nativeSessionId} instead)
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
import { ApiError } from '../../errors.js';
import type { Config } from '../../config.js';
import { agentLocator } from '../locator.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentHandle, AgentSink, ProcessExit, StartOptions } from '../types.js';
import { opencodeCapabilities } from './capabilities.js';
import { modelRef, promptParts, serverConfig } from './config.js';
import { ALWAYS_KEPT, MCP_SERVERS, opencodeConverter, RESUMED } from './convert.js';
import { askOf, repliedOf, SessionGrants } from './grants.js';
import { atDirectory, callJson } from './http.js';
import { listModels, listModes } from './offerings.js';
import { SessionRouter, sessionOf } from './route.js';
import { startServer } from './server.js';
import { ServerPool, type ServerLauncher } from './shared-server.js';
import { subscribe } from './sse.js';

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
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The OpenCode agent a prompt names: the session's agentMode; for the daemon's generic 'default',
 *  none (OpenCode's own default, `build`), or `plan` when the permissionMode is plan. */
export function agentFor(agentMode: string, permissionMode: string): string | undefined {
  if (agentMode !== 'default') return agentMode;
  return permissionMode === 'plan' ? 'plan' : undefined;
}

async function startOpencode(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateOpencode, servers: ServerPool): Promise<AgentHandle> {
  const executable = await locate();
  const timeout = Math.max(limits.startTimeoutMs, 5_000);
  const fail = (why: string) => new ApiError('agent_start_failed', `OpenCode ${why}`, { agent: 'opencode' });
  const env = { ...options.env, OPENCODE_CONFIG_CONTENT: JSON.stringify(serverConfig(options)) };
  const lease = await servers.acquire({ executable, cwd: options.cwd, env }, options.logger).catch((err: Error) => Promise.reject(fail(err.message)));
  const { url } = lease;
  /** A call on the session's own instance: the directory it was created in. */
  const api = (method: string, path: string, body?: unknown) => callJson(url, method, atDirectory(path, options.cwd), body, timeout);
  // OpenCode keeps an `always` grant in its instance, for every session on it (tested): on a
  // server others may share, this session's `always` answers are kept here instead (grants.ts).
  const grants = servers.shares ? new SessionGrants() : undefined;
  const answerOnce = (requestId: string) =>
    api('POST', replyPath(requestId), { reply: 'once' }).catch((err: Error) =>
      options.logger.warn({ requestId, err: err.message }, 'could not answer a request its session granted always'),
    );
  /** False for a request this session's grants answer, and for that answer's reply event. */
  const shown = (event: unknown): boolean => {
    if (!grants) return true;
    const ask = askOf(event);
    if (ask && grants.covers(ask)) {
      grants.answeredSilently(ask.id);
      void answerOnce(ask.id);
      return false;
    }
    if (ask) grants.asked(ask);
    const replied = repliedOf(event);
    return replied === undefined || grants.showReply(replied);
  };

  let sessionId: string | undefined;
  /** Events that came before the POST /session answer named our session (bounded). */
  let early: unknown[] = [];
  let created: (() => void) | undefined;
  const createdSeen = new Promise<void>((resolve) => (created = resolve));
  let router: SessionRouter | undefined;
  const deliver = (event: unknown) => {
    if (!router?.accepts(event) || !shown(event)) return;
    sink.native(event);
    if (isObject(event) && event.type === 'session.created') created?.();
  };
  /** The server's end while the session starts (the start fails) or after (the session ends). */
  let ready = false;
  let ended = false;
  let gone: ((why: Error) => void) | undefined;
  const goneEarly = new Promise<never>((_, reject) => (gone = reject));
  goneEarly.catch(() => {});
  const report = (exit: ProcessExit) => {
    if (ended) return;
    ended = true;
    sink.exit(exit);
  };
  lease.attach({
    event: (event) => {
      if (sessionId !== undefined) return deliver(event);
      if (early.length < 1_000 && mayBeOurs(event)) early.push(event);
    },
    exit: (exit, lost) => {
      if (!ready) return gone?.(new Error(`the server exited (${exit.signal ?? `code ${exit.exitCode}`})${lost ? ' after its event stream ended' : ''}`));
      // A crash, or a lost stream (the pool killed the server): never an exit the daemon asked for.
      report({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed && !lost });
      void lease.release();
    },
  });
  try {
    if (options.mcp && Object.keys(options.mcp).length > 0) sink.native({ type: MCP_SERVERS, properties: { servers: Object.keys(options.mcp) } });
    if (options.nativeSessionId) {
      // Resume: the session is in OpenCode's storage (under the user's data dir). No
      // session.created comes for it; its GET answer starts the session instead (RESUMED).
      const path = `/session/${encodeURIComponent(options.nativeSessionId)}`;
      const answer = await Promise.race([api('GET', path), goneEarly]);
      if (!isObject(answer.json) || answer.json.id !== options.nativeSessionId) throw new Error(`GET ${path} answered ${JSON.stringify(answer.json).slice(0, 200)}`);
      sessionId = answer.json.id;
      router = new SessionRouter(sessionId);
      sink.native({ type: RESUMED, properties: { sessionID: sessionId, info: answer.json } });
      early.forEach(deliver);
      early = [];
    } else {
      const answer = await Promise.race([api('POST', '/session', {}), goneEarly]);
      if (!isObject(answer.json) || typeof answer.json.id !== 'string') throw new Error(`POST /session answered ${JSON.stringify(answer.json).slice(0, 200)}`);
      sessionId = answer.json.id;
      router = new SessionRouter(sessionId);
      // Its session.created event (the session's start, with its id) may come before or after the
      // answer: ready once it has been delivered, so the session is created with its native id.
      const waiting = early;
      early = [];
      waiting.forEach(deliver);
      let timer: NodeJS.Timeout | undefined;
      const seen = await Promise.race([createdSeen.then(() => true), goneEarly, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeout)))]);
      clearTimeout(timer);
      if (!seen) throw new Error('no session.created event for the new session');
    }
  } catch (err) {
    ended = true;
    await lease.release();
    throw fail(`did not start a session: ${(err as Error).message}`);
  }
  ready = true;
  const id = sessionId;

  const io = (err: unknown) => new ApiError('agent_io_failed', `OpenCode did not accept the call: ${(err as Error).message}`, { agent: 'opencode' });
  const call = (method: string, path: string, body?: unknown) => api(method, path, body).catch((err) => Promise.reject(io(err)));
  const model = modelRef(options.model);
  const agent = agentFor(options.agentMode, options.permissionMode);

  return {
    get pid() {
      return lease.pid;
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
      if (!grants || reply !== 'always') return void (await call('POST', replyPath(permissionId), { reply }));
      // Kept here, sent as once; the requests already waiting that it covers are answered too,
      // as OpenCode does with its own `always`.
      const covered = grants.grant(permissionId);
      sink.native({ type: ALWAYS_KEPT, properties: { requestID: permissionId } });
      await call('POST', replyPath(permissionId), { reply: 'once' });
      for (const other of covered) await call('POST', replyPath(other.id), { reply: 'once' });
    },
    replyQuestion: async (questionId, answers) => {
      const path = `/question/${encodeURIComponent(questionId)}`;
      await (answers === null ? call('POST', `${path}/reject`) : call('POST', `${path}/reply`, { answers }));
    },
    interrupt: async () => {
      await call('POST', `/session/${id}/abort`);
    },
    terminate: async () => {
      if (ended) return void (await lease.release());
      // Routing stops first, so the session ends as it would with a server of its own (turn
      // ended as terminated, nothing after). On a server other sessions keep, its turn must not
      // run on unowned: it is aborted (which also cancels its pending permission and question
      // requests); an idle session answers true all the same.
      const others = lease.shared;
      const exit = await lease.release();
      report(exit ? { exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: true } : { exitCode: null, signal: null, stderr: { truncated: false }, requested: true });
      if (others) await api('POST', `/session/${id}/abort`).catch((err: Error) => options.logger.warn({ err: err.message }, 'could not abort the session on its shared server'));
    },
  };
}

/** Where a permission request is answered (by the client's reply, or by a grant the driver keeps). */
const replyPath = (requestId: string) => `/permission/${encodeURIComponent(requestId)}/reply`;

/** Before the POST /session answer names the session, what could be its own: events naming no
 *  session and session lifecycle events. Other sessions' traffic on a shared server is not kept. */
function mayBeOurs(event: unknown): boolean {
  return sessionOf(event) === undefined || (isObject(event) && (event.type === 'session.created' || event.type === 'session.updated'));
}
