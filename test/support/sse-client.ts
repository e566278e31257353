// A minimal streaming HTTP client for tests that need a real socket (inject() buffers the whole
// body, so it cannot show what arrives when, backpressure, or a client going away mid-stream).
// `openStream` gives the raw chunks; `openSse` parses them as Server-Sent Events, keeping every
// field line, so tests can assert the wire format itself and not only what an EventSource would see.
import { request, type IncomingHttpHeaders, type IncomingMessage, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { UniversalEvent } from '../../src/schema/events.js';

export interface StreamOptions {
  port: number;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** JSON-encoded and sent with content-type application/json. */
  body?: unknown;
}

/** Every stream opened, so a test's afterEach can drop them before app.close() waits on them. */
const open = new Set<HttpStream>();

export function portOf(app: FastifyInstance): number {
  return (app.server.address() as AddressInfo).port;
}

/** Aborts every stream still open; call before app.close(), which otherwise waits for them. */
export function abortAllStreams(): void {
  for (const s of open) s.abort();
}

export class HttpStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Everything received so far, as text. */
  text = '';
  /** True once the server ended the response (not when we aborted it). */
  completed = false;
  /** Resolves when the response is over, whoever ended it. */
  readonly closed: Promise<void>;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly req: ClientRequest,
    readonly res: IncomingMessage,
  ) {
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.text += chunk;
      this.onText(chunk);
      this.wake();
    });
    res.on('end', () => (this.completed = true));
    this.closed = new Promise((resolve) => {
      const done = () => {
        open.delete(this);
        this.wake();
        resolve();
      };
      res.once('close', done);
      res.on('error', done);
    });
  }

  /** Hook for parsers: called with each decoded chunk, in order. */
  protected onText(_chunk: string): void {}

  /** Stops reading: once the client's buffers fill, TCP flow control makes the server wait. */
  pause(): void {
    this.res.pause();
  }

  resume(): void {
    this.res.resume();
  }

  /** Drops the connection as a client going away would. */
  abort(): void {
    this.req.destroy();
    this.res.destroy();
  }

  /** The body as JSON (for problem+json answers). */
  json<T = Record<string, unknown>>(): T {
    return JSON.parse(this.text) as T;
  }

  /** Resolves with check()'s value once it is truthy; rejects on timeout or if the stream closes first. */
  async until<T>(check: () => T, timeoutMs = 5000, what = 'stream condition'): Promise<NonNullable<T>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = check();
      if (value) return value as NonNullable<T>;
      if (!open.has(this)) throw new Error(`stream closed while waiting for ${what}; received: ${this.text.slice(-500)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received: ${this.text.slice(-500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, Math.min(left, 100));
        const waiters = this.waiters;
        function wake() {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        }
        waiters.add(wake);
      });
    }
  }

  /** Waits for the server to end the response; rejects on timeout. */
  async ended(timeoutMs = 5000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`response did not end within ${timeoutMs} ms; received: ${this.text.slice(-500)}`)), timeoutMs);
    });
    try {
      await Promise.race([this.closed, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** Sends the request and resolves once the response head has arrived. */
export function openStream<S extends HttpStream>(
  options: StreamOptions,
  make: (req: ClientRequest, res: IncomingMessage) => S = (req, res) => new HttpStream(req, res) as S,
): Promise<S> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? 'GET',
        headers,
        // A fresh connection per stream: a pooled socket would carry buffered state between tests.
        agent: false,
      },
      (res) => {
        const stream = make(req, res);
        open.add(stream);
        resolve(stream);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** One SSE field line, as sent. */
export interface SseField {
  name: string;
  value: string;
}

/** What the stream carried, in arrival order: comments, and field blocks ended by a blank line. */
export type SseEntry = { kind: 'comment'; text: string } | { kind: 'block'; fields: SseField[] };

/** A block with at least one data line: what an EventSource would dispatch as a message. */
export interface SseFrame {
  id: string | undefined;
  /** The data lines joined with "\n", as EventSource does. */
  data: string;
  fields: SseField[];
}

export class SseClient extends HttpStream {
  readonly entries: SseEntry[] = [];
  readonly frames: SseFrame[] = [];
  private partial = '';
  private fields: SseField[] = [];

  /** Each frame's data parsed as JSON (the universal events). */
  events<T = UniversalEvent>(): T[] {
    return this.frames.map((f) => JSON.parse(f.data) as T);
  }

  /** Sequence named by the newest frame's id (0 before any frame). */
  get lastId(): number {
    return Number(this.frames.at(-1)?.id ?? 0);
  }

  get comments(): string[] {
    return this.entries.flatMap((e) => (e.kind === 'comment' ? [e.text] : []));
  }

  get retries(): number[] {
    return this.entries.flatMap((e) => (e.kind === 'block' ? e.fields.filter((f) => f.name === 'retry').map((f) => Number(f.value)) : []));
  }

  protected override onText(chunk: string): void {
    let text = this.partial + chunk;
    // A trailing "\r" may be half of a "\r\n" split across chunks; keep it until the next chunk.
    const held = text.endsWith('\r') ? '\r' : '';
    if (held) text = text.slice(0, -1);
    const lines = text.split(/\r\n|\r|\n/);
    this.partial = (lines.pop() ?? '') + held;
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    if (line === '') {
      const fields = this.fields;
      this.fields = [];
      if (fields.length === 0) return;
      this.entries.push({ kind: 'block', fields });
      const data = fields.filter((f) => f.name === 'data');
      if (data.length === 0) return;
      const id = fields.filter((f) => f.name === 'id').at(-1)?.value;
      this.frames.push({ id, data: data.map((f) => f.value).join('\n'), fields });
      return;
    }
    if (line.startsWith(':')) {
      this.entries.push({ kind: 'comment', text: line.slice(1).replace(/^ /, '') });
      return;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    this.fields.push({ name, value });
  }
}

export function openSse(options: StreamOptions): Promise<SseClient> {
  return openStream(options, (req, res) => new SseClient(req, res));
}
