// The session's running usage totals (docs/budgets.md): every step an agent reports adds to them
// at once (`usage.updated`, scope step), and at turn.ended the turn's own total settles them, so
// that the totals always equal the sum of the turns' `turn.ended.metadata.usage`. A turn that
// reported steps but no total of its own is given the sum of its steps as its usage. Agent
// independent: it reads only UsageDrafts and the typed turn metadata.
import type { UsageDraft } from '../agents/types.js';
import type { TokenUsage, TurnEndedMetadata } from '../schema/turn.js';
import type { CostSource, UsageChange, UsageTotals } from '../schema/usage.js';
import { DAEMON, type EventBatch } from './event-batch.js';
import { priceOf } from './prices.js';

const KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

export const zeroUsage = (): UsageTotals => ({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

export class UsageBook {
  private totals: UsageTotals = zeroUsage();
  /** The totals when the running turn started: what its steps added is the difference. */
  private turnBase: UsageTotals = zeroUsage();
  private stepsSeen = false;
  /** What the running turn's steps reported as their own cost. */
  private turnAgentCost = 0;
  /** The model usage is priced with: the last one the agent named, or the session's. */
  model: string | undefined;

  constructor(private readonly batch: EventBatch) {}

  get current(): UsageTotals {
    return { ...this.totals };
  }

  /** Input plus output tokens: what max_tokens limits. */
  get tokens(): number {
    return this.totals.input_tokens + this.totals.output_tokens;
  }

  turnStarted(): void {
    this.turnBase = { ...this.totals };
    this.stepsSeen = false;
    this.turnAgentCost = 0;
  }

  /** One step of the running turn. */
  step(d: UsageDraft, turnId: string | null): void {
    if (d.model) this.model = d.model;
    this.stepsSeen = true;
    this.turnAgentCost += d.cost_usd ?? 0;
    const added: UsageChange = { ...zeroUsage(), ...pick(d.usage) };
    this.add(added, d.cost_usd, 'step', turnId);
  }

  /** The turn ends: its own total settles the totals; returns its metadata, usage filled in from its steps if it had none. */
  turnEnded(metadata: TurnEndedMetadata, turnId: string): TurnEndedMetadata {
    const seen = diff(this.totals, this.turnBase);
    if (!metadata.usage) {
      if (!this.stepsSeen) return metadata;
      return { ...metadata, usage: asTokenUsage(seen) };
    }
    const added = diff({ ...zeroUsage(), ...pick(metadata.usage) }, seen);
    const agentCost = metadata.cost_usd === undefined ? undefined : metadata.cost_usd - this.turnAgentCost;
    const changed = KEYS.some((k) => added[k] !== 0) || (agentCost !== undefined && agentCost !== 0);
    if (!this.stepsSeen || changed) this.add(added, agentCost, 'turn', turnId);
    return metadata;
  }

  snapshot(): UsageTotals {
    return { ...this.totals };
  }

  restore(totals: UsageTotals | undefined): void {
    if (totals) this.totals = { ...zeroUsage(), ...totals };
  }

  private add(added: UsageChange, agentCost: number | undefined, scope: 'step' | 'turn', turnId: string | null): void {
    const t = this.totals;
    for (const k of KEYS) t[k] = Math.max(0, t[k] + added[k]);
    let source: CostSource | undefined;
    let cost = agentCost;
    if (cost !== undefined) source = 'agent';
    else {
      cost = priceOf(this.model, asTokenUsage(added));
      if (cost !== undefined) source = 'price_table';
    }
    if (cost !== undefined && source) {
      added.cost_usd = cost;
      t.cost_usd = Math.max(0, (t.cost_usd ?? 0) + cost);
      t.cost_source = source;
    }
    const data = { totals: { ...t }, added, scope, ...(turnId ? { turn_id: turnId } : {}), ...(this.model ? { model: this.model } : {}) };
    this.batch.emit({ type: 'usage.updated', data, ...DAEMON });
  }
}

function pick(u: TokenUsage): Omit<UsageChange, 'cost_usd'> {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
  };
}

function diff(a: Omit<UsageChange, 'cost_usd'>, b: Omit<UsageChange, 'cost_usd'>): UsageChange {
  return {
    input_tokens: a.input_tokens - b.input_tokens,
    output_tokens: a.output_tokens - b.output_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens - b.cache_read_input_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens - b.cache_creation_input_tokens,
  };
}

function asTokenUsage(c: UsageChange): TokenUsage {
  return {
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    ...(c.cache_read_input_tokens ? { cache_read_input_tokens: c.cache_read_input_tokens } : {}),
    ...(c.cache_creation_input_tokens ? { cache_creation_input_tokens: c.cache_creation_input_tokens } : {}),
  };
}
