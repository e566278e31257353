// A record part as the store writes it (write-batcher.ts): its JSON, or, when it cannot be
// serialised (nested past the depth bound, a cycle, a BigInt), its JSON with the offending parts
// replaced by a note, and what was left out. Input is depth-checked where it enters
// (src/util/json-limits.ts); this is the net under that check, so that one record the store cannot
// write never stops it from writing the others.
import { MAX_JSON_DEPTH } from '../util/json-limits.js';

export function storableJson(value: unknown, fallback: () => string): { json: string; dropped?: string } {
  try {
    return { json: JSON.stringify(value) ?? 'null' };
  } catch (err) {
    const dropped = (err as Error).message;
    try {
      return { json: JSON.stringify(pruned(value, 0, new Set())) ?? 'null', dropped };
    } catch {
      return { json: fallback(), dropped };
    }
  }
}

/** A copy at most MAX_JSON_DEPTH deep, without cycles or BigInts; recursion is bounded by the depth. */
function pruned(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_JSON_DEPTH) return `[not stored: nested more than ${MAX_JSON_DEPTH} levels deep]`;
  if (ancestors.has(value)) return '[not stored: a cycle]';
  ancestors.add(value);
  const copy: unknown = Array.isArray(value)
    ? value.map((v) => pruned(v, depth + 1, ancestors))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, pruned(v, depth + 1, ancestors)]));
  ancestors.delete(value);
  return copy;
}
