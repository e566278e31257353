// NDJSON framing of a child's stdout: one callback per line, with a bound on line length so an
// agent that prints megabytes without a newline cannot exhaust memory. An over-long line is cut
// and delivered with `truncated: true` (the converter then reports it as agent.unparsed).
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

export interface Line {
  text: string;
  truncated: boolean;
}

export function readLines(stream: Readable, maxChars: number, onLine: (line: Line) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  let overflow = false;
  const flush = (text: string, truncated: boolean) => {
    const line = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (line.length > 0 || truncated) onLine({ text: line, truncated });
  };
  const take = (chunk: string) => {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, nl);
      if (overflow) flush(buffer, true);
      else if (buffer.length + piece.length > maxChars) flush((buffer + piece).slice(0, maxChars), true);
      else flush(buffer + piece, false);
      buffer = '';
      overflow = false;
      start = nl + 1;
    }
    if (overflow) return;
    buffer += chunk.slice(start);
    if (buffer.length > maxChars) {
      buffer = buffer.slice(0, maxChars);
      overflow = true;
    }
  };
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => take(decoder.write(chunk)));
    stream.on('end', () => {
      take(decoder.end());
      if (buffer || overflow) flush(buffer, overflow);
      resolve();
    });
    stream.on('error', () => resolve());
  });
}
