// Token counts as the universal TokenUsage (src/schema/turn.ts). Agents name and nest their counts
// differently and sum the input differently (Claude's input_tokens excludes cached tokens, Codex's
// inputTokens includes them); each converter maps its own, through this one builder.
import type { TokenUsage } from '../schema/turn.js';

/** Whole, non-negative token counts; anything else (a missing or redacted count) is not usage. */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The converters' one way to build a TokenUsage from an agent's numbers: undefined unless both
 * totals are real counts, and the optional breakdowns only when they are.
 */
export function tokenUsage(n: { input: unknown; output: unknown; cacheRead?: unknown; cacheCreation?: unknown; reasoning?: unknown }): TokenUsage | undefined {
  const input = count(n.input);
  const output = count(n.output);
  if (input === undefined || output === undefined) return undefined;
  const parts = {
    cache_read_input_tokens: count(n.cacheRead),
    cache_creation_input_tokens: count(n.cacheCreation),
    reasoning_output_tokens: count(n.reasoning),
  };
  const usage: TokenUsage = { input_tokens: input, output_tokens: output };
  for (const [key, value] of Object.entries(parts)) if (value !== undefined) usage[key as keyof typeof parts] = value;
  return usage;
}

/** Anthropic's shape (Claude Code's `result`, Amp's assistant messages): its input_tokens leaves out cache reads and writes. */
export function fromAnthropic(value: unknown): TokenUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const u = value as Record<string, unknown>;
  const uncached = count(u.input_tokens);
  const read = u.cache_read_input_tokens === undefined ? 0 : count(u.cache_read_input_tokens);
  const created = u.cache_creation_input_tokens === undefined ? 0 : count(u.cache_creation_input_tokens);
  const input = uncached === undefined || read === undefined || created === undefined ? undefined : uncached + read + created;
  return tokenUsage({ input, output: u.output_tokens, cacheRead: u.cache_read_input_tokens, cacheCreation: u.cache_creation_input_tokens });
}

/** The sum of two usages (an agent that reports per model request); a missing side adds nothing. */
export function addUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
  if (!a || !b) return a ?? b;
  const sum: TokenUsage = { input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens };
  for (const key of ['cache_read_input_tokens', 'cache_creation_input_tokens', 'reasoning_output_tokens'] as const) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}
