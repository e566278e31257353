// A session's budget (docs/budgets.md): the limits in force, and the one agent-independent way a
// crossed limit pauses the session and asks. The daemon checks at two points: after a step the
// agent reports and waits on (capability budgetPause 'step': the agent is held until told to go
// on), and before a turn goes to the agent (every agent: the turn is held before the agent sees
// it). Crossed, it raises `permission.requested` with `action: "budget"`; `once` raises the
// limit by its set size and lets the agent go on, `always` lifts that limit, `reject` ends the turn
// as `budget_exceeded`. Nothing is lost either way and the session stays usable.
import type { AgentHandle, TurnInput } from '../agents/types.js';
import type { PermissionReply } from '../schema/api.js';
import type { Budget, BudgetLimit, UniversalEvent } from '../schema/events.js';
import { DAEMON_PERMISSION_PREFIX } from './hitl.js';
import type { SessionCore } from './session-parts.js';

/** What the gate needs of its session (session.ts builds it). */
export interface BudgetContext extends SessionCore {
  handle: () => AgentHandle | undefined;
  /** Sends a turn the gate held to the agent (starting the agent if the session has none). */
  deliver: (input: TurnInput) => Promise<void>;
}

interface Crossing {
  limit: BudgetLimit;
  limit_value: number;
  spent: number;
}

interface Pending extends Crossing {
  id: string;
  kind: 'step' | 'turn';
  input?: TurnInput;
}

export class BudgetGate {
  /** The budget in force: what was set, raised by each approval. */
  private inForce: Budget;
  /** The budget as set (create, PATCH, the daemon's default): one approval raises a limit by its size here. */
  private set: Budget;
  private pending: Pending | null = null;
  private asked = 0;

  constructor(
    private readonly ctx: BudgetContext,
    budget: Budget,
    stored?: { inForce: Budget; set: Budget },
  ) {
    this.set = stored?.set ?? { ...budget };
    this.inForce = stored?.inForce ?? { ...budget };
  }

  get budget(): Budget {
    return { ...this.inForce };
  }

  snapshot(): { inForce: Budget; set: Budget } {
    return { inForce: { ...this.inForce }, set: { ...this.set } };
  }

  /** PATCH …/{id}: a new budget replaces the old one, raises included. A pending request stays until answered. */
  update(budget: Budget): void {
    this.set = { ...budget };
    this.inForce = { ...budget };
  }

  owns(permissionId: string): boolean {
    return this.pending?.id === permissionId;
  }

  /** The agent reported a step and waits: let it go on, or ask first. */
  stepHeld(): void {
    const crossing = this.crossing(false);
    if (crossing) return this.ask({ ...crossing, kind: 'step' });
    this.goOn();
  }

  /** A turn is about to go to the agent: true when it may now; otherwise it is held and asked about. */
  beforeTurn(input: TurnInput): boolean {
    const crossing = this.crossing(true);
    if (!crossing) return true;
    this.ask({ ...crossing, kind: 'turn', input });
    return false;
  }

  /**
   * A message steered into a turn held before its agent saw it: it joins the held message, so the
   * agent gets both once the turn goes on. False when no turn is held.
   */
  steerHeld(input: TurnInput): boolean {
    const held = this.pending?.kind === 'turn' ? this.pending.input : undefined;
    if (!held || !this.pending) return false;
    this.pending.input = { message: `${held.message}\n\n${input.message}`, attachments: [...held.attachments, ...input.attachments] };
    return true;
  }

  /** An interrupt while a held turn waits on its request: the turn ends, the agent never saw it. */
  interruptHeldTurn(): boolean {
    if (this.pending?.kind !== 'turn') return false;
    this.pending = null;
    this.ctx.apply(this.ctx.normalizer.budgetTurnEnded('interrupted'));
    return true;
  }

  /** Every event the session logged: a turn's end cancels its request (the normalizer closed it). */
  observe(event: UniversalEvent): void {
    if (event.type === 'turn.ended' || event.type === 'session.ended') this.pending = null;
  }

