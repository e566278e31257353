// The suite's OpenAPI check (./openapi-check.ts) on an app the tests build: every answer as it
// went out, whether the test used `inject` or a real socket, handed to `recordExchange` when the
// response ends. makeApp (./helpers.ts) installs it through buildApp's `instrument`.
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { mediaOf, recordExchange, STREAMS } from './openapi-check.js';

/** Bytes of an answer kept for the check; a longer one is checked by status and type only. */
const MAX_BODY = 4 * 1024 * 1024;

/**
 * The check on an app the tests build (makeApp's `instrument`, before any other hook): an
 * onRequest hook taps the raw response, so it sees every answer as it went out, the request
 * gate's refusals, problem+json from the error handler and the streams that write to the socket
 * themselves (SSE, NDJSON) included, whether the test used `inject` or a real socket. The exchange
 * is checked when the response is finished (or closed, for a stream the client left: then only
 * its complete lines count). WebSocket upgrades are the ACP's business, not the document's.
 */
export function installOpenApiCheck(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    if (!req.headers.upgrade) new ResponseTap(req, reply.raw);
    done();
  });
}

type Res = ServerResponse;

/** What one response wrote, kept until it ends and then checked. */
class ResponseTap {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  /** A stream's head is written with writeHead(status, headers), which getHeader does not see. */
  private headType: string | undefined;
  /** inject's response ends by calling its own write: what end passes on is kept once. */
  private ending = false;
  /** Over a real socket a stream's frames bypass the response (src/http/stream-output.ts): they are read off the socket. */
  private fromSocket = false;
  private done = false;

  constructor(
    private readonly req: FastifyRequest,
    private readonly res: Res,
  ) {
    const { write, end, writeHead } = res;
    const tap = this;
    res.writeHead = function (this: Res, ...args: unknown[]) {
      const headers = args.find((a) => typeof a === 'object' && a !== null) as Record<string, unknown> | undefined;
      const type = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
      if (typeof type === 'string') tap.headType = type;
      if (typeof type === 'string' && STREAMS.has(mediaOf(type)) && this.socket instanceof Socket) tap.tapSocket(this.socket);
      return (writeHead as (...a: unknown[]) => Res).apply(this, args);
    } as Res['writeHead'];
    res.write = function (this: Res, chunk: unknown, ...rest: unknown[]) {
      if (!tap.ending && !tap.fromSocket) tap.keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as Res['write'];
    res.end = function (this: Res, chunk?: unknown, ...rest: unknown[]) {
      if (!tap.fromSocket) tap.keep(chunk, rest[0]);
      tap.ending = true;
      return (end as (...a: unknown[]) => Res).call(this, chunk, ...rest);
    } as Res['end'];
    res.once('finish', () => this.record());
    res.once('close', () => this.record());
  }

  private keep(chunk: unknown, encoding?: unknown): void {
    if (chunk == null || typeof chunk === 'function' || this.size > MAX_BODY) return;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    this.size += buffer.length;
    this.chunks.push(buffer);
  }

  /** Keeps what goes on the socket until this response ends (the head, then HTTP chunks). */
  private tapSocket(socket: Socket): void {
    this.fromSocket = true;
    const original = socket.write;
    const tap = this;
    socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      tap.keep(chunk, rest[0]);
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as Socket['write'];
    const restore = () => void (socket.write = original);
    this.res.once('finish', restore);
    this.res.once('close', restore);
  }

  private record(): void {
    if (this.done || !this.res.headersSent) return;
    this.done = true;
    const type = this.headType ?? this.res.getHeader('content-type');
    const raw = Buffer.concat(this.chunks);
    const text = this.fromSocket ? bodyOffTheWire(raw, (this.res as Res & { chunkedEncoding?: boolean }).chunkedEncoding === true) : raw.toString('utf8');
    const { req, res } = this;
    const body = this.size > MAX_BODY ? undefined : completeLines(text, this.ending);
    recordExchange({ method: req.method, url: req.url, requestBody: req.body ?? undefined, status: res.statusCode, contentType: typeof type === 'string' ? type : undefined, body });
  }
}

/** The body of what went on the socket: after the head, and out of its HTTP chunks if chunked. */
function bodyOffTheWire(raw: Buffer, chunked: boolean): string {
  let at = raw.indexOf('\r\n\r\n');
  if (at < 0) return '';
  at += 4;
  if (!chunked) return raw.subarray(at).toString('utf8');
  const parts: Buffer[] = [];
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = eol < 0 ? NaN : parseInt(raw.toString('latin1', at, eol), 16);
    if (!(size > 0) || eol + 2 + size > raw.length) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** A stream the client left mid-line: only its whole lines count. */
function completeLines(text: string, finished: boolean): string {
  return finished ? text : text.slice(0, text.lastIndexOf('\n') + 1);
}
