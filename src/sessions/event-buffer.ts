// The bytes of a session's events, kept off the JS heap. Every event the log holds survives every
// young-generation GC until it is evicted, so storing each as JS strings (its envelope JSON and its
// raw payload) made every scavenge copy the events appended since the last one and every major GC
// mark all of them: at 50 000 events/s that was 3–9 ms pauses every ~20 ms, the daemon's latency
// tail (docs/performance.md). Here an event is UTF-8 bytes in large Buffers (memory the GC neither
// copies nor marks) and four numbers in typed-array columns; the only JS objects are the segments.
//
// Entries are a FIFO: pushed at the end, shifted from the front (eviction). Segments grow from 16
// KiB to 1 MiB so a small session stays small; one that is no longer referenced is released.

const FIRST_SEGMENT = 16 * 1024;
const MAX_SEGMENT = 1024 * 1024;
const NO_RAW = -1;
const MEASURE_ABOVE = 16 * 1024;
/** Every envelope ends with `"raw":null}`; with raw, its payload replaces the `null`. */
export const RAW_TAIL = 'null}'.length;

export class EventBuffer {
  /** Segments by id - segmentBase; ids only grow. */
  private segments: Buffer[] = [];
  private segmentBase = 0;
  private used = 0;
  /** Index columns, a ring of `capacity` (a power of two) slots starting at `head`. */
  // Index columns start empty: a restored session that is never read again costs no index at all.
  private capacity = 0;
  private segmentOf = new Int32Array(this.capacity);
  private offsetOf = new Int32Array(this.capacity);
  private jsonLength = new Int32Array(this.capacity);
  private rawLength = new Int32Array(this.capacity);
  private head = 0;
  private held = 0;

  get count(): number {
    return this.held;
  }

  /** Stores one event; returns the bytes it takes. `raw` null: the event has no raw payload. */
  push(json: string, raw: string | null): number {
    // Room for the worst case (3 UTF-8 bytes per UTF-16 unit), so a typical event is encoded once,
    // straight into the segment, instead of measured first and then written. A large one is
    // measured: reserving three times its size would strand memory in a segment.
    const units = json.length + (raw?.length ?? 0);
    const { segment, id } = this.room(units <= MEASURE_ABOVE ? units * 3 : Buffer.byteLength(json) + (raw === null ? 0 : Buffer.byteLength(raw)));
    const offset = this.used;
    const jsonBytes = segment.write(json, offset);
    const rawBytes = raw === null ? 0 : segment.write(raw, offset + jsonBytes);
    this.used += jsonBytes + rawBytes;
    if (this.held === this.capacity) this.grow();
    const slot = (this.head + this.held) & (this.capacity - 1);
    this.segmentOf[slot] = id;
    this.offsetOf[slot] = offset;
    this.jsonLength[slot] = jsonBytes;
    this.rawLength[slot] = raw === null ? NO_RAW : rawBytes;
    this.held++;
    return jsonBytes + rawBytes;
  }

  /** Drops the oldest event; returns the bytes it took. */
  shift(): number {
    const slot = this.head;
    const bytes = this.jsonLength[slot]! + Math.max(0, this.rawLength[slot]!);
    this.head = (this.head + 1) & (this.capacity - 1);
    this.held--;
    // Segments before the new oldest event's are no longer referenced (the newest one never is
    // released: it is still being written).
    const keepFrom = this.held > 0 ? this.segmentOf[this.head]! : this.segmentBase + this.segments.length - 1;
    while (this.segmentBase < keepFrom) {
      this.segments.shift();
      this.segmentBase++;
    }
    return bytes;
  }

