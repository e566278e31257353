// The daemon's price table (docs/budgets.md, "Cost"): USD per million tokens for the models whose
// agents report no cost of their own. It holds only the mock's model, whose prices are made up for
// the tests; a real model's price is not written here, where it would go stale unseen, so a real
// agent's cost is known only where the agent reports it (Claude Code's total_cost_usd).
import type { TokenUsage } from '../schema/turn.js';

export interface Price {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const PRICES: Readonly<Record<string, Price>> = {
  'mock-1': { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
};

/** What `usage` costs with `model`'s price, or undefined when the table has none. */
export function priceOf(model: string | undefined, usage: TokenUsage): number | undefined {
  const p = model === undefined ? undefined : PRICES[model];
  if (!p) return undefined;
  const read = usage.cache_read_input_tokens ?? 0;
  const write = usage.cache_creation_input_tokens ?? 0;
  const fresh = usage.input_tokens - read - write;
  return (fresh * p.input + read * p.cacheRead + write * p.cacheWrite + usage.output_tokens * p.output) / 1_000_000;
}
