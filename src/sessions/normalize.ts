// The agent-independent rules of docs/conversion.md, once, for every agent (rule: Normalize once), driven
// by capability flags, never agent ids. The Normalizer is their entry point: it routes a converter's
// drafts and the daemon's own actions to the session and turn lifecycle (lifecycle.ts), the item
// rules (item-events.ts) and the HITL rules kept here (over hitl.ts), and returns what was emitted.
import type { Draft, ProcessExit, TurnInput } from '../agents/types.js';
import type { Capabilities } from '../schema/agents.js';
import type { PermissionReply } from '../schema/api.js';
import type { EventData, PendingEvent, PermissionEventData, TurnEndedMetadata } from '../schema/events.js';
import type { SessionSnapshot } from '../store/event-store.js';
import type { IdGenerator } from '../util/deps.js';
import { DAEMON, EventBatch, type Normalized, originOf } from './event-batch.js';
import { agentHitlId, HitlBook } from './hitl.js';
import { ItemEvents } from './item-events.js';
import { Lifecycle } from './lifecycle.js';
import { UsageBook } from './usage-book.js';
import { usageOutOfRange, usageRefused } from './usage-bounds.js';
import { Subagents } from './subagents.js';

export class Normalizer {
  readonly hitl = new HitlBook();
  private readonly batch = new EventBatch();
  private readonly items: ItemEvents;
  private readonly subagents: Subagents;
  private readonly lifecycle: Lifecycle;
  /** The session's running usage totals (usage-book.ts). */
  readonly usage = new UsageBook(this.batch);
  /** The agent reported a step and waits to be told to go on (UsageDraft.held); see takeHeldStep. */
  private heldStep = false;

  constructor(
    private readonly caps: Capabilities,
    ids: IdGenerator,
  ) {
    this.items = new ItemEvents(ids, this.batch);
    this.subagents = new Subagents(ids, this.batch, (key) => this.items.idOf(key));
    this.lifecycle = new Lifecycle(
      caps,
      this.batch,
      (cancelReason, failed) => this.closeOpen(cancelReason, failed),
      this.usage,
      () => this.subagents.closeOpen('interrupted', 'session_ended', true),
    );
  }

  /** Whether the drafts just normalized left the agent held after a step (and forgets it). */
  takeHeldStep(): boolean {
    const held = this.heldStep;
    this.heldStep = false;
    return held;
  }

  get turnActive(): boolean {
    return this.lifecycle.turnId !== null;
  }
  get ended(): boolean {
    return this.lifecycle.ended;
  }

  /** The session was created: a synthetic start unless the agent announces its own. */
  sessionCreated(metadata: Record<string, unknown>, raw: unknown): Normalized[] {
    return this.batch.run(raw, () => this.lifecycle.sessionCreated(metadata));
  }

  /** The daemon dispatched a turn: turn.started and, if the agent never echoes it, the user message. */
  turnStarted(input: TurnInput, raw: unknown, messageId?: string): Normalized[] {
    return this.batch.run(raw, () => {
      this.lifecycle.startTurn(messageId);
      if (!this.caps.userMessages) this.items.userMessage(input, `user:${this.lifecycle.turnId}`);
    });
  }

  /** A message went into the running turn: message.steered and, unless the agent echoes it, its user item. */
  steered(input: TurnInput, messageId: string, raw: unknown): Normalized[] {
    return this.batch.run(raw, () => {
      const turn_id = this.lifecycle.turnId ?? '';
      const attachments = input.attachments.length > 0 ? { attachments: input.attachments } : {};
      this.batch.emit({ type: 'message.steered', data: { message_id: messageId, turn_id, message: input.message, ...attachments }, ...DAEMON });
      if (!this.caps.userMessages) this.items.userMessage(input, `user:${turn_id}:${messageId}`);
    });
  }

  /** The queue changed or the session was forked (message-queue.ts, fork.ts): the event that says so. */
  daemonEvent(event: QueueEvent, raw: unknown = null): Normalized[] {
    return this.batch.run(raw, () => this.batch.emit({ ...event, ...DAEMON } as PendingEvent));
  }

