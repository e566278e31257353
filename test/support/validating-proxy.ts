// A validating HTTP proxy for tests (issue 41: "a validating proxy in front of the daemon reports no
// violation for any request the docs show"): it listens on loopback only, forwards every request
// to a daemon and every answer back, and checks each exchange against the committed openapi.json
// with the suite's check (./openapi-check.ts: the operation, status, content type, JSON body,
// each SSE or NDJSON frame, and the body and query of a request the daemon accepted).
//
// Transparent: bodies pass byte for byte, in both directions, as they arrive (an SSE or NDJSON
// frame reaches the client when the daemon writes it, not when the stream ends); headers pass as
// sent, but the hop-by-hop ones (Connection, Keep-Alive, Transfer-Encoding, Expect), which each
// hop frames for itself. A client that goes away mid-answer cuts the daemon's connection too, so a
// `?abort_on_disconnect=true` stream stops its turn through the proxy as without it. WebSocket
// upgrades (`GET /v1/acp`, under `x-websockets` in the document) are piped through unchecked: the
// ACP frames are JSON-RPC, which the document does not describe.
//
// Violations are kept with the label the test set when the request arrived (the doc page and
// command), not thrown: the answer the client sees is the daemon's, and the test fails with them.
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { checkExchange, type Exchange } from './openapi-check.js';

/** Bytes of a body kept for the check; a longer answer is checked by status and type only. */
const MAX_BODY = 4 * 1024 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'expect', 'proxy-connection', 'upgrade']);

export interface ProxyViolation {
  /** What the test was running when the request arrived (`proxy.label`). */
  label: string;
  /** `METHOD url → status`. */
  exchange: string;
  violations: string[];
}

export interface ValidatingProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** What the requests from now on are recorded under (the page and command a test runs). */
  label: string;
  /** Exchanges checked so far, and WebSocket upgrades passed through unchecked. */
  readonly checked: number;
  readonly upgrades: number;
  /** Waits (at most `ms`) until no exchange is in flight; the violations found since the last call. */
  settle(ms?: number): Promise<ProxyViolation[]>;
  close(): Promise<void>;
}

/** A validating proxy on 127.0.0.1 (a free port) in front of the daemon on 127.0.0.1:`upstreamPort`. */
export async function startValidatingProxy(upstreamPort: number): Promise<ValidatingProxy> {
  const proxy = new ProxyServer(upstreamPort);
  await proxy.listen();
  return proxy;
}

/** What a proxy found, for a test's failure message: each exchange under the label (page and command) that made it. */
export function violationReport(found: ProxyViolation[]): string {
  const each = found.map((f) => `${f.label}\n  ${f.exchange}\n  - ${f.violations.join('\n  - ')}`);
  return `${found.length} exchange(s) break openapi.json (fix the docs, the daemon or the document):\n${each.join('\n')}`;
}

