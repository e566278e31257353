// How Codex is run: ONE long-lived `codex app-server --strict-config` per session, JSON-RPC over
// stdio (src/agents/json-rpc.ts). Protocol facts (0.169.0) are in
// test/agents/codex/fixtures/recorded/README.md and docs/codex.md; the shapes written here are those of
// `codex app-server generate-json-schema` (v2).
//
//   start      spawn, `initialize` → `initialized`, then `thread/start` (or `thread/resume` with the
//              nativeSessionId, which is the thread id) with the MCP servers as `config`
//              (mcp.ts); ready = the thread exists and its MCP servers have started
//   send       `turn/start {threadId, input, effort?, collaborationMode?}` (effort = the session's
//              variant, collaborationMode for agentMode plan: modes.ts): text, images as
//              `localImage` inputs, other attachments named by path in the text
//   replies    a JSON-RPC response to the server's request, found by its id (or the item id):
//              approvals `{decision}`, request_user_input `{answers: {<question id>: {answers}}}`
//   interrupt  `turn/interrupt {threadId, turnId}` with the turn id of the running turn
//   terminate  every pending server request declined, then the process group killed
//
// permissionMode → thread approvalPolicy + sandbox (docs/codex.md):
//   default      untrusted  + workspace-write     writes and commands (all but known-safe reads) are asked
//   acceptEdits  on-request + workspace-write     writes inside the work dir are not asked
//   plan         on-request + read-only           nothing is written without an approval
//   bypass       never      + danger-full-access  nothing is asked
// (On 0.169.0 `on-request` + `workspace-write` asks nothing for writes in the work dir: the
//  sandbox allows them, so it cannot serve as the asking mode.)
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import type { ChildProcess } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import { agentLocator } from '../locator.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions } from '../types.js';
import { codexCapabilities } from './capabilities.js';
import { listCodexModels, listCodexModes, type CatalogueDeps } from './offerings.js';
import { codexConverter } from './convert.js';
import { JsonRpcPeer, type RpcId, type RpcServerRequest } from '../json-rpc.js';
import { elicitationContent } from './elicitation.js';
import { turnInput, userInputAnswers } from './input.js';
import { codexMcpServers, McpStartup } from './mcp.js';
import { CODEX_MODES, collaborationMode, needsExperimentalApi } from './modes.js';
import { CODEX_MODELS } from './models.js';

export const CODEX_ARGS = ['app-server', '--strict-config'];
export const CLIENT_INFO = { name: 'agentwire', title: null, version: '0.0.0' };

/** Resolves the codex executable, or throws a catalogue error. */
export type LocateCodex = () => Promise<string>;

/** The default locator: --codex-bin, the agents dir's install, PATH (src/agents/discovery.ts). */
export function codexLocator(config: Partial<Pick<Config, 'agentsDir' | 'codexBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateCodex {
  return agentLocator('codex', 'Codex', config, env);
}

export function createCodexDriver(limits: ProcessLimits, locate: LocateCodex = codexLocator(), onQuerySpawn?: (pid: number | undefined) => void): AgentDriver {
  const catalogue: CatalogueDeps = { limits, locate, args: CODEX_ARGS, clientInfo: CLIENT_INFO, ...(onQuerySpawn ? { onSpawn: onQuerySpawn } : {}) };
  return {
    id: 'codex',
    capabilities: codexCapabilities,
    converter: codexConverter,
    modes: CODEX_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: CODEX_MODELS,
    listModels: (ctx) => listCodexModels(ctx, catalogue),
    listModes: (ctx) => listCodexModes(ctx, catalogue),
    start: (options, sink) => startCodex(options, sink, limits, locate),
    // The app-server could take another cwd per thread, but a spare's thread is started already
    // (that is most of its start-up): its cwd, policy and model are fixed with it.
    spareServes: sameSpareOptions,
  };
}

