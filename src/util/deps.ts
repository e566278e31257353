// The injectable sources of non-determinism (rule: Injectable app): tests swap these for counters and a
// fixed clock so event ids, item ids and times are reproducible.
import { randomFillSync } from 'node:crypto';

export interface IdGenerator {
  /** A new id with the given prefix, e.g. `next('itm')` → `itm_v1stgxr8z5jdqk3m`. */
  next(prefix: string): string;
}

export interface Clock {
  now(): Date;
}

// Ids are lowercase letters and digits only, so they stay URL-safe and readable in logs and curl
// commands: 16 random symbols of 36 (82 bits). Every event gets one, so they are made without
// garbage: random bytes come from a pool filled 4 KiB at a time, and the id is one string built
// from char codes in a reused array (nanoid's customAlphabet, used before, allocated a fresh byte
// array and sixteen partial strings per id: ~560 bytes of garbage per event, measured).
const ALPHABET = Array.from('0123456789abcdefghijklmnopqrstuvwxyz', (c) => c.charCodeAt(0));
const SYMBOLS = 16;
// 252 = 7 × 36: a byte below it maps to a symbol without bias; the few above are skipped.
const UNBIASED = 252;
const pool = new Uint8Array(4096);
let poolAt = pool.length;
const templates = new Map<string, number[]>();

function randomId(prefix: string): string {
  let codes = templates.get(prefix);
  if (!codes) {
    codes = [...Array.from(prefix, (c) => c.charCodeAt(0)), 0x5f /* _ */, ...new Array<number>(SYMBOLS).fill(0)];
    templates.set(prefix, codes);
  }
  for (let i = codes.length - SYMBOLS; i < codes.length; ) {
    if (poolAt === pool.length) {
      randomFillSync(pool);
      poolAt = 0;
    }
    const byte = pool[poolAt++]!;
    if (byte < UNBIASED) codes[i++] = ALPHABET[byte % ALPHABET.length]!;
  }
  return String.fromCharCode(...codes);
}

export const randomIds: IdGenerator = { next: randomId };
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
