// Events behind a log's in-memory window, read from the store one keyset page at a time
// (`sequence > ?`, never OFFSET) and kept as bytes, so a stream replaying a long history builds its
// frames exactly as it does from the window (size, then copy) and memory stays at one page.
import type { EventStore } from '../store/event-store.js';
import { RAW_TAIL } from './event-buffer.js';

/** Events fetched per store read: a stream's batch, so one read serves one frame. */
export const PAGE_EVENTS = 256;

export class HistoryPage {
  private from = 0;
  private jsons: Buffer[] = [];
  private raws: (Buffer | null)[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly sessionId: string,
  ) {}

  /** Bytes of event `sequence`'s JSON as `copy` writes it. */
  size(sequence: number, withRaw: boolean): number {
    const i = this.load(sequence);
    const json = this.jsons[i]!;
    const raw = this.raws[i];
    return withRaw && raw ? json.length - RAW_TAIL + raw.length + 1 : json.length;
  }

  /** Copies event `sequence`'s JSON into `target` at `at`; returns the position after it. */
  copy(sequence: number, withRaw: boolean, target: Buffer, at: number): number {
    const i = this.load(sequence);
    const json = this.jsons[i]!;
    const raw = this.raws[i];
    if (!withRaw || !raw) return at + json.copy(target, at);
    at += json.copy(target, at, 0, json.length - RAW_TAIL);
    at += raw.copy(target, at);
    target[at] = 0x7d; // the envelope's closing brace
    return at + 1;
  }

  /** Index of `sequence` in the page, reading the page that starts at it when it is not held. */
  private load(sequence: number): number {
    const i = sequence - this.from;
    if (i >= 0 && i < this.jsons.length) return i;
    const rows = this.store.readEvents(this.sessionId, sequence - 1, PAGE_EVENTS);
    if (rows[0]?.sequence !== sequence) {
      // The caller checked the store holds it; a hole here means the file was changed under us.
      throw new Error(`event ${sequence} of session ${this.sessionId} is missing from the store`);
    }
    this.from = sequence;
    this.jsons = rows.map((r) => Buffer.from(r.json));
    this.raws = rows.map((r) => (r.raw === null ? null : Buffer.from(r.raw)));
    return 0;
  }

  /** Drops the page (the stream moved on to the window, or the session went away). */
  clear(): void {
    this.jsons = [];
    this.raws = [];
  }
}

/** An event's JSON with its raw payload spliced in, as the window's `json(i, true)` gives it. */
export function withRawJson(json: string, raw: string | null): string {
  return raw === null ? json : `${json.slice(0, json.length - RAW_TAIL)}${raw}}`;
}
