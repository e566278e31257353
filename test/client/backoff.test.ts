// The reconnection delays of session.events(): full jitter under an exponential cap.
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../client/src/backoff.js';

describe('backoffDelay', () => {
  it('draws between 0 and initial·2^(attempt−1), capped at maxDelayMs', () => {
    const top = () => 1;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffDelay(a, {}, top))).toEqual([250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(backoffDelay(3, { initialDelayMs: 20, maxDelayMs: 50 }, top)).toBe(50);
    expect(backoffDelay(4, {}, () => 0)).toBe(0);
    for (let i = 0; i < 1000; i++) {
      const d = backoffDelay(3, {});
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(1000);
    }
  });
});
