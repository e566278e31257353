// A failing commit of the SQLite store (write-batcher.ts), and its retry. A commit that fails (disk
// full, read-only data dir, I/O error) is rolled back whole and its staged writes are kept; the
// failure is reported once to the listeners (the daemon refuses new work with 507 and logs an
// `error` event) and the commit retried every `retryMs`, not every tick, since a full disk would
// fail each attempt. The first commit that succeeds reports the store healthy again.
import type { StoreFailure } from './event-store.js';

export class WriteHealth {
  failure: StoreFailure = null;
  private readonly listeners: ((failure: StoreFailure) => void)[] = [];
  private retryTimer: NodeJS.Timeout | undefined;

  /** `retry` commits again what is staged. */
  constructor(
    private readonly retryMs: number,
    private readonly retry: () => void,
  ) {}

  onHealth(listener: (failure: StoreFailure) => void): void {
    this.listeners.push(listener);
  }

  /** A commit failed: reported if the store was healthy, retried after `retryMs` (one timer at a time). */
  failed(err: Error & { code?: string }): void {
    if (!this.failure) {
      this.failure = { code: err.code ?? 'SQLITE_ERROR', message: err.message, since: new Date().toISOString() };
      for (const l of this.listeners) l(this.failure);
    }
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.retry();
    }, this.retryMs).unref();
  }

  /** A commit succeeded after failures. */
  recovered(): void {
    this.failure = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    for (const l of this.listeners) l(null);
  }

  /** Stops the retry timer: the store is closing. */
  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}
