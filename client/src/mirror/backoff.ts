// Waiting between attempts at a daemon that does not answer: exponential, capped, with jitter so
// that a fleet of mirrors (or one mirror's many sessions) does not come back in lockstep.

/** The wait before attempt `failures + 1`: 250 ms doubling up to `capMs`, half of it random. */
export function backoffMs(failures: number, capMs = 15_000): number {
  const full = Math.min(capMs, 250 * 2 ** Math.min(failures - 1, 16));
  return full / 2 + Math.random() * (full / 2);
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
