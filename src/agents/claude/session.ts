// One live Claude Code session: ONE long-lived `claude -p` process, stream-json both ways, as an
// object whose state a test can read (the process, the CLI's pending control requests, the lines
// held back until initialize was answered). The protocol steps are at the top of driver.ts.
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../errors.js';
import type { AgentUser } from '../../process/agent-user.js';
import { ChildProcess } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import { untilReady } from '../readiness.js';
import type { AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { questionAnswers, userLine } from './input.js';
import { isObject } from '../../util/is-object.js';

export interface ControlRequest {
  type: 'control_request';
  request_id: string;
  request: { subtype?: string; tool_name?: string; input?: Record<string, unknown>; permission_suggestions?: unknown[]; tool_use_id?: string };
}

/** Lines held back until the CLI answered initialize (past this they are let through, in order; none expected). */
const MAX_HELD = 1_000;


export class ClaudeSession implements AgentHandle {
  /** The CLI's pending control requests by request_id (and by tool_use_id, as a fallback key). */
  readonly pending = new Map<string, ControlRequest>();
  /** What the CLI prints before it answered initialize is held back: on a failed start it must not
   *  reach the session (a failed --resume prints an error `result` before it exits, which would end
   *  a turn the daemon is still opening); on success it is delivered first, in order. Undefined once
   *  delivered. */
  held: unknown[] | undefined = [];
  /** The CLI answered our initialize with success. */
  initialized = false;
  child: ChildProcess | undefined;
  /** Our own control requests are numbered agentwire-1, -2, …; initialize is the first. */
  private nextId = 0;
  readonly initId = this.ourId();
  private answerInit: (error?: Error) => void = () => {};
  private readonly initAnswered = new Promise<void>((resolve, reject) => (this.answerInit = (error) => (error ? reject(error) : resolve())));

  /** --agent-user: attachments are read with its rights (input.ts). */
  private agentUser: AgentUser | undefined;

  private constructor(
    private readonly options: StartOptions,
    private readonly sink: AgentSink,
  ) {
    this.initAnswered.catch(() => {}); // read by untilReady; a refusal before it looks is not unhandled
  }

  /** Spawns the CLI, sends initialize and resolves once it answered; throws agent_start_failed otherwise. */
  static async start(options: StartOptions, sink: AgentSink, limits: ProcessLimits, executable: string, args: string[]): Promise<ClaudeSession> {
    // --dangerously-skip-permissions refuses to run as root unless told it is sandboxed.
    const env = { ...options.env, ...(options.permissionMode === 'bypass' ? { IS_SANDBOX: '1' } : {}) };
    const session = new ClaudeSession(options, sink);
    session.agentUser = limits.boundary?.user;
    const child = await ChildProcess.start({ command: executable, args, cwd: options.cwd, env, ...processSpawnOptions(limits, options.logger) }, (line) =>
      session.onMessage(parseNativeLine(line.text, line.truncated)),
    );
    session.child = child;
    await session.write({ type: 'control_request', request_id: session.initId, request: { subtype: 'initialize', hooks: null } }).catch(() => undefined);
    await untilReady(child, session.initAnswered, limits.startTimeoutMs, {
      title: 'Claude Code',
      details: { agent: 'claude' },
      timeout: 'did not answer initialize in time',
      error: (err) => `refused initialize: ${err.message}`,
    });
    session.initialized = true;
    session.flush();
    child.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));
    return session;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private ourId(): string {
    return `agentwire-${++this.nextId}`;
  }

  private onMessage(message: unknown): void {
    if (isObject(message)) {
      if (message.type === 'control_response' && isObject(message.response) && message.response.request_id === this.initId) {
        this.answerInit(message.response.subtype === 'success' ? undefined : new Error(String(message.response.error ?? 'initialize failed')));
      } else if (message.type === 'control_request' && typeof message.request_id === 'string' && isObject(message.request)) {
        this.onControlRequest(message as unknown as ControlRequest);
      } else if (message.type === 'control_cancel_request' && typeof message.request_id === 'string') {
        this.pending.delete(message.request_id);
      }
    }
    this.deliver(message);
  }

  private onControlRequest(request: ControlRequest): void {
    if (request.request.subtype === 'can_use_tool') return void this.pending.set(request.request_id, request);
    // Nothing else is expected without hooks or SDK MCP servers; answer so the CLI never hangs.
    const error = `agentwire does not handle '${request.request.subtype}' requests`;
    void this.write({ type: 'control_response', response: { subtype: 'error', request_id: request.request_id, error } }).catch(() => {});
  }

  private deliver(message: unknown): void {
    if (this.held && this.held.length >= MAX_HELD) this.flush();
    if (this.held) this.held.push(message);
    else this.sink.native(message);
  }

  private flush(): void {
    const early = this.held ?? [];
    this.held = undefined;
    for (const message of early) this.sink.native(message);
  }

  private async write(message: unknown): Promise<void> {
    try {
      if (!this.child) throw new Error('not started');
      await this.child.writeLine(JSON.stringify(message));
    } catch (err) {
      throw new ApiError('agent_io_failed', `Claude Code did not accept input: ${(err as Error).message}`, { agent: 'claude' });
    }
  }

  /** The pending request a reply names (by request_id or tool_use_id), taken out of `pending`. */
  private take(id: string): ControlRequest {
    let request = this.pending.get(id);
    if (!request) request = [...this.pending.values()].find((r) => r.request.tool_use_id === id);
    if (!request) throw new ApiError('agent_io_failed', `Claude Code has no pending request '${id}'.`, { agent: 'claude' });
    this.pending.delete(request.request_id);
    return request;
  }

  private respond(request: ControlRequest, response: Record<string, unknown>): Promise<void> {
    return this.write({ type: 'control_response', response: { subtype: 'success', request_id: request.request_id, response } });
  }

  private allow(request: ControlRequest, updatedInput: Record<string, unknown> = request.request.input ?? {}, extra: Record<string, unknown> = {}): Promise<void> {
    return this.respond(request, { behavior: 'allow', updatedInput, ...extra });
  }

  private deny(request: ControlRequest, message: string): Promise<void> {
    return this.respond(request, { behavior: 'deny', message });
  }

  async send(turn: TurnInput): Promise<void> {
    await this.write(await userLine(turn, this.options.cwd, this.agentUser));
  }

  /** A user line written while a turn runs goes into it. Its `uuid` makes the CLI report where the
   *  message is (command_lifecycle lines), which the converter needs (convert-steer.ts). */
  async steer(turn: TurnInput): Promise<void> {
    await this.write({ ...(await userLine(turn, this.options.cwd, this.agentUser)), uuid: randomUUID() });
  }

  replyPermission(id: string, reply: PermissionReply): Promise<void> {
    const request = this.take(id);
    if (reply === 'reject') return this.deny(request, 'The user rejected this tool use.');
    const suggestions = request.request.permission_suggestions;
    const extra = reply === 'always' && Array.isArray(suggestions) && suggestions.length > 0 ? { updatedPermissions: suggestions } : {};
    return this.allow(request, undefined, extra);
  }

  replyQuestion(id: string, answers: string[][] | null): Promise<void> {
    const request = this.take(id);
    const input = request.request.input ?? {};
    if (answers === null) return this.deny(request, 'The user declined to answer.');
    if (request.request.tool_name === 'AskUserQuestion') return this.allow(request, { ...input, answers: questionAnswers(input, answers) });
    if (request.request.tool_name === 'ExitPlanMode') {
      return answers[0]?.[0]?.trim().toLowerCase() === 'approve' ? this.allow(request) : this.deny(request, 'The user did not approve the plan; keep planning.');
    }
    return this.allow(request);
  }

  /** Also drops steered messages the CLI still holds (cancel_queued): the user asked the turn to
   *  stop, and without it the CLI would run them as its next turn, with no daemon turn behind it. */
  interrupt(): Promise<void> {
    return this.write({ type: 'control_request', request_id: this.ourId(), request: { subtype: 'interrupt', cancel_queued: true } });
  }

  async terminate(): Promise<void> {
    await this.child?.kill();
  }
}
