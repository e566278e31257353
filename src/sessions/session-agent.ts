// The agent process behind one session: started (or a warm spare adopted), started again on its
// native session, its output converted, and stopped. Separate from session.ts, which owns the log,
// the status and the client's commands; this owns only the process, its converter state and its end.
import type { AgentDriver, AgentHandle, AgentSink, ProcessExit, StartOptions } from '../agents/types.js';
import { ApiError } from '../errors.js';
import { LogMessage } from '../logging.js';
import type { UniversalEvent } from '../schema/events.js';
import type { EventLog } from './event-log.js';
import type { ResolvedCreateRequest, SessionCore, SessionDeps } from './session-parts.js';

/** What the agent knows of its session (session.ts builds it), and where what it does is logged. */
export interface SessionAgentContext extends SessionCore {
  request: ResolvedCreateRequest;
  driver: AgentDriver;
  spares: SessionDeps['spares'];
  log: EventLog;
  /** The process is gone and its exit logged. */
  exited: () => void;
}

export class SessionAgent {
  private handle: AgentHandle | undefined;
  private converterState: unknown;
  private terminating: Promise<void> | undefined;
  /** The agent is being stopped without ending the session (graceful daemon stop). */
  private suspending = false;
  /** The agent being started again on its native session (see resume). */
  private resuming: Promise<AgentHandle> | undefined;
  /** Told when the first turn's first agent event is logged (the warm pool refills after it). */
  private firstTurnEvent: (() => void) | undefined;

  constructor(private readonly ctx: SessionAgentContext) {
    this.converterState = ctx.driver.converter.initial();
  }

  /** An agent process is running (or starting again) for this session. */
  get running(): boolean {
    return this.handle !== undefined || this.resuming !== undefined;
  }

  /** The running agent, if there is one. */
  get current(): AgentHandle | undefined {
    return this.handle;
  }

  /** terminate() was called: the session is ending. */
  get ending(): boolean {
    return this.terminating !== undefined;
  }

  /** Spawns the agent (or adopts a warm spare); resolves once it is ready for a first turn. */
  async start(): Promise<void> {
    const r = this.ctx.request;
    const spare = this.spawn(r.nativeSessionId, true);
    this.handle = spare instanceof Promise ? await spare : spare;
    const pooled = !(spare instanceof Promise);
    this.ctx.logger.info({ cwd: r.cwd, agentPid: this.handle.pid, nativeSessionId: this.ctx.log.currentNativeSessionId, pooled }, LogMessage.sessionStarted);
  }

  /** Starts the agent; a new session (`mayAdopt`) takes a warm spare instead when one serves it. */
  private spawn(nativeSessionId: string | undefined, mayAdopt = false): Promise<AgentHandle> | AgentHandle {
    const { request: r, driver, spares } = this.ctx;
    const options: StartOptions = {
      sessionId: this.ctx.sessionId,
      cwd: r.cwd,
      env: r.env ?? {},
      model: r.model,
      variant: r.variant,
      nativeSessionId,
      // A fork whose agent has not named its own native session yet forks its parent's (again).
      fork: nativeSessionId ? undefined : r.fork,
      mcp: r.mcp,
      agentMode: r.agentMode,
      permissionMode: r.permissionMode,
      logger: this.ctx.logger,
    };
    const sink: AgentSink = { native: (message) => this.onNative(message), exit: (exit) => this.onExit(exit) };
    if (mayAdopt && spares && !r.fork) {
      const seen = new Promise<void>((resolve) => (this.firstTurnEvent = resolve));
      const spare = spares.take(driver, options, sink, seen);
      if (spare) return spare;
      this.firstTurnEvent = undefined;
    }
    return driver.start(options, sink);
  }

