// One session: owns its agent handle, its converter state, its normalizer and its event log, and
// is the only path between the HTTP layer and the agent. Status is derived from the normalizer
// (the one bookkeeper of turns and pending HITL), so it can never disagree with the event stream.
import type { AgentDriver, AgentHandle, AgentSink, ProcessExit, StartOptions, TurnInput } from '../agents/types.js';
import { ApiError } from '../errors.js';
import type { CreateSessionRequest, MessageRequest, PermissionReply, SessionInfo, SessionStatus } from '../schema/api.js';
import type { UniversalEvent } from '../schema/events.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { EventStore, SessionProgress, SessionRecord } from '../store/event-store.js';
import type { Normalized } from './event-batch.js';
import { EventLog, type EventLogLimits } from './event-log.js';
import { HitlPolicyRunner, type HitlSettings } from './hitl-policy.js';
import { Normalizer } from './normalize.js';
import { resolveAttachments } from './session-paths.js';

/** A create request after the agent's defaults were filled in (AgentOfferings.resolve) and its cwd checked. */
export type ResolvedCreateRequest = CreateSessionRequest & { cwd: string; agentMode: string; permissionMode: string };

export interface SessionDeps {
  ids: IdGenerator;
  clock: Clock;
  limits: EventLogLimits;
  /** Daemon defaults; a create request may override them. */
  hitl: HitlSettings;
  logger: FastifyBaseLogger;
  store: EventStore;
  /** Sees every event once it is in the log (the daemon's metrics, src/metrics/); must not throw. */
  onEvent?: (session: Session, event: UniversalEvent) => void;
  /** The warm pool (warm-pool.ts): a ready agent for a new session whose options it can serve. */
  spares?: { take(driver: AgentDriver, options: StartOptions, sink: AgentSink, firstTurnEvent: Promise<void>): AgentHandle | undefined };
}

export class Session {
  readonly log: EventLog;
  readonly createdAt: Date;
  private updatedAt: Date;
  private readonly normalizer: Normalizer;
  private handle: AgentHandle | undefined;
  private converterState: unknown;
  private terminating: Promise<void> | undefined;
  private readonly hitlSettings: HitlSettings;
  private readonly policy: HitlPolicyRunner;
  private readonly logger: FastifyBaseLogger;
  /** When session.ended was logged (for the ended-session TTL). */
  endedAt: Date | undefined;
  /** Live stream subscribers, counted against the per-session limit. */
  subscribers = 0;
  /** Loaded from the store by this daemon (it outlived the daemon that created it). */
  readonly restored: boolean;
  /** The agent is being stopped without ending the session (graceful daemon stop). */
  private suspending = false;
  /** The agent being started again on its native session (see resume). */
  private resuming: Promise<AgentHandle> | undefined;
  /** Told when the first turn's first agent event is logged (the warm pool refills after it). */
  private firstTurnEvent: (() => void) | undefined;

  /** A new session, or (`stored`) one read back from the store after a restart. */
  constructor(
    readonly id: string,
    readonly request: ResolvedCreateRequest,
    private readonly driver: AgentDriver,
    private readonly deps: SessionDeps,
    stored?: SessionRecord,
  ) {
    this.restored = stored !== undefined;
    this.log = new EventLog(id, deps.limits, deps.ids, deps.clock, deps.store, stored);
    this.normalizer = new Normalizer(driver.capabilities, deps.ids);
    this.converterState = driver.converter.initial();
    this.createdAt = stored ? new Date(stored.createdAt) : deps.clock.now();
    this.updatedAt = stored ? new Date(stored.updatedAt) : this.createdAt;
    if (stored) {
      this.normalizer.restore(stored.snapshot, stored.endedAt !== null);
      if (stored.endedAt) this.endedAt = new Date(stored.endedAt);
    } else {
      deps.store.createSession({ id, agent: request.agent, request, createdAt: this.createdAt.toISOString(), ...this.progress() });
    }
    this.logger = deps.logger.child({ sessionId: id, agent: request.agent });
    this.hitlSettings = {
      policy: request.permissionPolicy ?? deps.hitl.policy,
      timeoutMs: request.hitlTimeoutMs ?? deps.hitl.timeoutMs,
    };
    this.policy = new HitlPolicyRunner(this.hitlSettings, {
      permission: (id, reply, reason) => this.autoReply(() => this.replyPermission(id, reply, reason), reason),
      question: (id, answers, reason) => this.autoReply(() => this.replyQuestion(id, answers, reason), reason),
    });
  }