  async reply(permissionId: string, reply: PermissionReply, reason?: string): Promise<void> {
    const p = this.pending!;
    this.pending = null;
    this.ctx.apply(this.ctx.normalizer.budgetResolved(permissionId, reply, reason));
    if (reply === 'reject') {
      if (p.kind === 'turn') return void this.ctx.apply(this.ctx.normalizer.budgetTurnEnded());
      this.ctx.normalizer.budgetStopRequested();
      await this.ctx.handle()?.interrupt();
      return;
    }
    this.raise(p.limit, reply === 'always');
    if (p.kind === 'step') return this.stepHeld();
    if (this.beforeTurn(p.input!)) await this.ctx.deliver(p.input!);
  }

  /** The first limit reached: tokens or cost spent, or (a turn starting) the turns started. */
  private crossing(turnStarting: boolean): Crossing | undefined {
    const { max_tokens, max_cost_usd, max_turns } = this.inForce;
    const usage = this.ctx.normalizer.usage;
    if (max_tokens !== undefined && usage.tokens >= max_tokens) return { limit: 'max_tokens', limit_value: max_tokens, spent: usage.tokens };
    const cost = usage.current.cost_usd;
    if (max_cost_usd !== undefined && cost !== undefined && cost >= max_cost_usd) return { limit: 'max_cost_usd', limit_value: max_cost_usd, spent: cost };
    const turns = this.ctx.normalizer.turns;
    if (turnStarting && max_turns !== undefined && turns > max_turns) return { limit: 'max_turns', limit_value: max_turns, spent: turns };
    return undefined;
  }

  private ask(p: Omit<Pending, 'id'>): void {
    const id = `${DAEMON_PERMISSION_PREFIX}${++this.asked}`;
    this.pending = { ...p, id };
    const metadata = {
      limit: p.limit,
      limit_value: p.limit_value,
      spent: p.spent,
      step: this.set[p.limit] ?? p.limit_value,
      paused: p.kind === 'step' ? 'before_next_step' : 'before_turn',
      usage: this.ctx.normalizer.usage.current,
      turns: this.ctx.normalizer.turns,
    };
    this.ctx.apply(this.ctx.normalizer.budgetRequested({ permission_id: id, action: 'budget', status: 'requested', metadata }));
  }

  /** `once`: the limit grows by its set size, as many times as it takes to be above what is spent; `always`: it is lifted. */
  private raise(limit: BudgetLimit, lift: boolean): void {
    const current = this.inForce[limit];
    if (current === undefined) return;
    if (lift) {
      const { [limit]: _lifted, ...rest } = this.inForce;
      this.inForce = rest;
      return;
    }
    const step = this.set[limit] ?? current;
    const spent = limit === 'max_tokens' ? this.ctx.normalizer.usage.tokens : limit === 'max_cost_usd' ? (this.ctx.normalizer.usage.current.cost_usd ?? 0) : this.ctx.normalizer.turns;
    this.inForce = { ...this.inForce, [limit]: raisedLimit(current, step, spent, limit === 'max_turns') };
  }

  private goOn(): void {
    const handle = this.ctx.handle();
    handle?.continueStep?.().catch((err: unknown) => this.ctx.logger.warn({ err }, 'could not let the agent go on after a step'));
  }
}

/**
 * The limit raised by whole steps until what is spent no longer crosses it (turns cross when over
 * the limit; tokens and cost once they reach it), computed, never counted: the number of steps
 * comes from an agent's usage and a client's step, and a loop over it could run for ever (a cost
 * of 1e300, or a step too small to change the sum in floating point). Where rounding still leaves
 * the result crossed, the limit is just above what is spent.
 */
export function raisedLimit(current: number, step: number, spent: number, overOnly: boolean): number {
  const crossed = (limit: number) => (overOnly ? spent > limit : spent >= limit);
  // The fewest whole steps past what is spent: up to it for turns (crossed only when over), beyond it otherwise.
  const over = (spent - current) / step;
  const steps = Math.max(1, overOnly ? Math.ceil(over) : Math.floor(over) + 1);
  const next = current + steps * step;
  if (Number.isFinite(next) && !crossed(next)) return next;
  const above = spent + step;
  return Number.isFinite(above) && above > spent ? above : Number.MAX_VALUE;
}
