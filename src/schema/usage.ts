// What a session has spent and what it may spend (docs/budgets.md): the data of `usage.updated`,
// the running totals GET /v1/sessions/{id} returns, and the budget a session is created with or
// given later. Tokens count as TokenUsage does: input_tokens includes cache reads and writes.
import { orNull, z } from './zod.js';

const tokens = z.number().int().min(0);
/** A change of a count: negative only when a turn's own total corrects what its steps reported. */
const change = z.number().int();

export const CostSource = z
  .enum(['agent', 'price_table'])
  .openapi('CostSource', { description: "Where cost_usd comes from: the agent's own figure, or the daemon's price table for the model (docs/budgets.md)" });
export type CostSource = z.infer<typeof CostSource>;

export const UsageTotals = z
  .object({
    input_tokens: tokens,
    output_tokens: tokens,
    cache_read_input_tokens: tokens,
    cache_creation_input_tokens: tokens,
    cost_usd: z.number().min(0).optional().openapi({ description: 'Absent while no cost is known (the agent reports none and the price table has no entry for the model)' }),
    cost_source: CostSource.optional(),
  })
  .openapi('UsageTotals', { description: "A session's running totals: every token its turns used so far" });
export type UsageTotals = z.infer<typeof UsageTotals>;

export const UsageChange = z
  .object({
    input_tokens: change,
    output_tokens: change,
    cache_read_input_tokens: change,
    cache_creation_input_tokens: change,
    cost_usd: z.number().optional(),
  })
  .openapi('UsageChange', { description: 'What one update added to the totals' });
export type UsageChange = z.infer<typeof UsageChange>;

export const UsageUpdatedData = z
  .object({
    totals: UsageTotals,
    added: UsageChange,
    scope: z.enum(['step', 'turn']).openapi({ description: "'step': the agent reported one model call; 'turn': the turn's own total at its end (whatever its steps had not already added)" }),
    turn_id: z.string().optional(),
    model: z.string().optional().openapi({ description: 'The model the usage was reported for, when known' }),
  })
  .openapi('UsageUpdatedData');
export type UsageUpdatedData = z.infer<typeof UsageUpdatedData>;

/**
 * The ranges a budget limit may take (docs/budgets.md, "Bounds"), from the create body, PATCH and
 * the `--budget-*` flags alike: wide enough for any real session, narrow enough that the limit's
 * arithmetic stays exact (tokens and turns are safe integers; a cost is at least a millionth of a
 * dollar, so one approval's raise is never lost in rounding).
 */
export const BUDGET_BOUNDS = {
  max_tokens: { min: 1, max: 1e15 },
  max_cost_usd: { min: 1e-6, max: 1e9 },
  max_turns: { min: 1, max: 1e6 },
} as const;

/**
 * The most one report of an agent may say it used (docs/budgets.md, "Bounds"): a count or cost
 * above it, negative or not finite is not usage but an `agent.unparsed` warning (normalize.ts).
 * No model call comes near a trillion tokens or a million dollars.
 */
export const MAX_REPORTED_TOKENS = 1e12;
export const MAX_REPORTED_COST_USD = 1e6;

const { max_tokens: T, max_cost_usd: C, max_turns: N } = BUDGET_BOUNDS;

export const Budget = z
  .object({
    max_tokens: z.number().int().min(T.min).max(T.max).optional().openapi({ description: `Input plus output tokens over the session (${T.min} to ${T.max})` }),
    max_cost_usd: z.number().min(C.min).max(C.max).optional().openapi({ description: `Cost over the session, in USD, where a cost is known (${C.min} to ${C.max})` }),
    max_turns: z.number().int().min(N.min).max(N.max).optional().openapi({ description: `Turns the session may start (${N.min} to ${N.max})` }),
  })
  .strict()
  .openapi('Budget', { description: 'Limits that pause the session and ask (permission.requested, action budget) when crossed; docs/budgets.md' });
export type Budget = z.infer<typeof Budget>;

export const BudgetLimit = z.enum(['max_tokens', 'max_cost_usd', 'max_turns']);
export type BudgetLimit = z.infer<typeof BudgetLimit>;

export const UpdateSessionRequest = z
  .object({ budget: orNull(Budget).openapi({ description: "The session's new budget; {} or null: none (the daemon's default no longer applies either)" }) })
  .strict()
  .openapi('UpdateSessionRequest');
export type UpdateSessionRequest = z.infer<typeof UpdateSessionRequest>;
