// One session: owns its normalizer and its event log, and is the only path between the HTTP layer
// and the agent. Status is derived from the normalizer (the one bookkeeper of turns and pending
// HITL), so it can never disagree with the event stream. Its agent process (start, resume,
// conversion, stop) is in session-agent.ts; its HITL replies are in hitl-replies.ts; its queue in
// message-queue.ts; what its parts share in session-parts.ts.
import type { AgentDriver, AgentHandle, TurnInput } from '../agents/types.js';
import { ApiError } from '../errors.js';
import type { MessageRequest, PermissionReply, SessionInfo, SessionStatus } from '../schema/api.js';
import type { Budget } from '../schema/usage.js';
import type { MessageAccepted } from '../schema/delivery.js';
import type { PermissionEventData, QuestionEventData, SessionEndedData, UniversalEvent } from '../schema/events.js';
import type { FastifyBaseLogger } from 'fastify';
import { LogMessage } from '../logging.js';
import type { SessionProgress, SessionRecord } from '../store/event-store.js';
import type { Normalized } from './event-batch.js';
import { EventLog } from './event-log.js';
import type { HitlSettings } from './hitl-policy.js';
import { HitlReplies } from './hitl-replies.js';
import { BudgetGate } from './budget.js';
import type { ForkPlan } from './fork.js';
import { MessageQueue } from './message-queue.js';
import { Normalizer } from './normalize.js';
import { SessionAgent } from './session-agent.js';
import { resolveAttachments } from './session-paths.js';
import type { ResolvedCreateRequest, SessionCore, SessionDeps } from './session-parts.js';

export class Session {
  readonly log: EventLog;
  readonly createdAt: Date;
  private readonly createdAtIso: string;
  private updatedAt: Date;
  private readonly normalizer: Normalizer;
  private readonly agent: SessionAgent;
  private readonly hitlSettings: HitlSettings;
  private readonly hitl: HitlReplies;
  private readonly budget: BudgetGate;
  /** Messages sent with a delivery while a turn runs (message-queue.ts). */
  readonly queue: MessageQueue;
  private readonly logger: FastifyBaseLogger;
  /** When session.ended was logged (for the ended-session TTL). */
  endedAt: Date | undefined;
  /** Live stream subscribers, counted against the per-session limit. */
  subscribers = 0;
  /** Loaded from the store by this daemon (it outlived the daemon that created it). */
  readonly restored: boolean;

  /** A new session, or (`stored`) one read back from the store after a restart. */
  constructor(
    readonly id: string,
    readonly request: ResolvedCreateRequest,
    readonly driver: AgentDriver,
    private readonly deps: SessionDeps,
    stored?: SessionRecord,
  ) {
    this.restored = stored !== undefined;
    this.log = new EventLog(id, deps.limits, deps.ids, deps.clock, deps.store, stored);
    this.normalizer = new Normalizer(driver.capabilities, deps.ids);
    this.createdAt = stored ? new Date(stored.createdAt) : deps.clock.now();
    this.createdAtIso = this.createdAt.toISOString();
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
    const core: SessionCore = { sessionId: id, logger: this.logger, normalizer: this.normalizer, apply: (events) => this.apply(events) };
    this.budget = new BudgetGate(
      { ...core, handle: () => this.agent.current, deliver: (input) => this.deliver(input) },
      request.budget ?? deps.budget ?? {},
      stored?.snapshot.budget,
    );
    this.hitl = new HitlReplies({ ...core, settings: this.hitlSettings, live: () => this.live(), budget: this.budget });
    this.agent = new SessionAgent({ ...core, request, driver, spares: deps.spares, log: this.log, exited: () => this.hitl.clear() });
    this.queue = new MessageQueue({
      ...core,
      ids: deps.ids,
      clock: deps.clock,
      capabilities: driver.capabilities,
      agent: request.agent,
      startTurn: (input, raw, messageId) => this.dispatch(input, raw, messageId),
      interrupt: () => this.interrupt(),
      handle: () => this.agent.current,
      steerHeld: (input) => this.budget.steerHeld(input),
      closed: () => this.normalizer.ended || this.agent.ending,
      input: (body) => this.input(body),
    });
    if (stored) this.queue.restore(stored.snapshot.queue);
  }

  /** An agent process is running (or starting again) for this session. */
  get agentRunning(): boolean {
    return this.agent.running;
  }

  get status(): SessionStatus {
    if (this.normalizer.ended) return 'ended';
    if (!this.normalizer.turnActive) return 'idle';
    return this.normalizer.hitl.pendingCount > 0 ? 'waiting' : 'running';
  }

  /** The permission requests and questions waiting for an answer now. */
  openRequests(): { permissions: PermissionEventData[]; questions: QuestionEventData[] } {
    const { permissions, questions } = this.normalizer.hitl;
    return { permissions: [...permissions.values()], questions: [...questions.values()] };
  }