  /** An agent process is running (or starting again) for this session. */
  get agentRunning(): boolean {
    return this.handle !== undefined || this.resuming !== undefined;
  }

  get status(): SessionStatus {
    if (this.normalizer.ended) return 'ended';
    if (!this.normalizer.turnActive) return 'idle';
    return this.normalizer.hitl.pendingCount > 0 ? 'waiting' : 'running';
  }

  /** Spawns the agent; resolves once it is ready for a first turn. */
  async start(): Promise<void> {
    const r = this.request;
    this.apply(this.normalizer.sessionCreated({ agent: r.agent, cwd: r.cwd, ...(r.model ? { model: r.model } : {}) }, r));
    const spare = this.spawn(r.nativeSessionId, true);
    this.handle = spare instanceof Promise ? await spare : spare;
    const pooled = !(spare instanceof Promise);
    this.logger.info({ cwd: r.cwd, pid: this.handle.pid, nativeSessionId: this.log.currentNativeSessionId, pooled }, 'session started');
  }

  /**
   * A restored session: close what the dead daemon left open (its turn ends with an error saying
   * the daemon restarted; pending HITL requests are cancelled). Its agent starts again only with
   * the next message.
   */
  restore(): void {
    this.apply(this.normalizer.agentGone('daemon_restarted'));
  }

  /** Starts the agent; a new session (`mayAdopt`) takes a warm spare instead when one serves it. */
  private spawn(nativeSessionId: string | undefined, mayAdopt = false): Promise<AgentHandle> | AgentHandle {
    const r = this.request;
    const options: StartOptions = {
      sessionId: this.id,
      cwd: r.cwd,
      env: r.env ?? {},
      model: r.model,
      variant: r.variant,
      nativeSessionId,
      mcp: r.mcp,
      agentMode: r.agentMode,
      permissionMode: r.permissionMode,
      logger: this.logger,
    };
    const sink: AgentSink = { native: (message) => this.onNative(message), exit: (exit) => this.onExit(exit) };
    if (mayAdopt && this.deps.spares) {
      const seen = new Promise<void>((resolve) => (this.firstTurnEvent = resolve));
      const spare = this.deps.spares.take(this.driver, options, sink, seen);
      if (spare) return spare;
      this.firstTurnEvent = undefined;
    }
    return this.driver.start(options, sink);
  }

  /**
   * Starts the agent again on its own native session (Claude --resume, Codex thread/resume, …):
   * after a restart or a graceful stop the conversation continues where the model left it. If the
   * agent cannot resume (its own store is gone), the session ends with an error that says so.
   */
  private async resume(): Promise<AgentHandle> {
    const nativeSessionId = this.log.currentNativeSessionId ?? this.request.nativeSessionId;
    this.resuming = Promise.resolve(this.spawn(nativeSessionId));
    try {
      this.handle = await this.resuming;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const message = nativeSessionId
        ? `The agent could not resume its session '${nativeSessionId}': ${why}`
        : `The agent could not be started again: ${why}`;
      this.apply(this.normalizer.resumeFailed(message));
      throw new ApiError('agent_start_failed', message, { sessionId: this.id, agent: this.request.agent });
    } finally {
      this.resuming = undefined;
    }
    this.logger.info({ pid: this.handle.pid, nativeSessionId }, 'agent resumed on its native session');
    return this.handle;
  }

