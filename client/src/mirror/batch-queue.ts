// One daemon's events on their way into PostgreSQL: a bounded queue written in batches, bounded by
// count and by time. Readers `await push()`, which waits while the queue is full, so a slow
// database stops the reading of the streams (the daemon then holds the events, as it does for any
// slow reader) instead of growing the mirror's memory.
//
// Batches are written one at a time, in order, and a failed batch is retried until it is written.
// So what is stored of a session is always a prefix of it (1..n, no holes), which is what lets
// every start resume at the highest stored sequence: a later batch can never commit before an
// earlier one that a crash then loses.
import { backoffDelay } from '../backoff.js';
import { sleep } from '../cancel.js';
import type { EventRow } from './mirror-store.js';

export interface BatchQueueOptions {
  /** Rows per INSERT at most. */
  batchSize: number;
  /** How long the first queued row waits for a batch to fill before it is written anyway. */
  maxDelayMs: number;
  /** Rows held (queued, plus the batch being written) before push() waits. */
  capacity: number;
  /** The same for the bytes of their JSON: a few huge events fill it as well as many small ones. */
  capacityBytes: number;
  write(rows: EventRow[]): Promise<void>;
  /** A write failed; it is retried after `retryInMs`. */
  onError(error: unknown, retryInMs: number): void;
}

export class BatchQueue {
  private rows: EventRow[] = [];
  private bytes = 0;
  private inFlight = 0;
  private inFlightBytes = 0;
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: BatchQueueOptions) {}

  /** Rows read and not yet written. */
  get size(): number {
    return this.rows.length + this.inFlight;
  }

  /** Queues a row; resolves once there is room for the next one. */
  push(row: EventRow): Promise<void> | void {
    this.rows.push(row);
    this.bytes += row.json.length;
    if (this.rows.length >= this.options.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.options.maxDelayMs);
    if (!this.full()) return;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes everything queued; resolves when it is stored (or the retry is abandoned by close). */
  async flush(): Promise<void> {
    while (this.rows.length > 0 || this.writing) {
      this.kick();
      await this.writing;
    }
  }

  /** Flushes, then refuses to retry: a last write that keeps failing gives up after `timeoutMs`. */
  async close(timeoutMs: number): Promise<void> {
    const done = this.flush();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.timer);
    this.release(true);
  }

  private full(): boolean {
    return this.size >= this.options.capacity || this.bytes + this.inFlightBytes >= this.options.capacityBytes;
  }

  private kick(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing || this.rows.length === 0) return;
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
      // Rows pushed between the loop's last look and now would otherwise wait for the next push.
      if (this.rows.length > 0 && !this.closed) this.kick();
    });
  }

  private async writeAll(): Promise<void> {
    while (this.rows.length > 0 && !this.closed) {
      const batch = this.rows.splice(0, this.options.batchSize);
      const bytes = batch.reduce((n, r) => n + r.json.length, 0);
      this.bytes -= bytes;
      this.inFlight = batch.length;
      this.inFlightBytes = bytes;
      for (let attempt = 1; ; attempt++) {
        try {
          await this.options.write(batch);
          break;
        } catch (error) {
          if (this.closed) return;
          const delay = backoffDelay(attempt, { initialDelayMs: 200, maxDelayMs: 10_000 });
          this.options.onError(error, delay);
          await sleep(delay);
        }
      }
      this.inFlight = 0;
      this.inFlightBytes = 0;
      this.release(false);
    }
  }

  /** Lets waiting readers go on while there is room (all of them when closing). */
  private release(all: boolean): void {
    while (this.waiters.length > 0 && (all || !this.full())) this.waiters.shift()!();
  }
}