  /** The i-th held event's envelope JSON (0 is the oldest), with its raw payload spliced in if asked. */
  json(i: number, withRaw: boolean): string {
    const slot = (this.head + i) & (this.capacity - 1);
    const segment = this.segments[this.segmentOf[slot]! - this.segmentBase]!;
    const offset = this.offsetOf[slot]!;
    const jsonBytes = this.jsonLength[slot]!;
    const rawBytes = this.rawLength[slot]!;
    if (!withRaw || rawBytes === NO_RAW) return segment.toString('utf8', offset, offset + jsonBytes);
    const envelope = segment.toString('utf8', offset, offset + jsonBytes - RAW_TAIL);
    return `${envelope}${segment.toString('utf8', offset + jsonBytes, offset + jsonBytes + rawBytes)}}`;
  }

  /** Bytes of the i-th held event's JSON as `json(i, withRaw)` would give it, without decoding it. */
  size(i: number, withRaw: boolean): number {
    const slot = (this.head + i) & (this.capacity - 1);
    const jsonBytes = this.jsonLength[slot]!;
    const rawBytes = this.rawLength[slot]!;
    return !withRaw || rawBytes === NO_RAW ? jsonBytes : jsonBytes - RAW_TAIL + rawBytes + 1;
  }

  /**
   * Copies the i-th held event's JSON (as `json(i, withRaw)` would give it) into `target` at `at`,
   * byte for byte from its segment; returns the position after it.
   */
  copy(i: number, withRaw: boolean, target: Buffer, at: number): number {
    const slot = (this.head + i) & (this.capacity - 1);
    const segment = this.segments[this.segmentOf[slot]! - this.segmentBase]!;
    const offset = this.offsetOf[slot]!;
    const jsonBytes = this.jsonLength[slot]!;
    const rawBytes = this.rawLength[slot]!;
    if (!withRaw || rawBytes === NO_RAW) return at + segment.copy(target, at, offset, offset + jsonBytes);
    at += segment.copy(target, at, offset, offset + jsonBytes - RAW_TAIL);
    at += segment.copy(target, at, offset + jsonBytes, offset + jsonBytes + rawBytes);
    target[at] = 0x7d; // the envelope's closing brace
    return at + 1;
  }

  /** The i-th held event's JSON as bytes: a view of its segment (no copy) unless raw is spliced in. */
  bytes(i: number, withRaw: boolean): Buffer {
    const slot = (this.head + i) & (this.capacity - 1);
    const segment = this.segments[this.segmentOf[slot]! - this.segmentBase]!;
    const offset = this.offsetOf[slot]!;
    if (!withRaw || this.rawLength[slot] === NO_RAW) return segment.subarray(offset, offset + this.jsonLength[slot]!);
    const out = Buffer.allocUnsafe(this.size(i, true));
    this.copy(i, true, out, 0);
    return out;
  }

  /** A segment with `bytes` free at `used`: the current one, else a new, larger one. */
  private room(bytes: number): { segment: Buffer; id: number } {
    let segment = this.segments.at(-1);
    if (!segment || segment.length - this.used < bytes) {
      const size = Math.max(bytes, Math.min(MAX_SEGMENT, segment ? segment.length * 2 : FIRST_SEGMENT));
      // allocUnsafeSlow: a segment of its own, not a slice of Node's shared pool.
      segment = Buffer.allocUnsafeSlow(size);
      this.segments.push(segment);
      this.used = 0;
    }
    return { segment, id: this.segmentBase + this.segments.length - 1 };
  }

  private grow(): void {
    const capacity = Math.max(1024, this.capacity * 2);
    const reorder = (old: Int32Array): Int32Array<ArrayBuffer> => {
      const next = new Int32Array(capacity);
      for (let i = 0; i < this.held; i++) next[i] = old[(this.head + i) & (this.capacity - 1)]!;
      return next;
    };
    this.segmentOf = reorder(this.segmentOf);
    this.offsetOf = reorder(this.offsetOf);
    this.jsonLength = reorder(this.jsonLength);
    this.rawLength = reorder(this.rawLength);
    this.capacity = capacity;
    this.head = 0;
  }
}
