// One live ACP session: the agent's process, its JSON-RPC peer and what the driver tracks of the
// conversation, as fields a test can read. The protocol steps are at the top of driver.ts.
import { ApiError } from '../../errors.js';
import type { ChildProcess } from '../../process/spawn.js';
import type { PermissionMode, PermissionReply } from '../../schema/api.js';
import type { JsonRpcPeer, RpcNotification, RpcServerRequest } from '../json-rpc.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import { untilReady } from '../readiness.js';
import type { AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { initialize, openSession, spawnAcp } from './connection.js';
import type { AcpAgentDefinition } from './definition.js';
import { openFork } from './fork.js';
import { acpMcpServers, promptBlocks, type PromptCapabilities } from './input.js';
import { RequestPermission, type InitializeResult } from './native.js';
import { CANCELLED, permissionOutcome } from './permission.js';
import { applySettings } from './settings.js';
import { isObject } from '../../util/is-object.js';

/** Finds the agent's executable, or throws a catalogue error (agent_not_available). */
export type LocateAcp = () => Promise<string>;

export interface AcpDeps {
  definition: AcpAgentDefinition;
  limits: ProcessLimits;
  locate: LocateAcp;
  learn(init: InitializeResult): void;
}

/** A turn may run this long; the peer needs a bound, and setTimeout takes at most 2^31-1 ms. */
const PROMPT_TIMEOUT_MS = 2 ** 31 - 1;
const PERMISSION = 'session/request_permission';

export class AcpSession implements AgentHandle {
  /** The agent's pending permission requests by JSON-RPC id (as text). */
  readonly pending = new Map<string, RpcServerRequest>();
  /** session/load is replaying the conversation (its answer ends the replay). */
  replaying = false;
  /** After session/load until our first prompt: an agent may go on replaying after its answer
   *  (Gemini CLI streams the history without waiting for it), so conversation updates are history. */
  loaded = false;
  /** The session is open: from now on every answer is the turn's business. */
  ready = false;
  /** ACP's sessionId (the daemon's native session id), once the session is open. */
  sessionId: string | undefined;
  /** What the agent accepts in a prompt (its initialize answer). */
  promptCaps: PromptCapabilities = {};
  private connection: { peer: JsonRpcPeer; child: ChildProcess } | undefined;

  private constructor(
    private readonly options: StartOptions,
    private readonly sink: AgentSink,
    private readonly deps: AcpDeps,
  ) {}

  /** Spawns the agent, opens the session and resolves once it can take a prompt. */
  static async start(options: StartOptions, sink: AgentSink, deps: AcpDeps): Promise<AcpSession> {
    const { definition, limits } = deps;
    const executable = await deps.locate();
    const extra = (await definition.session?.(options)) ?? {};
    const session = new AcpSession(options, sink, deps);
    session.connection = await spawnAcp(
      {
        command: executable,
        args: [...definition.args, ...(extra.args ?? [])],
        cwd: options.cwd,
        env: { ...extra.env, ...options.env },
        ...processSpawnOptions(limits, options.logger),
      },
      { native: (m) => session.onNative(m), onRequest: (r) => session.onRequest(r), onNotification: (n) => session.onNotification(n) },
    );
    session.sessionId = await untilReady(session.proc, session.handshake(), limits.startTimeoutMs, {
      title: definition.title,
      details: { agent: definition.id },
      timeout: 'did not open a session in time',
      error: (err) => `did not open a session: ${err.message}`,
      keepApiErrors: true,
    });
    session.ready = true;
    session.proc.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));
    return session;
  }

  get proc(): ChildProcess {
    return this.connection!.child;
  }

  private get rpc(): JsonRpcPeer {
    return this.connection!.peer;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** initialize, session/new|resume|load (or a fork, fork.ts), then the agentMode and model; resolves with the sessionId. */
  private async handshake(): Promise<string> {
    const { options, deps } = this;
    const { definition, limits } = deps;
    const init = await initialize(this.rpc, limits.startTimeoutMs);
    deps.learn(init);
    checkMcpTransports(options.mcp, init, definition.id);
    this.promptCaps = init.agentCapabilities?.promptCapabilities ?? {};
    const request = { cwd: options.cwd, mcpServers: acpMcpServers(options.mcp), nativeSessionId: options.nativeSessionId };
    const replaying = (on: boolean) => void ((this.replaying = on), (this.loaded ||= on));
    const opened = options.fork
      ? await openFork(this.rpc, init, request, options.fork, definition.fork, limits.startTimeoutMs, replaying)
      : await openSession(this.rpc, init, request, limits.startTimeoutMs, replaying);
    const agentMode = options.agentMode === 'default' ? (definition.permissionModeIds?.[options.permissionMode as PermissionMode] ?? 'default') : options.agentMode;
    await applySettings(this.rpc, opened.sessionId, opened.setup, { agentMode, model: options.model }, limits.startTimeoutMs, definition.id);
    return opened.sessionId;
  }

  private onNative(m: unknown): void {
    // An error answer to the start-up's own requests (initialize, session/new|resume|load,
    // set_mode/model) fails the start, which the daemon reports once (agent_start_failed,
    // native_resume_failed); given to the converter it would also end the message's turn.
    if (!this.ready && isObject(m) && !('method' in m) && 'error' in m) return;
    if (this.replaying) {
      // session/load's replay: the daemon has this history. Its answer ends the replay.
      if (isObject(m) && m.method === 'session/update') return;
      if (isObject(m) && !('method' in m) && 'id' in m) this.replaying = false;
    }
    if (this.loaded && isHistoryUpdate(m)) return;
    this.sink.native(m);
  }

  private onRequest(request: RpcServerRequest): void {
    if (request.method === PERMISSION) return void this.pending.set(String(request.id), request);
    // (optional: a request in the very first lines may come before the peer is handed over)
    void this.connection?.peer.respondError(request.id, { code: -32601, message: `Method not found: agentwire does not offer '${request.method}'` }).catch(() => {});
  }

  private onNotification(n: RpcNotification): void {
    // The agent withdrew a request (the converter resolves the permission).
    if (n.method === '$/cancel_request' && isObject(n.params)) this.pending.delete(String(n.params.requestId));
  }

  private io(err: unknown): ApiError {
    return new ApiError('agent_io_failed', `${this.deps.definition.title} did not accept input: ${(err as Error).message}`, { agent: this.deps.definition.id });
  }

  async send(turn: TurnInput): Promise<void> {
    const prompt = await promptBlocks(turn, this.options.cwd, this.promptCaps, this.deps.limits.boundary?.user);
    if (!this.proc.running) throw this.io(new Error('the agent process has exited'));
    this.loaded = false;
    // Settled by the converter (the answer's stop reason, or an error answer) and by the exit.
    void this.rpc.request('session/prompt', { sessionId: this.sessionId, prompt }, PROMPT_TIMEOUT_MS).catch(() => {});
  }

  async replyPermission(id: string, reply: PermissionReply): Promise<void> {
    const { title, id: agent } = this.deps.definition;
    const request = this.pending.get(id);
    if (!request) throw new ApiError('agent_io_failed', `${title} has no pending permission request '${id}'.`, { agent });
    const params = RequestPermission.safeParse(request.params);
    const outcome = permissionOutcome(reply, params.success ? params.data.options : []);
    if (!outcome) {
      throw new ApiError('invalid_request', `${title} offers no option to allow this request; reply 'reject' instead.`, { agent, permissionId: id });
    }
    this.pending.delete(id);
    await this.rpc.respond(request.id, outcome).catch((err) => Promise.reject(this.io(err)));
  }

  async replyQuestion(id: string): Promise<void> {
    const { title, id: agent } = this.deps.definition;
    throw new ApiError('agent_io_failed', `${title} has no pending question '${id}' (ACP agents ask no questions).`, { agent });
  }

  async interrupt(): Promise<void> {
    await this.rpc.notify('session/cancel', { sessionId: this.sessionId }).catch((err) => Promise.reject(this.io(err)));
    await this.cancelPending();
  }

  async terminate(): Promise<void> {
    await this.cancelPending();
    await this.proc.kill();
  }

  /** Answers every pending permission request `cancelled` (interrupt, terminate). */
  private async cancelPending(): Promise<void> {
    const open = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(open.map((r) => this.rpc.respond(r.id, CANCELLED).catch(() => undefined)));
  }
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


/** Updates that carry the conversation (what session/load replays), as opposed to the agent's state. */
const HISTORY_UPDATES = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan']);

function isHistoryUpdate(m: unknown): boolean {
  return isObject(m) && m.method === 'session/update' && isObject(m.params) && isObject(m.params.update) && HISTORY_UPDATES.has(String(m.params.update.sessionUpdate));
}