  /** Dispatches one turn. The turn lock is taken synchronously, before anything is awaited. */
  async send(body: MessageRequest): Promise<void> {
    this.assertOpen();
    if (this.normalizer.turnActive) {
      throw new ApiError('turn_in_progress', `Session '${this.id}' is ${this.status}; wait for turn.ended or interrupt it.`, {
        sessionId: this.id,
        sessionStatus: this.status,
      });
    }
    const input: TurnInput = { message: body.message, attachments: resolveAttachments(body.attachments, this.request.cwd, this.id) };
    this.apply(this.normalizer.turnStarted(input, body));
    // No agent: a restored (or gracefully stopped) session starts it again, on its native session.
    const handle = this.handle ?? (await this.resume());
    try {
      await handle.send(input);
    } catch (err) {
      // The agent never got the message: close the turn so the session stays usable.
      this.apply(this.normalizer.turnAborted(`the message could not be delivered to the agent: ${(err as Error).message}`));
      throw err instanceof ApiError ? err : new ApiError('agent_io_failed', (err as Error).message, { sessionId: this.id });
    }
  }

  async interrupt(): Promise<void> {
    const handle = this.live();
    if (!this.normalizer.turnActive) {
      throw new ApiError('no_turn_running', `Session '${this.id}' has no running turn to interrupt.`, { sessionId: this.id });
    }
    this.normalizer.interruptRequested();
    await handle.interrupt();
  }

  /** `reason` marks a reply the daemon gave itself (policy or timeout) rather than the client. */
  async replyPermission(permissionId: string, reply: PermissionReply, reason?: 'policy' | 'timeout'): Promise<void> {
    const handle = this.live();
    const state = this.normalizer.hitl.permissionState(permissionId);
    if (state !== 'pending') {
      const code = state === 'unknown' ? 'permission_not_found' : 'permission_already_resolved';
      const detail = state === 'unknown' ? `No permission request '${permissionId}' in session '${this.id}'.` : `Permission '${permissionId}' was already resolved.`;
      throw new ApiError(code, detail, { sessionId: this.id, permissionId });
    }
    // Logged before the agent hears it, so the resolution precedes whatever the agent does next.
    this.apply(this.normalizer.permissionReplied(permissionId, reply, { reply, ...(reason ? { by: reason } : {}) }, reason));
    await handle.replyPermission(permissionId, reply);
  }