  /** Turns started so far (a fork counts those it copied). */
  get turns(): number {
    return this.normalizer.turns;
  }

  /**
   * Spawns the agent; resolves once it is ready for a first turn. A fork (fork.ts) first gets its
   * parent's events up to the branch point, copied into its log, and its normalizer as it stands
   * after them; then `session.forked`.
   */
  async start(fork?: ForkPlan): Promise<void> {
    const r = this.request;
    for (const event of fork?.events ?? []) this.log.copy(event);
    if (fork && fork.events.length > 0) this.normalizer.restore(fork.snapshot, false);
    // A fork's copied log has its session.started already, unless it branched before anything.
    if (r.model) this.normalizer.usage.model = r.model;
    if (!r.forkedFrom || this.log.lastAppended === 0) {
      this.apply(this.normalizer.sessionCreated({ agent: r.agent, cwd: r.cwd, ...(r.model ? { model: r.model } : {}) }, r));
    }
    if (r.forkedFrom) {
      const forked_from = { session_id: r.forkedFrom.sessionId, sequence: r.forkedFrom.sequence };
      this.apply(this.normalizer.daemonEvent({ type: 'session.forked', data: { forked_from, at_turn: fork?.atTurn ?? null } }));
    }
    await this.agent.start();
  }

  /**
   * A restored session: close what the dead daemon left open (its turn ends with an error saying
   * the daemon restarted; pending HITL requests are cancelled). Its agent starts again only with
   * the next message.
   */
  restore(): void {
    this.apply(this.normalizer.agentGone('daemon_restarted'));
    // What was queued still runs: its next message starts now that no turn is running.
    this.queue.scheduleDrain();
  }

  /**
   * A message: without `delivery` it starts a turn or is refused while one runs (409); with one it
   * is queued, steered or starts next after an interrupt (message-queue.ts), and the answer says which.
   */
  async send(body: MessageRequest): Promise<MessageAccepted | undefined> {
    this.assertOpen();
    if (body.delivery) return this.queue.deliver({ ...body, delivery: body.delivery });
    if (this.normalizer.turnActive || this.queue.length > 0) {
      const n = this.queue.length;
      const queued = n === 0 ? '' : n === 1 ? ' (a queued message goes first)' : ` (${n} queued messages go first)`;
      throw new ApiError('turn_in_progress', `Session '${this.id}' is ${this.status}${queued}; wait for turn.ended, interrupt it, or send with delivery "queue", "steer" or "interrupt".`, {
        sessionId: this.id,
        sessionStatus: this.status,
      });
    }
    await this.dispatch(this.input(body), body);
    return undefined;
  }

  private input(body: MessageRequest): TurnInput {
    return { message: body.message, attachments: resolveAttachments(body.attachments, this.request.cwd, this.id, this.deps.agentUser) };
  }

  /**
   * Dispatches one turn. The turn lock is taken synchronously, before anything is awaited. A turn
   * over the session's budget is held, and goes to the agent only once its request is approved.
   */
  private async dispatch(input: TurnInput, raw: unknown, messageId?: string): Promise<void> {
    this.assertOpen();
    this.apply(this.normalizer.turnStarted(input, raw, messageId));
    if (!this.budget.beforeTurn(input)) return;
    await this.deliver(input);
  }

  /** The running turn's message to the agent. */
  private async deliver(input: TurnInput): Promise<void> {
    // No agent: a restored (or gracefully stopped) session starts it again, on its native session.
    const handle = this.agent.current ?? (await this.agent.resume());
    try {
      await handle.send(input);
    } catch (err) {
      // The agent never got the message: close the turn so the session stays usable.
      this.apply(this.normalizer.turnAborted(`the message could not be delivered to the agent: ${(err as Error).message}`));
      throw err instanceof ApiError ? err : new ApiError('agent_io_failed', (err as Error).message, { sessionId: this.id });
    }
  }

  async interrupt(): Promise<void> {
    if (this.normalizer.turnActive && this.budget.interruptHeldTurn()) return;
    const handle = this.live();
    if (!this.normalizer.turnActive) {
      throw new ApiError('no_turn_running', `Session '${this.id}' has no running turn to interrupt.`, { sessionId: this.id });
    }
    this.normalizer.interruptRequested();
    await handle.interrupt();
  }

  /** `reason` marks a reply the daemon gave itself (policy or timeout) rather than the client. */
  replyPermission(permissionId: string, reply: PermissionReply, reason?: 'policy' | 'timeout'): Promise<void> {
    return this.hitl.permission(permissionId, reply, reason);
  }

  replyQuestion(questionId: string, answers: string[][] | null, reason?: 'policy' | 'timeout'): Promise<void> {
    return this.hitl.question(questionId, answers, reason);
  }