  /**
   * Starts the agent again on its own native session (Claude --resume, Codex thread/resume, …):
   * after a restart or a graceful stop the conversation continues where the model left it. If the
   * agent cannot resume (its own store is gone), the session ends with an error that says so.
   */
  async resume(): Promise<AgentHandle> {
    const nativeSessionId = this.ctx.log.currentNativeSessionId ?? this.ctx.request.nativeSessionId;
    this.resuming = Promise.resolve(this.spawn(nativeSessionId));
    try {
      this.handle = await this.resuming;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const message = nativeSessionId
        ? `The agent could not resume its session '${nativeSessionId}': ${why}`
        : `The agent could not be started again: ${why}`;
      this.ctx.apply(this.ctx.normalizer.resumeFailed(message));
      throw new ApiError('agent_start_failed', message, { sessionId: this.ctx.sessionId, agent: this.ctx.request.agent });
    } finally {
      this.resuming = undefined;
    }
    this.ctx.logger.info({ agentPid: this.handle.pid, nativeSessionId }, 'agent resumed on its native session');
    return this.handle;
  }

  /** Kills the agent; resolves once session.ended is in the log. Idempotent. */
  terminate(): Promise<void> {
    if (this.terminating) return this.terminating;
    if (this.resuming) {
      // The agent is starting again: end it once it is up, rather than leave it running unowned.
      this.terminating = this.resuming.then(
        (handle) => handle.terminate(),
        () => {},
      );
    } else if (this.handle) {
      this.terminating = this.handle.terminate();
    } else {
      // A restored session whose agent is not running: ending it is only a matter of saying so.
      this.ctx.apply(this.ctx.normalizer.processExited({ exitCode: null, signal: null, stderr: { truncated: false }, requested: true }));
      this.terminating = Promise.resolve();
    }
    return this.terminating;
  }

  /**
   * Stops the agent without ending the session (graceful daemon stop with a durable store): a
   * running turn ends as `interrupted`, and the next daemon restores the session like any other.
   */
  async suspend(): Promise<void> {
    if (this.resuming) await this.resuming.catch(() => {});
    if (!this.handle || this.terminating) return;
    this.suspending = true;
    await this.handle.terminate();
  }

  /** Every event Session.apply logged: the first turn's first agent event frees the warm pool's refill. */
  logged(event: UniversalEvent): void {
    if (this.firstTurnEvent && event.source === 'agent' && this.ctx.normalizer.turnActive) {
      this.firstTurnEvent();
      this.firstTurnEvent = undefined;
    }
  }

  private onNative(message: unknown): void {
    let drafts;
    try {
      const result = this.ctx.driver.converter.convert(this.converterState, message);
      this.converterState = result.state;
      drafts = result.events;
    } catch (err) {
      // A converter must never throw (rule: Pure converters); if one does, the stream says so instead of dying.
      drafts = [{ type: 'agent.unparsed' as const, data: { error: `converter threw: ${(err as Error).message}`, location: `${this.ctx.driver.id}.convert` } }];
    }
    try {
      this.ctx.apply(this.ctx.normalizer.agent(drafts, message));
    } catch (err) {
      // Last line of defence: this runs in a stdout data callback, where a throw would be an
      // uncaught exception and take every other session down with the daemon.
      this.ctx.logger.error({ err }, 'failed to log an agent message');
    }
  }

  private onExit(exit: ProcessExit): void {
    const level = exit.requested || exit.exitCode === 0 ? 'info' : 'warn';
    // `agentPid`, not `pid`: pino writes its own (the daemon's) `pid` in every record, and a JSON
    // line with the key twice reads differently in different parsers.
    const pid = this.handle?.pid === undefined ? {} : { agentPid: this.handle.pid };
    this.ctx.logger[level]({ ...pid, exitCode: exit.exitCode, signal: exit.signal, requested: exit.requested }, LogMessage.agentExited);
    this.ctx.apply(this.suspending ? this.ctx.normalizer.agentGone('daemon_stopping') : this.ctx.normalizer.processExited(exit));
    this.handle = undefined;
    this.suspending = false;
    this.ctx.exited();
  }
}