  async replyQuestion(questionId: string, answers: string[][] | null, reason?: 'policy' | 'timeout'): Promise<void> {
    const handle = this.live();
    const state = this.normalizer.hitl.questionState(questionId);
    if (state !== 'pending') {
      const code = state === 'unknown' ? 'question_not_found' : 'question_already_resolved';
      const detail = state === 'unknown' ? `No question '${questionId}' in session '${this.id}'.` : `Question '${questionId}' was already resolved.`;
      throw new ApiError(code, detail, { sessionId: this.id, questionId });
    }
    const raw = { ...(answers ? { answers } : { rejected: true }), ...(reason ? { by: reason } : {}) };
    this.apply(this.normalizer.questionReplied(questionId, answers, raw));
    await handle.replyQuestion(questionId, answers);
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
      this.apply(this.normalizer.processExited({ exitCode: null, signal: null, stderr: { truncated: false }, requested: true }));
      this.terminating = Promise.resolve();
    }
    return this.terminating;
  }

  /** The store stopped taking writes: the stream says so (readers see it once it recovers). */
  storeFailed(failure: { code: string; message: string; since: string }): void {
    const message = `The event store could not take writes since ${failure.since} (${failure.code}: ${failure.message}); events are held in memory until it can.`;
    this.apply(this.normalizer.daemonError(message, 'store_unavailable', { store_error: failure.code }));
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

  info(): SessionInfo {
    const r = this.request;
    const nativeSessionId = this.log.currentNativeSessionId;
    return {
      sessionId: this.id,
      agent: r.agent,
      agentMode: r.agentMode,
      permissionMode: r.permissionMode,
      ...(r.model ? { model: r.model } : {}),
      ...(r.variant ? { variant: r.variant } : {}),
      ...(nativeSessionId ? { nativeSessionId } : {}),
      ended: this.normalizer.ended,
      eventCount: this.log.lastSequence,
      createdAt: this.createdAt.toISOString(),
      updatedAt: this.updatedAt.toISOString(),
      ...(r.title ? { title: r.title } : {}),
      cwd: r.cwd,
      status: this.status,
      restored: this.restored,
      permissionPolicy: this.hitlSettings.policy,
      hitlTimeoutMs: this.hitlSettings.timeoutMs,
    };
  }

  private live(): AgentHandle {
    this.assertOpen();
    if (!this.handle) throw new ApiError('session_ended', `Session '${this.id}' has no running agent.`, { sessionId: this.id });
    return this.handle;
  }

  private assertOpen(): void {
    if (this.normalizer.ended || this.terminating) {
      throw new ApiError('session_ended', `Session '${this.id}' has ended; create a new session.`, { sessionId: this.id });
    }
  }

  /** The row the store keeps for this session (computed at the commit, once per tick). */
  private progress(): SessionProgress {
    return {
      nativeSessionId: this.log.currentNativeSessionId,
      status: this.status,
      snapshot: this.normalizer.snapshot(),
      updatedAt: this.updatedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
      lastSequence: this.log.lastAppended,
    };
  }

  private onNative(message: unknown): void {
    let drafts;
    try {
      const result = this.driver.converter.convert(this.converterState, message);
      this.converterState = result.state;
      drafts = result.events;
    } catch (err) {
      // A converter must never throw (design rule 1); if one does, the stream says so instead of dying.
      drafts = [{ type: 'agent.unparsed' as const, data: { error: `converter threw: ${(err as Error).message}`, location: `${this.driver.id}.convert` } }];
    }
    try {
      this.apply(this.normalizer.agent(drafts, message));
    } catch (err) {
      // Last line of defence: this runs in a stdout data callback, where a throw would be an
      // uncaught exception and take every other session down with the daemon.
      this.logger.error({ err }, 'failed to log an agent message');
    }
  }

  private onExit(exit: ProcessExit): void {
    const level = exit.requested || exit.exitCode === 0 ? 'info' : 'warn';
    this.logger[level]({ exitCode: exit.exitCode, signal: exit.signal, requested: exit.requested }, 'agent process exited');
    this.apply(this.suspending ? this.normalizer.agentGone('daemon_stopping') : this.normalizer.processExited(exit));
    this.handle = undefined;
    this.suspending = false;
    this.policy.clear();
  }

  /** A reply the daemon gives itself may race the client's or the turn's end: that is fine. */
  private autoReply(send: () => Promise<void>, reason: string): void {
    send().catch((err: unknown) => {
      if (err instanceof ApiError && err.status < 500) return;
      this.logger.warn({ err, reason }, 'automatic HITL reply failed');
    });
  }

  private apply(events: Normalized[]): UniversalEvent[] {
    if (events.length === 0) return [];
    this.updatedAt = this.deps.clock.now();
    const logged = events.map((n) => {
      const event = this.log.append(n.event, n.raw, n.nativeSessionId);
      this.deps.onEvent?.(this, event);
      if (event.type === 'session.ended') this.endedAt = this.updatedAt;
      if (this.firstTurnEvent && event.source === 'agent' && this.normalizer.turnActive) {
        this.firstTurnEvent();
        this.firstTurnEvent = undefined;
      }
      this.policy.observe(event);
      return event;
    });
    if (this.deps.store.durable) this.deps.store.updateSession(this.id, this.progressOf);
    return logged;
  }

  private readonly progressOf = () => this.progress();
}