/** The headers a hop forwards, as the flat [name, value, …] list `rawHeaders` is. */
function endToEnd(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

/**
 * The request's headers a hop forwards, by name as sent (a repeated one as a list). An object,
 * not the flat list: given a list, node:http writes the head at once, before the request can be
 * told to frame no body (see `forward`).
 */
function requestHeaders(raw: string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const names = new Map<string, string>();
  const flat = endToEnd(raw);
  for (let i = 0; i < flat.length; i += 2) {
    const name = names.get(flat[i]!.toLowerCase()) ?? flat[i]!;
    names.set(name.toLowerCase(), name);
    const had = out[name];
    out[name] = had === undefined ? flat[i + 1]! : [...(Array.isArray(had) ? had : [had]), flat[i + 1]!];
  }
  return out;
}

/** Bytes kept up to MAX_BODY; `over` once more arrived (the body is then not checked). */
class Kept {
  readonly chunks: Buffer[] = [];
  size = 0;
  keep = (chunk: Buffer): void => {
    this.size += chunk.length;
    if (this.size <= MAX_BODY) this.chunks.push(chunk);
  };
  get over(): boolean {
    return this.size > MAX_BODY;
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

class ProxyServer implements ValidatingProxy {
  port = 0;
  label = '';
  checked = 0;
  upgrades = 0;
  private inFlight = 0;
  private readonly found: ProxyViolation[] = [];
  private readonly agent = new Agent({ keepAlive: true });
  private readonly tunnels = new Set<Socket>();
  private readonly server: Server;

  constructor(private readonly upstreamPort: number) {
    this.server = createServer((req, res) => this.forward(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.tunnel(req, socket, head));
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  async settle(ms = 2000): Promise<ProxyViolation[]> {
    const deadline = Date.now() + ms;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.found.splice(0);
  }

  close(): Promise<void> {
    for (const socket of this.tunnels) socket.destroy();
    this.server.closeAllConnections();
    this.agent.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** One request: forwarded as it arrives, its answer back as it arrives, checked when it ends. */
  private forward(req: IncomingMessage, res: ServerResponse): void {
    const label = this.label;
    const sent = new Kept();
    const got = new Kept();
    let answer: IncomingMessage | undefined;
    let recorded = false;
    this.inFlight++;
    const record = (whole: boolean) => {
      if (recorded) return;
      recorded = true;
      this.inFlight--;
      if (answer) this.check(label, req, sent, answer, got, whole);
    };
    const upstream = request({ host: '127.0.0.1', port: this.upstreamPort, method: req.method, path: req.url, headers: requestHeaders(req.rawHeaders), agent: this.agent });
    // A request sent without a body (no Content-Length, no Transfer-Encoding: `curl -X POST` with no
    // -d) goes on without one: node:http would frame a POST's as chunked, a body the daemon then reads.
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) upstream.useChunkedEncodingByDefault = false;
    req.on('data', sent.keep);
    req.pipe(upstream);
    upstream.on('response', (r) => {
      answer = r;
      res.writeHead(r.statusCode!, r.statusMessage, endToEnd(r.rawHeaders));
      res.flushHeaders(); // a stream's head reaches the client before its first frame, as without the proxy
      r.on('data', got.keep);
      r.on('end', () => record(true));
      r.on('error', () => res.destroy());
      r.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!answer) this.found.push({ label, exchange: `${req.method} ${req.url}`, violations: [`the proxy got no answer from the daemon: ${err.message}`] });
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
      record(false);
    });
    // The client went away before the whole answer: the daemon's connection goes too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      record(false);
    });
  }

  private check(label: string, req: IncomingMessage, sent: Kept, answer: IncomingMessage, got: Kept, whole: boolean): void {
    const type = answer.headers['content-type'];
    const exchange: Exchange = {
      method: req.method!,
      url: req.url!,
      requestBody: requestBody(sent),
      status: answer.statusCode!,
      contentType: type,
      body: got.over ? undefined : completeLines(decoded(got.bytes(), answer.headers['content-encoding']), whole),
    };
    this.checked++;
    const violations = checkExchange(exchange);
    if (violations.length > 0) this.found.push({ label, exchange: `${req.method} ${req.url} → ${answer.statusCode}`, violations });
  }

  /** A WebSocket upgrade, piped both ways unchecked (see the top of this file). */
  private tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    this.upgrades++;
    const daemon = connect(this.upstreamPort, '127.0.0.1');
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    daemon.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) daemon.write(head);
    for (const [from, to] of [
      [client, daemon],
      [daemon, client],
    ] as const) {
      this.tunnels.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', (hadError) => (this.tunnels.delete(from), hadError ? to.destroy() : to.end()));
    }
  }
}

/** The request's body as the check reads it: JSON parsed, undefined when none was sent. */
function requestBody(sent: Kept): unknown {
  if (sent.size === 0 || sent.over) return undefined;
  const text = sent.bytes().toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // no JSON: invalid against any schema, if the daemon accepted it
  }
}

/** The body as the check reads it: decompressed when the daemon compressed it (the inspector's files). */
function decoded(body: Buffer, encoding: string | undefined): string {
  try {
    if (encoding === 'gzip') return gunzipSync(body).toString('utf8');
    if (encoding === 'deflate') return inflateSync(body).toString('utf8');
    if (encoding === 'br') return brotliDecompressSync(body).toString('utf8');
  } catch {
    return '';
  }
  return body.toString('utf8');
}

/** A stream the client left mid-line: only its whole lines count. */
function completeLines(text: string, whole: boolean): string {
  return whole ? text : text.slice(0, text.lastIndexOf('\n') + 1);
}
