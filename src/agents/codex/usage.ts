// Codex's token counts (thread/tokenUsage/updated) as a turn's TokenUsage. Codex counts per
// thread: `total` runs over every request of the thread, `last` is its latest model request. A
// turn's own usage is therefore its final `total` minus the `total` before its first request
// (that update's `total - last`), which holds after a resume too, when earlier turns are unknown.
import type { TokenUsage } from '../../schema/turn.js';
import { tokenUsage } from '../token-usage.js';

const FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteInputTokens', 'reasoningOutputTokens'] as const;
type Field = (typeof FIELDS)[number];
/** Counts by Codex's field names; a field that is not a number (absent, redacted) is left out. */
export type CodexCounts = Partial<Record<Field, number>>;

function counts(tokenUsage: unknown, key: 'total' | 'last'): CodexCounts | undefined {
  const value = typeof tokenUsage === 'object' && tokenUsage !== null ? (tokenUsage as Record<string, unknown>)[key] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const out: CodexCounts = {};
  for (const f of FIELDS) {
    const n = (value as Record<string, unknown>)[f];
    if (typeof n === 'number') out[f] = n;
  }
  return out;
}

/** The thread's totals as this update reports them. */
export function totalsOf(update: unknown): CodexCounts | undefined {
  return counts(update, 'total');
}

/** The thread's totals before the request this update reports. */
export function totalsBefore(update: unknown): CodexCounts | undefined {
  const total = counts(update, 'total');
  const last = counts(update, 'last');
  if (!total || !last) return undefined;
  const out: CodexCounts = {};
  for (const f of FIELDS) if (total[f] !== undefined && last[f] !== undefined) out[f] = total[f] - last[f];
  return out;
}

/** The turn's usage: the latest update's totals minus the totals before the turn's first request. */
export function turnUsage(latest: unknown, before: CodexCounts | undefined): TokenUsage | undefined {
  const total = counts(latest, 'total');
  if (!total || !before) return undefined;
  const diff = (f: Field) => (total[f] !== undefined && before[f] !== undefined ? total[f] - before[f] : undefined);
  return tokenUsage({
    input: diff('inputTokens'),
    output: diff('outputTokens'),
    cacheRead: diff('cachedInputTokens'),
    cacheCreation: diff('cacheWriteInputTokens'),
    reasoning: diff('reasoningOutputTokens'),
  });
}
