// One live Codex session: ONE long-lived `codex app-server` and its thread, as an object whose
// state a test can read (the thread id, the running turn's id, the server's pending requests, the
// thread's model, the MCP servers' start-up). The protocol steps are at the top of driver.ts.
import { ApiError } from '../../errors.js';
import type { ChildProcess } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import { JsonRpcPeer, type RpcId, type RpcNotification, type RpcServerRequest } from '../json-rpc.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import { untilReady } from '../readiness.js';
import type { AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { turnInput } from './input.js';
import { McpStartup } from './mcp.js';
import { collaborationMode, needsExperimentalApi } from './modes.js';
import { declineResult, isAnswerable, permissionResult, questionResult } from './server-requests.js';
import { isObject } from '../../util/is-object.js';

/** How the driver launches app-server and what its thread is started with (driver.ts). */
export interface CodexLaunch {
  executable: string;
  args: readonly string[];
  clientInfo: unknown;
  /** thread/start's (and thread/resume's) params: cwd, approvalPolicy, sandbox, model, MCP config. */
  thread: Record<string, unknown>;
}

/** How long interrupt waits for the id of a turn that was sent but not yet answered. */
const TURN_ID_WAIT_MS = 5_000;

const isId = (v: unknown): v is RpcId => typeof v === 'number' || typeof v === 'string';

export class CodexSession implements AgentHandle {
  /** The server's pending requests by JSON-RPC id (as a string). */
  readonly pending = new Map<string, RpcServerRequest>();
  /** The thread (the daemon's native session id), once started or resumed. */
  threadId: string | undefined;
  /** The running turn's id: from turn/start's answer or turn/started, whichever comes first. */
  turnId: string | undefined;
  /** The thread's model (thread/start's answer): a collaboration mode's settings name it. */
  threadModel: string;
  /** The MCP servers' start-up states (ready waits for them to settle). */
  readonly mcp: McpStartup;
  private turnKnown: (() => void) | undefined;
  private connection: { peer: JsonRpcPeer; child: ChildProcess } | undefined;
  private readonly rpcTimeout: number;

  private constructor(
    private readonly options: StartOptions,
    private readonly limits: ProcessLimits,
  ) {
    this.threadModel = options.model ?? '';
    this.mcp = new McpStartup(Object.keys(options.mcp ?? {}));
    this.rpcTimeout = Math.max(limits.startTimeoutMs, 5_000);
  }

  /** Spawns app-server, starts (or resumes) the thread and resolves once it can take a turn. */
  static async start(options: StartOptions, sink: AgentSink, limits: ProcessLimits, launch: CodexLaunch): Promise<CodexSession> {
    const session = new CodexSession(options, limits);
    session.connection = await JsonRpcPeer.spawn(
      { command: launch.executable, args: [...launch.args], cwd: options.cwd, env: options.env, ...processSpawnOptions(limits, options.logger) },
      { native: (m) => sink.native(m), onRequest: (r) => session.onRequest(r), onNotification: (n) => session.onNotification(n) },
    );
    session.threadId = await untilReady(session.proc, session.handshake(launch), limits.startTimeoutMs, {
      title: 'Codex',
      details: { agent: 'codex' },
      timeout: 'did not start a thread in time',
      error: (err) => `did not start a thread: ${err.message}`,
    });
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

  /** initialize → initialized → thread/start (or thread/resume, thread/fork); resolves with the thread id. */
  private async handshake(launch: CodexLaunch): Promise<string> {
    const { options, limits, rpc } = this;
    const capabilities = needsExperimentalApi(options.agentMode) ? { experimentalApi: true } : null;
    await rpc.request('initialize', { clientInfo: launch.clientInfo, capabilities }, limits.startTimeoutMs);
    await rpc.notify('initialized');
    const result = await rpc.request(...threadRequest(options, launch), limits.startTimeoutMs);
    const thread = isObject(result) && isObject(result.thread) ? result.thread : undefined;
    if (!thread || typeof thread.id !== 'string') throw new Error(`no thread in the answer: ${JSON.stringify(result).slice(0, 200)}`);
    if (isObject(result) && typeof result.model === 'string') this.threadModel = result.model;
    // MCP servers start after the thread; ready means their tools are there for the first turn.
    // One that fails is reported by the converter (a status item) and the session goes on without it.
    if (!(await this.mcp.settled(limits.startTimeoutMs))) options.logger.warn({ mcp: this.mcp.snapshot() }, 'codex: MCP servers still starting; the session starts anyway');
    return thread.id;
  }

  private onRequest(request: RpcServerRequest): void {
    if (isAnswerable(request)) return void this.pending.set(String(request.id), request);
    // Tool calls of dynamic tools, auth refreshes, attestations: nothing agentwire registers or holds.
    void this.connection?.peer.respondError(request.id, { code: -32601, message: `agentwire does not handle '${request.method}' requests` }).catch(() => {});
  }

  private onNotification(n: RpcNotification): void {
    const params = isObject(n.params) ? n.params : {};
    if (n.method === 'turn/started' && isObject(params.turn) && typeof params.turn.id === 'string') {
      this.turnId = params.turn.id;
      this.turnKnown?.();
    } else if (n.method === 'turn/completed') {
      if (isObject(params.turn) && params.turn.id === this.turnId) this.turnId = undefined;
    } else if (n.method === 'serverRequest/resolved' && isId(params.requestId)) {
      this.pending.delete(String(params.requestId));
    } else if (n.method === 'mcpServer/startupStatus/updated' && typeof params.name === 'string' && typeof params.status === 'string') {
      this.mcp.update(params.name, params.status);
    }
  }

  private io(err: unknown): ApiError {
    return new ApiError('agent_io_failed', `Codex did not accept input: ${(err as Error).message}`, { agent: 'codex' });
  }

  /** The pending request a reply names (by JSON-RPC id, or its item or call id), taken out. */
  private take(id: string): RpcServerRequest {
    let request = this.pending.get(id);
    if (!request) request = [...this.pending.values()].find((r) => isObject(r.params) && (r.params.itemId === id || r.params.callId === id));
    if (!request) throw new ApiError('agent_io_failed', `Codex has no pending request '${id}'.`, { agent: 'codex' });
    this.pending.delete(String(request.id));
    return request;
  }

  private respond(id: RpcId, result: unknown): Promise<void> {
    return this.rpc.respond(id, result).catch((err) => Promise.reject(this.io(err)));
  }

  async send(turn: TurnInput): Promise<void> {
    const { options } = this;
    const input = turnInput(turn, options.cwd);
    // The response can come after turn/started (README): the turn id is taken from either.
    this.turnId = undefined;
    const mode = collaborationMode(options.agentMode, this.threadModel, options.variant);
    const params = { threadId: this.threadId, input, ...(options.variant ? { effort: options.variant } : {}), ...(mode ? { collaborationMode: mode } : {}) };
    const result = await this.rpc.request('turn/start', params, this.rpcTimeout).catch((err) => Promise.reject(this.io(err)));
    if (isObject(result) && isObject(result.turn) && typeof result.turn.id === 'string' && this.turnId === undefined) {
      this.turnId = result.turn.id;
      this.turnKnown?.();
    }
  }

  /** turn/steer into the running turn: Codex cuts the model's answer short and asks again with the
   *  steered input after it, in the same turn (docs/codex.md). Never turn/start: on a busy thread
   *  0.169.0 merges that into the running turn too, but as a new turn's request it would race the
   *  daemon's turn bookkeeping. */
  async steer(turn: TurnInput): Promise<void> {
    const turnId = await this.runningTurn('steer');
    const params = { threadId: this.threadId, expectedTurnId: turnId, input: turnInput(turn, this.options.cwd) };
    await this.rpc.request('turn/steer', params, this.rpcTimeout).catch((err) => Promise.reject(this.io(err)));
  }

  replyPermission(id: string, reply: PermissionReply): Promise<void> {
    const request = this.take(id);
    return this.respond(request.id, permissionResult(request, reply));
  }

  replyQuestion(id: string, answers: string[][] | null): Promise<void> {
    const request = this.take(id);
    return this.respond(request.id, questionResult(request, answers));
  }

  async interrupt(): Promise<void> {
    const turnId = await this.runningTurn('interrupt');
    await this.rpc.request('turn/interrupt', { threadId: this.threadId, turnId }, this.rpcTimeout).catch((err) => Promise.reject(this.io(err)));
  }

  /** The running turn's id (interrupt and steer name it), waiting a little for it when turn/start
   *  was sent but neither its answer nor turn/started has arrived yet. */
  private async runningTurn(what: string): Promise<string> {
    if (this.turnId === undefined) {
      await new Promise<void>((r) => {
        const timer = setTimeout(r, TURN_ID_WAIT_MS).unref();
        this.turnKnown = () => (clearTimeout(timer), (this.turnKnown = undefined), r());
      });
    }
    if (this.turnId === undefined) throw new ApiError('agent_io_failed', `Codex has no running turn to ${what}.`, { agent: 'codex' });
    return this.turnId;
  }

  async terminate(): Promise<void> {
    // Nothing is left hanging in the thread's history as approved: every open request is declined.
    const open = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(open.map((r) => this.rpc.respond(r.id, declineResult(r)).catch(() => undefined)));
    await this.proc.kill();
  }
}

/** How the thread is had: forked from another thread (a new thread id, up to and including the
 *  turn ForkOptions.point names: forkPoint), resumed, or started. excludeTurns: the daemon has the
 *  history already; without it Codex answers with the whole thread and a deprecationNotice for
 *  "full-history hydration" (0.169.0). */
export function threadRequest(options: Pick<StartOptions, 'nativeSessionId' | 'fork'>, launch: Pick<CodexLaunch, 'thread'>): [string, Record<string, unknown>] {
  const { fork, nativeSessionId } = options;
  if (fork) {
    // lastTurnId even at the end: the parent may start another turn before this process is up.
    const at = fork.point ? { lastTurnId: fork.point } : {};
    return ['thread/fork', { threadId: fork.nativeSessionId, ...at, excludeTurns: true, ...launch.thread }];
  }
  if (nativeSessionId) return ['thread/resume', { threadId: nativeSessionId, excludeTurns: true, ...launch.thread }];
  return ['thread/start', launch.thread];
}