  /** PATCH …/{id}: the session's budget from now on (null or {}: none). */
  updateBudget(budget: Budget | null): void {
    this.assertOpen();
    this.budget.update(budget ?? {});
    this.updatedAt = this.deps.clock.now();
    if (this.deps.store.durable) this.deps.store.updateSession(this.id, this.progressOf);
  }

  /** The budget as set (create, PATCH, the daemon's default), without the raises approvals made: what a fork starts with. */
  get budgetSet(): Budget {
    return this.budget.snapshot().set;
  }

  /** Kills the agent; resolves once session.ended is in the log. Idempotent. */
  terminate(): Promise<void> {
    return this.agent.terminate();
  }

  /** The store stopped taking writes: the stream says so (readers see it once it recovers). */
  storeFailed(failure: { code: string; message: string; since: string }): void {
    const message = `The event store could not take writes since ${failure.since} (${failure.code}: ${failure.message}); events are held in memory until it can.`;
    this.apply(this.normalizer.daemonError(message, 'store_unavailable', { store_error: failure.code }));
  }

  /** A part of this session's stored record could not be serialised and was written without it (write-batcher.ts). */
  recordDropped(part: string, message: string): void {
    this.apply(this.normalizer.daemonError(`The store wrote this session's ${part} without what it could not serialise: ${message}`, 'record_not_stored', { part }));
  }

  /** Stops the agent without ending the session (graceful daemon stop; see SessionAgent.suspend). */
  suspend(): Promise<void> {
    return this.agent.suspend();
  }

  // One object of one shape: an absent optional field is `undefined`, which JSON leaves out, instead
  // of a spread object per field (GET /v1/sessions builds one per session per request).
  info(): SessionInfo {
    const r = this.request;
    return {
      sessionId: this.id,
      agent: r.agent,
      agentMode: r.agentMode,
      permissionMode: r.permissionMode,
      model: r.model || undefined,
      variant: r.variant || undefined,
      nativeSessionId: this.log.currentNativeSessionId || undefined,
      ended: this.normalizer.ended,
      eventCount: this.log.lastSequence,
      createdAt: this.createdAtIso,
      updatedAt: this.updatedAt.toISOString(),
      title: r.title || undefined,
      cwd: r.cwd,
      status: this.status,
      restored: this.restored,
      permissionPolicy: this.hitlSettings.policy,
      hitlTimeoutMs: this.hitlSettings.timeoutMs,
      forkedFrom: r.forkedFrom || undefined,
      queued: this.queue.length,
      usage: this.normalizer.usage.current,
      budget: this.budget.budget,
    };
  }

  private live(): AgentHandle {
    this.assertOpen();
    const handle = this.agent.current;
    if (!handle) throw new ApiError('session_ended', `Session '${this.id}' has no running agent.`, { sessionId: this.id });
    return handle;
  }

  private assertOpen(): void {
    if (this.normalizer.ended || this.agent.ending) {
      throw new ApiError('session_ended', `Session '${this.id}' has ended; create a new session.`, { sessionId: this.id });
    }
  }

  /** The row the store keeps for this session (computed at the commit, once per tick). */
  private progress(): SessionProgress {
    return {
      nativeSessionId: this.log.currentNativeSessionId,
      status: this.status,
      snapshot: { ...this.normalizer.snapshot(), queue: this.queue?.snapshot() ?? [], budget: this.budget?.snapshot() },
      updatedAt: this.updatedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
      lastSequence: this.log.lastAppended,
    };
  }

  private apply(events: Normalized[]): UniversalEvent[] {
    if (events.length === 0) return [];
    this.updatedAt = this.deps.clock.now();
    const logged = events.map((n) => {
      const event = this.log.append(n.event, n.raw, n.nativeSessionId);
      this.deps.onEvent?.(this, event);
      if (event.type === 'session.ended') this.ended(event.data);
      this.agent.logged(event);
      this.hitl.observe(event);
      this.budget.observe(event);
      this.queue?.logged(event);
      return event;
    });
    if (this.normalizer.ended && this.queue?.length) this.queue.sessionEnded();
    // The agent reported a step and waits on the daemon: the budget lets it go on, or asks first.
    if (this.normalizer.takeHeldStep()) this.budget.stepHeld();
    if (this.deps.store.durable) this.deps.store.updateSession(this.id, this.progressOf);
    return logged;
  }

  private readonly progressOf = () => this.progress();

  /** session.ended is in the log: the TTL starts, and the daemon's log says why it ended. */
  private ended(data: SessionEndedData): void {
    this.endedAt = this.updatedAt;
    const fields = { reason: data.reason, terminatedBy: data.terminated_by, exitCode: data.exit_code, message: data.message };
    this.logger[data.reason === 'error' ? 'warn' : 'info'](fields, LogMessage.sessionEnded);
  }
}
