// The generic ACP driver: ONE long-lived agent process per session speaking the Agent Client
// Protocol (JSON-RPC 2.0 over stdio, connection.ts). Built from a per-agent definition
// (definition.ts); nothing here knows one agent from another.
//
//   start      spawn <command> <args> <definition session args>, initialize, session/new (or
//              session/resume / session/load with the nativeSessionId, which is ACP's sessionId),
//              then the session's agentMode and model (settings.ts); ready = the session exists
//   send       session/prompt {sessionId, prompt} (input.ts); its answer, at the end of the turn,
//              carries the stop reason and ends the turn (the converter reads it): send does not
//              wait for it
//   replies    the answer to session/request_permission, found by its JSON-RPC id: the offered
//              option of the reply's kind (permission.ts)
//   interrupt  session/cancel; every pending permission request is answered `cancelled` (the
//              protocol asks it); the prompt then answers with stopReason cancelled
//   terminate  pending permission requests answered `cancelled`, then the process group killed
// Any other request from the agent (fs/*, terminal/*, newer ones) is answered at once with
// JSON-RPC "method not found": an unanswered request stalls an agent until it times out.
import { ApiError } from '../../errors.js';
import type { Capabilities } from '../../schema/agents.js';
import type { PermissionMode, PermissionReply } from '../../schema/api.js';
import type { RpcServerRequest } from '../json-rpc.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions } from '../types.js';
import { listAcpModels, listAcpModes } from './offerings.js';
import { acpBaseCapabilities, announcedCapabilities } from './capabilities.js';
import { initialize, openSession, spawnAcp } from './connection.js';
import { acpConverter } from './convert.js';
import type { AcpAgentDefinition } from './definition.js';
import { acpMcpServers, promptBlocks, type PromptCapabilities } from './input.js';
import { RequestPermission, type InitializeResult } from './native.js';
import { CANCELLED, permissionOutcome } from './permission.js';
import { applySettings } from './settings.js';

/** Finds the agent's executable, or throws a catalogue error (agent_not_available). */
export type LocateAcp = () => Promise<string>;

/** A turn may run this long; the peer needs a bound, and setTimeout takes at most 2^31-1 ms. */
const PROMPT_TIMEOUT_MS = 2 ** 31 - 1;
const PERMISSION = 'session/request_permission';

export function createAcpDriver(definition: AcpAgentDefinition, limits: ProcessLimits, locate: LocateAcp, find?: () => Promise<string | undefined>): AgentDriver {
  /** What the agent announced in its last initialize: the coverage row follows it. */
  let announced: Partial<Capabilities> = {};
  const learn = (init: InitializeResult) => void (announced = announcedCapabilities(init));
  const deps = { definition, limits, locate, learn };
  return {
    id: definition.id,
    get capabilities(): Capabilities {
      return { ...acpBaseCapabilities, ...definition.capabilities, ...announced };
    },
    converter: acpConverter,
    modes: definition.modes ?? [{ id: 'default', name: 'Default', description: "The agent's own default mode" }],
    permissionModes: definition.permissionModes ?? ['default'],
    models: definition.models ?? { models: [] },
    listModels: (ctx) => listAcpModels(ctx, deps),
    listModes: (ctx) => listAcpModes(ctx, deps),
    ...(definition.install ? { npmPackage: definition.install } : {}),
    ...(find ? { findExecutable: find } : {}),
    start: (options, sink) => startAcp(options, sink, deps),
  };
}

export interface AcpDeps {
  definition: AcpAgentDefinition;
  limits: ProcessLimits;
  locate: LocateAcp;
  learn(init: InitializeResult): void;
}

