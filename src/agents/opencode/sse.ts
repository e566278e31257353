// The `GET /event?directory=` subscription of one directory on a server: the events of OpenCode's
// instance there, no other's. Frames are `data: <json>` lines and a blank line (no `event:` or `id:` lines on 1.18.33). Bounded: a frame longer than `maxFrameChars`
// is cut and handed on as text (the converter reports it as agent.unparsed); the stream's end is
// reported once, whatever ended it.
import { atDirectory, OpencodeHttpError } from './http.js';
import { parseBounded } from '../../util/json-limits.js';

export interface EventStream {
  close(): void;
}

export interface StreamHandlers {
  /** One frame's data: parsed JSON, or the text when it is not JSON or was cut. */
  event(data: unknown): void;
  /** The stream ended (server gone, or closed by us). */
  end(reason: string): void;
}

export async function subscribe(base: string, directory: string, maxFrameChars: number, handlers: StreamHandlers, connectTimeoutMs: number): Promise<EventStream> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('timed out')), connectTimeoutMs);
  let response: Response;
  try {
    response = await fetch(`${base}${atDirectory('/event', directory)}`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  } catch (err) {
    throw new OpencodeHttpError(`GET /event: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  const type = response.headers.get('content-type') ?? '';
  if (response.status !== 200 || !type.includes('text/event-stream') || !response.body) {
    abort.abort();
    throw new OpencodeHttpError(`GET /event answered ${response.status} ${type}, not an event stream`);
  }
  void pump(response.body, abort.signal, new FrameReader(maxFrameChars, (data) => handlers.event(data)), handlers);
  return { close: () => abort.abort() };
}

/** Reads the stream to its end, line by line into the frame reader, then reports the end once. */
async function pump(body: ReadableStream<Uint8Array>, signal: AbortSignal, frames: FrameReader, handlers: StreamHandlers): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let reason = 'the server closed the event stream';
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        frames.line(buffer.slice(0, nl).replace(/\r$/, ''));
        buffer = buffer.slice(nl + 1);
      }
      // A line without its newline yet is kept, but never more than a frame may hold.
      if (buffer.length > frames.maxFrameChars + 16) {
        frames.line(buffer);
        buffer = '';
        frames.cut = true;
      }
    }
  } catch (err) {
    reason = signal.aborted ? 'closed' : `the event stream failed: ${(err as Error).message}`;
  }
  handlers.end(reason);
}

/** Assembles `data:` lines into frames, a blank line ending each; a frame past the bound is cut. */
class FrameReader {
  private data: string[] = [];
  private size = 0;
  /** The frame being read was cut: the rest of its data is dropped and it is handed on as text. */
  cut = false;

  constructor(
    readonly maxFrameChars: number,
    private readonly event: (data: unknown) => void,
  ) {}

  line(l: string): void {
    if (l === '') return this.flush();
    if (!l.startsWith('data:')) return; // comments, event:, id:, retry:
    const value = l.slice(l.startsWith('data: ') ? 6 : 5);
    if (this.cut) return;
    if (this.size + value.length > this.maxFrameChars) {
      this.data.push(value.slice(0, Math.max(0, this.maxFrameChars - this.size)));
      this.cut = true;
      return;
    }
    this.size += value.length;
    this.data.push(value);
  }

  private flush(): void {
    if (this.data.length > 0) {
      const text = this.data.join('\n');
      this.event(this.cut ? text : parse(text));
    }
    this.data = [];
    this.size = 0;
    this.cut = false;
  }
}

/** JSON behind the store's depth bound (src/util/json-limits.ts), else the text (→ agent.unparsed). */
function parse(text: string): unknown {
  const parsed = parseBounded(text);
  return 'value' in parsed ? parsed.value : text;
}
