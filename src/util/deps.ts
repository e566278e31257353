// The injectable sources of non-determinism (design rule 7): tests swap these for counters and a
// fixed clock so event ids, item ids and times are reproducible.
import { customAlphabet } from 'nanoid';

export interface IdGenerator {
  /** A new id with the given prefix, e.g. `next('itm')` → `itm_V1StGXR8Z5jd`. */
  next(prefix: string): string;
}

export interface Clock {
  now(): Date;
}

// Lowercase + digits only: ids stay URL-safe and readable in logs and curl commands.
const random = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 16);

export const randomIds: IdGenerator = { next: (prefix) => `${prefix}_${random()}` };
export const systemClock: Clock = { now: () => new Date() };

/** Deterministic ids for tests: `itm_1`, `itm_2`, `evt_1` … counted per prefix. */
export function counterIds(): IdGenerator {
  const counters = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      return `${prefix}_${n}`;
    },
  };
}

/** A clock that advances one millisecond per reading, starting at `start`. */
export function steppingClock(start = Date.parse('2026-01-01T00:00:00.000Z')): Clock {
  let t = start;
  return { now: () => new Date(t++) };
}
