// Deleting a session's events a slice at a time. A session can hold millions of rows, and one
// DELETE of 200 000 of them held the event loop for ~1.5 s, stalling every stream of every other
// session behind it. So a delete (DELETE /v1/sessions/{id}, retention) removes the session's row
// at once, in one transaction with a row in `dropping` that names it; its events then go
// DROP_BATCH rows per step, one step per turn of the event loop (setImmediate), each step its own
// transaction of a few milliseconds. A daemon that stops half-way resumes from `dropping` on its
// next start, so no event is orphaned. Until then the events are invisible (readEvents skips a
// session being dropped), and a new session taking the same id first finishes the old one's drop,
// so its sequence 1 never meets the old sequence 1.
import type { Database as Db, Statement } from './sqlite-binding.js';

/** Rows per step: 19–29 ms at most on this project's 2-core machines, a WAL checkpoint included (docs/performance.md). */
export const DROP_BATCH = 1_000;

export class SessionDrops {
  private readonly ids = new Set<string>();
  private readonly mark: (id: string) => void;
  private readonly deleteSome: Statement;
  private readonly unmark: Statement;
  private immediate: NodeJS.Immediate | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private waiters: (() => void)[] = [];

  /** `onDrained` runs once every started drop is finished (retention gives space back then). */
  constructor(
    private readonly db: Db,
    private readonly onDrained: () => void,
  ) {
    this.deleteSome = db.prepare('DELETE FROM events WHERE session_id = ? AND sequence IN (SELECT sequence FROM events WHERE session_id = ? ORDER BY sequence LIMIT ?)');
    this.unmark = db.prepare('DELETE FROM dropping WHERE session_id = ?');
    const removeSession = db.prepare('DELETE FROM sessions WHERE id = ?');
    const insert = db.prepare('INSERT OR IGNORE INTO dropping (session_id) VALUES (?)');
    this.mark = db.transaction((id: string) => {
      removeSession.run(id);
      insert.run(id);
    });
    // Drops a previous daemon started and did not finish.
    for (const id of db.prepare('SELECT session_id FROM dropping').pluck().all() as string[]) this.ids.add(id);
    this.schedule();
  }

  /** Drops held: sessions whose events are still being deleted. */
  get pending(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** The session's row goes now (it is no longer listed or restored); its events step by step. */
  drop(id: string): void {
    this.mark(id);
    this.ids.add(id);
    this.schedule();
  }

  /** Deletes the rest of one session's events now (a new session is taking its id). */
  finish(id: string): void {
    if (!this.ids.has(id)) return;
    while (this.step(id, Number.MAX_SAFE_INTEGER) === false);
  }

  /** Resolves once nothing is left to drop (tests, and callers that need the space back). */
  drained(): Promise<void> {
    return this.ids.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    clearImmediate(this.immediate);
    clearTimeout(this.retry);
  }

  private schedule(): void {
    if (this.immediate || this.retry || this.closed || this.ids.size === 0) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      const next = this.ids.values().next();
      if (next.done) return;
      try {
        this.step(next.value, DROP_BATCH);
      } catch {
        // A failing disk (a delete writes to the WAL too): try again later; the rows stay marked.
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.schedule();
        }, 1_000).unref();
        return;
      }
      this.schedule();
    });
  }

  /** Deletes up to `limit` of the session's events; true once none are left (and the mark is gone). */
  private step(id: string, limit: number): boolean {
    const { changes } = this.deleteSome.run(id, id, limit);
    if (changes >= limit) return false;
    this.unmark.run(id);
    this.ids.delete(id);
    if (this.ids.size === 0) {
      this.onDrained();
      for (const resolve of this.waiters.splice(0)) resolve();
    }
    return true;
  }
}