  /** Turns started so far (a fork counts the ones it copied). */
  get turns(): number {
    return this.lifecycle.turns;
  }

  /** The daemon is asking the agent to stop the running turn. Nothing is emitted: the agent ends it. */
  interruptRequested(): void {
    this.lifecycle.interruptRequested();
  }

  /** The daemon asks about the session's budget (budget.ts): a permission request of its own, in the running turn. */
  budgetRequested(data: PermissionEventData): Normalized[] {
    return this.batch.run(null, () => {
      this.lifecycle.announceTurn();
      if (this.hitl.openPermission(data)) this.batch.emit({ type: 'permission.requested', data, ...DAEMON });
      else this.notOpened('permission', data.permission_id, data);
    });
  }

  /** The budget request was answered: resolved by the daemon, whatever the agent reports of its own requests. */
  budgetResolved(id: string, reply: PermissionReply, reason?: string): Normalized[] {
    return this.batch.run({ reply, ...(reason ? { by: reason } : {}) }, () => {
      const open = this.hitl.closePermission(id);
      if (!open) return;
      const status = reply === 'reject' ? 'denied' : 'approved';
      this.batch.emit({ type: 'permission.resolved', data: { ...open, status, metadata: { ...asRecord(open.metadata), reply, ...(reason ? { reason } : {}) } }, ...DAEMON });
    });
  }

  /** The daemon stops the running turn over its budget: the agent's end of it reads budget_exceeded. */
  budgetStopRequested(): void {
    this.lifecycle.budgetStopRequested();
  }

  /** The turn never reached its agent: its budget request was rejected (or the turn interrupted) before it started. */
  budgetTurnEnded(reason: 'budget_exceeded' | 'interrupted' = 'budget_exceeded'): Normalized[] {
    return this.batch.run(null, () => this.lifecycle.endTurn({ reason }, DAEMON));
  }

  /** Drafts a converter produced from one native message. */
  agent(drafts: Draft[], raw: unknown): Normalized[] {
    return this.batch.run(raw, () => drafts.forEach((d) => this.draft(d)));
  }

  /** The client answered a permission; the agent has been told. */
  permissionReplied(id: string, reply: PermissionReply, raw: unknown, reason?: string): Normalized[] {
    return this.batch.run(raw, () => {
      const open = this.hitl.closePermission(id);
      if (!open || this.caps.nativeHitlResolution) return;
      const status = reply === 'reject' ? 'denied' : 'approved';
      const metadata = { ...asRecord(open.metadata), reply, ...(reason ? { reason } : {}) };
      this.batch.emit({ type: 'permission.resolved', data: { ...open, status, metadata }, ...DAEMON });
    });
  }

  /** The client answered (answers) or rejected (null) a question; the agent has been told. */
  questionReplied(id: string, answers: string[][] | null, raw: unknown): Normalized[] {
    // QuestionEventData has no metadata; why a question was answered is in `raw` (see Session).
    return this.batch.run(raw, () => {
      const open = this.hitl.closeQuestion(id);
      if (!open || this.caps.nativeHitlResolution) return;
      const data = answers
        ? { ...open, status: 'answered' as const, response: answers.map((a) => a.join(', ')).join('; ') }
        : { ...open, status: 'rejected' as const };
      this.batch.emit({ type: 'question.resolved', data, ...DAEMON });
    });
  }

  /** What a restarted daemon needs to close what was open (stored with the session's row). */
  snapshot(): SessionSnapshot {
    return {
      ...this.lifecycle.snapshot(),
      permissions: [...this.hitl.permissions.values()],
      questions: [...this.hitl.questions.values()],
      // Items are open only within a turn; outside one there is nothing to walk.
      openItems: this.lifecycle.turnId ? this.items.openForSnapshot() : [],
      usage: this.usage.snapshot(),
      // Background sub-agents outlive their turn, so these are kept whether a turn is open or not.
      openSubagents: this.subagents.openForSnapshot(),
    };
  }

