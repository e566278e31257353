// Random ids: prefix, 16 symbols of [0-9a-z], no repeats, and every symbol in use (no bias that
// would leave some out). Tests elsewhere use counterIds; this is the generator the daemon runs with.
import { describe, expect, it } from 'vitest';
import { randomIds } from '../../../src/util/deps.js';

describe('randomIds', () => {
  it('gives prefixed, URL-safe, unique ids over the whole alphabet', () => {
    const seen = new Set<string>();
    const symbols = new Set<string>();
    for (let i = 0; i < 50_000; i++) {
      const id = randomIds.next(i % 2 ? 'evt' : 'perm');
      expect(id).toMatch(i % 2 ? /^evt_[0-9a-z]{16}$/ : /^perm_[0-9a-z]{16}$/);
      seen.add(id);
      for (const c of id.slice(id.indexOf('_') + 1)) symbols.add(c);
    }
    expect(seen.size).toBe(50_000);
    expect(symbols.size).toBe(36);
  });
});
