// Keeps the head and tail of a process's stderr, bounded, for session.ended (spec: first 20 lines,
// last 50 when truncated). The middle is counted, not kept: a chatty agent cannot grow memory.
import type { StderrOutput } from '../schema/events.js';

const MAX_LINE_CHARS = 2_000;

export class StderrTail {
  private readonly head: string[] = [];
  private readonly tail: string[] = [];
  private total = 0;
  private partial = '';

  /** Defaults are the spec's: first 20, last 50 lines. `onLine` sees every (bounded) line. */
  constructor(
    private readonly headLines = 20,
    private readonly tailLines = 50,
    private readonly onLine?: (line: string) => void,
  ) {}

  /** Real length of the unterminated line, whose kept text is cut short. */
  private partialLength = 0;

  push(chunk: string): void {
    const parts = (this.partial + chunk).split('\n');
    const last = parts.pop() ?? '';
    const firstLength = this.partialLength + (parts.length > 0 ? parts[0]!.length - this.partial.length : 0);
    this.partialLength = parts.length > 0 ? last.length : this.partialLength + chunk.length;
    this.partial = last.slice(0, MAX_LINE_CHARS + 1);
    parts.forEach((line, i) => this.line(line, i === 0 ? firstLength : line.length));
  }

  /** Lines seen so far, including an unterminated last one. */
  get totalLines(): number {
    return this.total + (this.partial ? 1 : 0);
  }

  output(): StderrOutput {
    if (this.partial) {
      this.line(this.partial, this.partialLength);
      this.partial = '';
      this.partialLength = 0;
    }
    const kept = this.head.length + this.tail.length;
    if (this.total <= kept) {
      return { head: [...this.head, ...this.tail].join('\n'), truncated: false, total_lines: this.total };
    }
    return { head: this.head.join('\n'), tail: this.tail.join('\n'), truncated: true, total_lines: this.total };
  }

  private line(raw: string, length: number): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const line = length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}… [${length} chars]` : text;
    this.total++;
    this.onLine?.(line);
    if (this.head.length < this.headLines) {
      this.head.push(line);
      return;
    }
    this.tail.push(line);
    if (this.tail.length > this.tailLines) this.tail.shift();
  }
}