  /** A stored session comes back (daemon restart): its turn and HITL bookkeeping as they were. */
  restore(snapshot: SessionSnapshot, ended: boolean): void {
    this.lifecycle.restore(snapshot, ended);
    this.items.restore(snapshot.openItems ?? []);
    this.usage.restore(snapshot.usage);
    this.subagents.restore(snapshot.openSubagents ?? []);
    for (const p of snapshot.permissions) this.hitl.openPermission(p);
    for (const q of snapshot.questions) this.hitl.openQuestion(q);
  }

  /**
   * The agent is gone but the session lives on (a daemon restart or graceful stop, see
   * Lifecycle.agentGone). Open items fail and pending HITL requests are cancelled either way.
   */
  agentGone(why: 'daemon_restarted' | 'daemon_stopping'): Normalized[] {
    return this.batch.run(null, () => {
      this.items.failRestored();
      this.subagents.endRestored(why);
      this.lifecycle.agentGone(why);
    });
  }

  /** Something the daemon itself must tell the stream (the store failing, say). */
  daemonError(message: string, code: string, details?: Record<string, unknown>): Normalized[] {
    return this.batch.run(null, () => this.batch.emit({ type: 'error', data: { message, code, ...(details ? { details } : {}) }, ...DAEMON }));
  }

  /** The agent could not be started again on its own session: say why and end the session. */
  resumeFailed(message: string): Normalized[] {
    return this.batch.run(null, () => this.lifecycle.resumeFailed(message));
  }

  /** The turn was started but the agent never received it: say so and close the turn. */
  turnAborted(message: string): Normalized[] {
    return this.batch.run(null, () => this.lifecycle.turnAborted(message));
  }

  /** The agent process is gone. Close what is open, then end the session if the agent did not. */
  processExited(exit: ProcessExit, message?: string): Normalized[] {
    const raw = { exit_code: exit.exitCode, signal: exit.signal, requested: exit.requested };
    return this.batch.run(raw, () => this.lifecycle.processExited(exit, message));
  }

  private draft(d: Draft): void {
    const origin = d.type === 'agent.unparsed' ? DAEMON : originOf(d);
    if (d.type === 'subagent.started') return this.subagents.start(d, origin);
    if (d.type === 'subagent.ended') return this.subagents.end(d, origin);
    // Everything else a sub-agent produced says which one, additively, in `data` (docs/events.md).
    const sub = d.type === 'agent.unparsed' ? undefined : this.subagents.idFor(d.subagent_key);
    const tag = sub === undefined ? {} : { subagent_id: sub };
    switch (d.type) {
      case 'session.started': {
        const model = d.data.metadata?.model;
        if (typeof model === 'string' && model) this.usage.model = model;
        return this.lifecycle.agentSessionStarted(d, origin);
      }
      case 'usage': {
        // Agents' numbers are bounded where they enter (usage-bounds.ts); a held step still goes on.
        const refused = usageOutOfRange(d.usage, d.cost_usd);
        if (refused) this.draft(usageRefused('usage', refused, { usage: d.usage, cost_usd: d.cost_usd }));
        else this.usage.step(d, this.lifecycle.turnId);
        if (d.held && this.lifecycle.turnId) this.heldStep = true;
        return;
      }
      case 'session.ended':
        return this.lifecycle.agentSessionEnded(d.data, origin);
      case 'turn.started':
        return this.lifecycle.agentTurnStarted(d, origin);
      case 'turn.ended':
        return this.lifecycle.endTurn(this.boundedTurnUsage(d.data.metadata), origin);
      case 'item.started':
        return this.items.start(d.item, origin, sub);
      case 'item.delta':
        return this.items.delta(d, origin, sub);
      case 'item.completed':
        return this.items.complete(d.item, origin, sub);
      case 'permission.requested': {
        // An agent's ids never pass for the daemon's own (hitl.ts, agentHitlId).
        const data = { ...d.data, permission_id: agentHitlId(d.data.permission_id), ...tag };
        if (this.hitl.openPermission(data)) return this.batch.emit({ type: d.type, data, ...origin });
        return this.notOpened('permission', data.permission_id, data);
      }
      case 'permission.resolved': {
        const permission_id = agentHitlId(d.data.permission_id);
        const open = this.hitl.closePermission(permission_id);
        const inherited = open?.subagent_id === undefined ? {} : { subagent_id: open.subagent_id };
        return this.batch.emit({ type: d.type, data: { ...inherited, ...d.data, permission_id, ...tag }, ...origin });
      }
      case 'question.requested': {
        const data = { ...d.data, question_id: agentHitlId(d.data.question_id), ...tag };
        if (this.hitl.openQuestion(data)) return this.batch.emit({ type: d.type, data, ...origin });
        return this.notOpened('question', data.question_id, data);
      }
      case 'question.resolved': {
        const question_id = agentHitlId(d.data.question_id);
        const open = this.hitl.closeQuestion(question_id);
        const inherited = open?.subagent_id === undefined ? {} : { subagent_id: open.subagent_id };
        return this.batch.emit({ type: d.type, data: { ...inherited, ...d.data, question_id, ...tag }, ...origin });
      }
      case 'error':
        return this.batch.emit({ type: d.type, data: { ...d.data, ...tag }, ...origin });
      case 'agent.unparsed':
        return this.batch.emit({ type: d.type, data: d.data, ...origin });
    }
  }