/** thread/start's approvalPolicy and sandbox for a permissionMode (see the table at the top). */
export function codexPolicy(permissionMode: string): { approvalPolicy: string; sandbox: string } {
  switch (permissionMode) {
    case 'bypass':
      return { approvalPolicy: 'never', sandbox: 'danger-full-access' };
    case 'acceptEdits':
      return { approvalPolicy: 'on-request', sandbox: 'workspace-write' };
    case 'plan':
      return { approvalPolicy: 'on-request', sandbox: 'read-only' };
    default:
      return { approvalPolicy: 'untrusted', sandbox: 'workspace-write' };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const APPROVALS = new Set(['item/commandExecution/requestApproval', 'item/fileChange/requestApproval']);
const LEGACY_APPROVALS = new Set(['execCommandApproval', 'applyPatchApproval']);
const USER_INPUT = 'item/tool/requestUserInput';
const ELICITATION = 'mcpServer/elicitation/request';
const PERMISSIONS = 'item/permissions/requestApproval';
/** Requests kept for a client reply; any other server request is answered with an error at once. */
const ANSWERABLE = new Set([...APPROVALS, ...LEGACY_APPROVALS, USER_INPUT, ELICITATION, PERMISSIONS]);

/** The "no" answer to a pending server request (reject, or terminate). */
function declineResult(request: RpcServerRequest): unknown {
  if (APPROVALS.has(request.method)) return { decision: 'decline' };
  if (LEGACY_APPROVALS.has(request.method)) return { decision: 'denied' };
  if (request.method === USER_INPUT) return { answers: {} };
  if (request.method === ELICITATION) return { action: 'decline', content: null };
  return { permissions: {}, scope: 'turn' };
}

async function startCodex(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateCodex): Promise<AgentHandle> {
  const executable = await locate();
  const rpcTimeout = Math.max(limits.startTimeoutMs, 5_000);
  /** The server's pending requests by JSON-RPC id (as a string). */
  const pending = new Map<string, RpcServerRequest>();
  let threadId: string | undefined;
  let turnId: string | undefined;
  let turnKnown: (() => void) | undefined;
  let peer: JsonRpcPeer | undefined;
  /** The thread's model (thread/start's answer): a collaboration mode's settings name it. */
  let threadModel = options.model ?? '';
  const mcp = new McpStartup(Object.keys(options.mcp ?? {}));

  const io = (err: unknown) =>
    new ApiError('agent_io_failed', `Codex did not accept input: ${(err as Error).message}`, { agent: 'codex' });

  const onRequest = (request: RpcServerRequest) => {
    if (ANSWERABLE.has(request.method)) {
      pending.set(String(request.id), request);
      return;
    }
    // Tool calls of dynamic tools, auth refreshes, attestations: nothing agentwire registers or holds.
    void peer?.respondError(request.id, { code: -32601, message: `agentwire does not handle '${request.method}' requests` }).catch(() => {});
  };
  const onNotification = (n: { method: string; params?: unknown }) => {
    const params = isObject(n.params) ? n.params : {};
    if (n.method === 'turn/started' && isObject(params.turn) && typeof params.turn.id === 'string') {
      turnId = params.turn.id;
      turnKnown?.();
    } else if (n.method === 'turn/completed') {
      if (isObject(params.turn) && params.turn.id === turnId) turnId = undefined;
    } else if (n.method === 'serverRequest/resolved' && isId(params.requestId)) {
      pending.delete(String(params.requestId));
    } else if (n.method === 'mcpServer/startupStatus/updated' && typeof params.name === 'string' && typeof params.status === 'string') {
      mcp.update(params.name, params.status);
    }
  };

  const spawned = await JsonRpcPeer.spawn(
    {
      command: executable,
      args: CODEX_ARGS,
      cwd: options.cwd,
      env: options.env,
      ...processSpawnOptions(limits, options.logger),
    },
    { native: (m) => sink.native(m), onRequest, onNotification },
  );
  peer = spawned.peer;
  const rpc = spawned.peer;
  const proc: ChildProcess = spawned.child;

  const handshake = async () => {
    const capabilities = needsExperimentalApi(options.agentMode) ? { experimentalApi: true } : null;
    await rpc.request('initialize', { clientInfo: CLIENT_INFO, capabilities }, limits.startTimeoutMs);
    await rpc.notify('initialized');
    const policy = codexPolicy(options.permissionMode);
    const mcpServers = options.mcp && Object.keys(options.mcp).length > 0 ? codexMcpServers(options.mcp) : undefined;
    const common = {
      cwd: options.cwd,
      ...policy,
      ...(options.model ? { model: options.model } : {}),
      ...(mcpServers ? { config: { mcp_servers: mcpServers } } : {}),
    };
    const result = options.nativeSessionId
      ? // excludeTurns: the daemon has the history already; without it Codex answers with the whole
        // thread and a deprecationNotice for "full-history hydration" (0.169.0).
        await rpc.request('thread/resume', { threadId: options.nativeSessionId, excludeTurns: true, ...common }, limits.startTimeoutMs)
      : await rpc.request('thread/start', common, limits.startTimeoutMs);
    const thread = isObject(result) && isObject(result.thread) ? result.thread : undefined;
    if (!thread || typeof thread.id !== 'string') throw new Error(`no thread in the answer: ${JSON.stringify(result).slice(0, 200)}`);
    if (isObject(result) && typeof result.model === 'string') threadModel = result.model;
    // MCP servers start after the thread; ready means their tools are there for the first turn.
    // One that fails is reported by the converter (a status item) and the session goes on without it.
    if (!(await mcp.settled(limits.startTimeoutMs))) options.logger.warn({ mcp: mcp.snapshot() }, 'codex: MCP servers still starting; the session starts anyway');
    return thread.id;
  };
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), limits.startTimeoutMs).unref());
  const first = await Promise.race([
    handshake().then(
      (id) => ({ id }),
      (err: Error) => ({ error: err.message }),
    ),
    proc.exited.then((exit) => ({ exit })),
    timeout,
  ]);
  if (first === 'timeout' || !('id' in first)) {
    const exit = first !== 'timeout' && 'exit' in first ? first.exit : await proc.kill();
    const why =
      first === 'timeout'
        ? 'did not start a thread in time'
        : 'error' in first
          ? `did not start a thread: ${first.error}`
          : `exited with code ${exit.exitCode ?? exit.signal} before it was ready`;
    if (first !== 'timeout' && 'error' in first) await proc.kill();
    throw new ApiError('agent_start_failed', `Codex ${why}.${exit.stderr.head ? ` stderr: ${exit.stderr.head}` : ''}`, { agent: 'codex' });
  }
  threadId = first.id;
  const thread = threadId;
  proc.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));

  const take = (id: string): RpcServerRequest => {
    let request = pending.get(id);
    if (!request) request = [...pending.values()].find((r) => isObject(r.params) && (r.params.itemId === id || r.params.callId === id));
    if (!request) throw new ApiError('agent_io_failed', `Codex has no pending request '${id}'.`, { agent: 'codex' });
    pending.delete(String(request.id));
    return request;
  };
  const respond = (id: RpcId, result: unknown) => rpc.respond(id, result).catch((err) => Promise.reject(io(err)));

  return {
    get pid() {
      return proc.pid;
    },
    send: async (turn) => {
      const input = turnInput(turn, options.cwd);
      // The response can come after turn/started (README): the turn id is taken from either.
      turnId = undefined;
      const mode = collaborationMode(options.agentMode, threadModel, options.variant);
      const params = { threadId: thread, input, ...(options.variant ? { effort: options.variant } : {}), ...(mode ? { collaborationMode: mode } : {}) };
      const result = await rpc.request('turn/start', params, rpcTimeout).catch((err) => Promise.reject(io(err)));
      if (isObject(result) && isObject(result.turn) && typeof result.turn.id === 'string' && turnId === undefined) {
        turnId = result.turn.id;
        turnKnown?.();
      }
    },
    replyPermission: (id, reply: PermissionReply) => {
      const request = take(id);
      if (reply === 'reject') return respond(request.id, declineResult(request));
      if (LEGACY_APPROVALS.has(request.method)) return respond(request.id, { decision: reply === 'always' ? 'approved_for_session' : 'approved' });
      if (request.method === ELICITATION) {
        // Codex's MCP tool approval (elicitation.ts): 'always' persists it for the session.
        return respond(request.id, { action: 'accept', content: {}, ...(reply === 'always' ? { _meta: { persist: 'session' } } : {}) });
      }
      if (request.method === PERMISSIONS) {
        const params = isObject(request.params) ? request.params : {};
        return respond(request.id, { permissions: params.permissions ?? {}, scope: reply === 'always' ? 'session' : 'turn' });
      }
      return respond(request.id, { decision: reply === 'always' ? 'acceptForSession' : 'accept' });
    },
    replyQuestion: (id, answers) => {
      const request = take(id);
      if (answers === null) return respond(request.id, declineResult(request));
      if (request.method === USER_INPUT) return respond(request.id, { answers: userInputAnswers(request.params, answers) });
      if (request.method === ELICITATION) {
        const schema = isObject(request.params) ? request.params.requestedSchema : undefined;
        return respond(request.id, { action: 'accept', content: elicitationContent(schema, answers) });
      }
      return respond(request.id, { decision: 'accept' });
    },
    interrupt: async () => {
      if (turnId === undefined) {
        // turn/start was sent but neither its answer nor turn/started has arrived yet.
        await new Promise<void>((r) => {
          const timer = setTimeout(r, 5_000).unref();
          turnKnown = () => (clearTimeout(timer), (turnKnown = undefined), r());
        });
      }
      if (turnId === undefined) throw new ApiError('agent_io_failed', 'Codex has no running turn to interrupt.', { agent: 'codex' });
      await rpc.request('turn/interrupt', { threadId: thread, turnId }, rpcTimeout).catch((err) => Promise.reject(io(err)));
    },
    terminate: async () => {
      // Nothing is left hanging in the thread's history as approved: every open request is declined.
      const open = [...pending.values()];
      pending.clear();
      await Promise.all(open.map((r) => rpc.respond(r.id, declineResult(r)).catch(() => undefined)));
      await proc.kill();
    },
  };
}

const isId = (v: unknown): v is RpcId => typeof v === 'number' || typeof v === 'string';