async function startAcp(options: StartOptions, sink: AgentSink, deps: AcpDeps): Promise<AgentHandle> {
  const { definition, limits } = deps;
  const executable = await deps.locate();
  const extra = (await definition.session?.(options)) ?? {};
  /** The agent's pending permission requests by JSON-RPC id (as text). */
  const pending = new Map<string, RpcServerRequest>();
  let replaying = false;
  /** After session/load until our first prompt: an agent may go on replaying after its answer
   *  (Gemini CLI streams the history without waiting for it), so conversation updates are history. */
  let loaded = false;
  /** The session is open: from now on every answer is the turn's business. */
  let ready = false;
  const title = definition.title;
  const io = (err: unknown) => new ApiError('agent_io_failed', `${title} did not accept input: ${(err as Error).message}`, { agent: definition.id });

  const { peer: rpc, child: proc } = await spawnAcp(
    {
      command: executable,
      args: [...definition.args, ...(extra.args ?? [])],
      cwd: options.cwd,
      env: { ...extra.env, ...options.env },
      ...processSpawnOptions(limits, options.logger),
    },
    {
      native: (m) => {
        // An error answer to the start-up's own requests (initialize, session/new|resume|load,
        // set_mode/model) fails the start, which the daemon reports once (agent_start_failed,
        // native_resume_failed); given to the converter it would also end the message's turn.
        if (!ready && isObject(m) && !('method' in m) && 'error' in m) return;
        if (replaying) {
          // session/load's replay: the daemon has this history. Its answer ends the replay.
          if (isObject(m) && m.method === 'session/update') return;
          if (isObject(m) && !('method' in m) && 'id' in m) replaying = false;
        }
        if (loaded && isHistoryUpdate(m)) return;
        sink.native(m);
      },
      onRequest: (request) => {
        if (request.method === PERMISSION) return void pending.set(String(request.id), request);
        void rpc.respondError(request.id, { code: -32601, message: `Method not found: agentwire does not offer '${request.method}'` }).catch(() => {});
      },
      onNotification: (n) => {
        // The agent withdrew a request (the converter resolves the permission).
        if (n.method === '$/cancel_request' && isObject(n.params)) pending.delete(String(n.params.requestId));
      },
    },
  );

  let promptCaps: PromptCapabilities = {};
  const handshake = async () => {
    const init = await initialize(rpc, limits.startTimeoutMs);
    deps.learn(init);
    checkMcpTransports(options.mcp, init, definition.id);
    promptCaps = init.agentCapabilities?.promptCapabilities ?? {};
    const request = { cwd: options.cwd, mcpServers: acpMcpServers(options.mcp), nativeSessionId: options.nativeSessionId };
    const opened = await openSession(rpc, init, request, limits.startTimeoutMs, (on) => void ((replaying = on), (loaded ||= on)));
    const agentMode = options.agentMode === 'default' ? (definition.permissionModeIds?.[options.permissionMode as PermissionMode] ?? 'default') : options.agentMode;
    await applySettings(rpc, opened.sessionId, opened.setup, { agentMode, model: options.model }, limits.startTimeoutMs, definition.id);
    return opened.sessionId;
  };
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), limits.startTimeoutMs).unref());
  const first = await Promise.race([
    handshake().then(
      (id) => ({ id }),
      (err: Error) => ({ error: err }),
    ),
    proc.exited.then((exit) => ({ exit })),
    timeout,
  ]);
  if (first === 'timeout' || !('id' in first)) {
    const exit = first !== 'timeout' && 'exit' in first ? first.exit : await proc.kill();
    if (first !== 'timeout' && 'error' in first && first.error instanceof ApiError) throw first.error;
    const why =
      first === 'timeout'
        ? 'did not open a session in time'
        : 'error' in first
          ? `did not open a session: ${first.error.message}`
          : `exited with code ${exit.exitCode ?? exit.signal} before it was ready`;
    throw new ApiError('agent_start_failed', `${title} ${why}.${exit.stderr.head ? ` stderr: ${exit.stderr.head}` : ''}`, { agent: definition.id });
  }
  const sessionId = first.id;
  ready = true;
  proc.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));

  /** Answers every pending permission request `cancelled` (interrupt, terminate). */
  const cancelPending = async () => {
    const open = [...pending.values()];
    pending.clear();
    await Promise.all(open.map((r) => rpc.respond(r.id, CANCELLED).catch(() => undefined)));
  };

  return {
    get pid() {
      return proc.pid;
    },
    send: async (turn) => {
      const prompt = await promptBlocks(turn, options.cwd, promptCaps);
      if (!proc.running) throw io(new Error('the agent process has exited'));
      loaded = false;
      // Settled by the converter (the answer's stop reason, or an error answer) and by the exit.
      void rpc.request('session/prompt', { sessionId, prompt }, PROMPT_TIMEOUT_MS).catch(() => {});
    },
    replyPermission: async (id, reply: PermissionReply) => {
      const request = pending.get(id);
      if (!request) throw new ApiError('agent_io_failed', `${title} has no pending permission request '${id}'.`, { agent: definition.id });
      const params = RequestPermission.safeParse(request.params);
      const outcome = permissionOutcome(reply, params.success ? params.data.options : []);
      if (!outcome) {
        throw new ApiError('invalid_request', `${title} offers no option to allow this request; reply 'reject' instead.`, { agent: definition.id, permissionId: id });
      }
      pending.delete(id);
      await rpc.respond(request.id, outcome).catch((err) => Promise.reject(io(err)));
    },
    replyQuestion: async (id) => {
      throw new ApiError('agent_io_failed', `${title} has no pending question '${id}' (ACP agents ask no questions).`, { agent: definition.id });
    },
    interrupt: async () => {
      await rpc.notify('session/cancel', { sessionId }).catch((err) => Promise.reject(io(err)));
      await cancelPending();
    },
    terminate: async () => {
      await cancelPending();
      await proc.kill();
    },
  };
}

/** An MCP server over http or sse only goes to an agent that announced that transport. */
function checkMcpTransports(mcp: StartOptions['mcp'], init: InitializeResult, agent: string): void {
  const announced = init.agentCapabilities?.mcpCapabilities ?? {};
  for (const [name, server] of Object.entries(mcp ?? {})) {
    if (typeof server.url !== 'string') continue;
    const transport = server.type === 'sse' ? 'sse' : 'http';
    if (!announced[transport]) {
      throw new ApiError('invalid_request', `MCP server '${name}' is ${transport}, which ${agent} does not take (it announced no mcpCapabilities.${transport}); give it as {command, args}.`, { agent, field: 'mcp' });
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Updates that carry the conversation (what session/load replays), as opposed to the agent's state. */
const HISTORY_UPDATES = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan']);

function isHistoryUpdate(m: unknown): boolean {
  return isObject(m) && m.method === 'session/update' && isObject(m.params) && isObject(m.params.update) && HISTORY_UPDATES.has(String(m.params.update.sessionUpdate));
}
