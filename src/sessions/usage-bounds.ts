// Agents' numbers are bounded where they enter (docs/budgets.md, "Bounds"): a token count or a
// cost an agent reports is checked before it reaches the usage totals or a budget. A count that is
// not a whole number from 0 to MAX_REPORTED_TOKENS, or a cost that is not a finite number from 0 to
// MAX_REPORTED_COST_USD, is not usage: the report is left out of the totals and the stream gets an
// `agent.unparsed` warning saying which value was out of range, so no arithmetic ever sees it.
import type { Draft } from '../agents/types.js';
import { unparsedDraft } from '../agents/unparsed.js';
import { MAX_REPORTED_COST_USD, MAX_REPORTED_TOKENS, type TokenUsage } from '../schema/events.js';

const COUNTS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens', 'reasoning_output_tokens'] as const;

const countOk = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_REPORTED_TOKENS;
const costOk = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= MAX_REPORTED_COST_USD;

/** What is out of range in one report, as a short reason; undefined when all is within bounds. */
export function usageOutOfRange(usage: TokenUsage | undefined, cost: unknown): string | undefined {
  for (const key of COUNTS) {
    const value = usage?.[key];
    if (value !== undefined && !countOk(value)) return `${key} ${String(value)} is not a whole number from 0 to ${MAX_REPORTED_TOKENS}`;
  }
  if (cost !== undefined && !costOk(cost)) return `cost_usd ${String(cost)} is not a number from 0 to ${MAX_REPORTED_COST_USD}`;
  return undefined;
}

/** The warning for a report left out. */
export function usageRefused(where: 'usage' | 'turn.ended', reason: string, native: unknown): Draft {
  return unparsedDraft(`normalizer.${where}`, `usage out of range, not counted: ${reason}`, native);
}