  /** A request whose id is open or was answered already is not asked again, and never silently. */
  private notOpened(kind: 'permission' | 'question', id: string, data?: object): void {
    // The same request again while it is open is a repeat (dedupe), not a second request.
    const open = kind === 'permission' ? this.hitl.permissions.get(id) : this.hitl.questions.get(id);
    if (open && JSON.stringify(open) === JSON.stringify(data)) return;
    const message = `The agent asked a ${kind} under the id '${id}', which this session has open or answered already; it was not asked again.`;
    this.batch.emit({ type: 'error', data: { message, code: 'hitl_id_reused', details: { kind, id } }, ...DAEMON });
  }

  /** A turn's own usage and cost within bounds, or left out with a warning (usage-bounds.ts). */
  private boundedTurnUsage(metadata: TurnEndedMetadata): TurnEndedMetadata {
    const refused = usageOutOfRange(metadata.usage, metadata.cost_usd);
    if (!refused) return metadata;
    this.draft(usageRefused('turn.ended', refused, { usage: metadata.usage, cost_usd: metadata.cost_usd }));
    const { usage: _usage, cost_usd: _cost, ...rest } = metadata;
    return rest as TurnEndedMetadata;
  }

  /** The turn is ending: its open items fail, the sub-agents it ran end, its pending HITL requests are cancelled. */
  private closeOpen(cancelReason: string, failed: boolean): void {
    this.items.failOpen();
    this.subagents.closeOpen(failed ? 'failed' : 'interrupted', cancelReason, false);
    const cancelled = { reason: cancelReason };
    for (const p of [...this.hitl.permissions.values()]) {
      this.hitl.closePermission(p.permission_id);
      this.batch.emit({ type: 'permission.resolved', data: { ...p, status: 'denied', metadata: { ...asRecord(p.metadata), ...cancelled } }, ...DAEMON });
    }
    for (const q of [...this.hitl.questions.values()]) {
      this.hitl.closeQuestion(q.question_id);
      this.batch.emit({ type: 'question.resolved', data: { ...q, status: 'rejected' }, ...DAEMON });
    }
  }
}

/** The daemon's own events about messages and forks, which no agent state depends on. */
export type QueueEvent =
  | { type: 'message.queued'; data: EventData<'message.queued'> }
  | { type: 'message.dequeued'; data: EventData<'message.dequeued'> }
  | { type: 'session.forked'; data: EventData<'session.forked'> };

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
