// The validating proxy the docs' examples go through (test/support/validating-proxy.ts), in front
// of a stand-in daemon (a bare node:http server) whose answers each test controls: it reports an
// answer the committed openapi.json does not allow, naming the operation and the label it was
// made under, and passes one it does; and it is transparent: bytes and headers arrive as sent, an
// SSE frame reaches the client while the stream is still open (the stand-in writes the second
// frame only once the client has the first), and a client that goes away cuts the daemon's
// connection. WebSocket upgrades are piped through unchecked.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startValidatingProxy, type ValidatingProxy } from '../../support/validating-proxy.js';

const event = (sequence: number) => ({
  event_id: `evt_${sequence}`, sequence, time: '2026-01-01T00:00:00.000Z', session_id: 's1', native_session_id: null,
  source: 'daemon', synthetic: true, raw: null, type: 'turn.started', data: { turn_id: 't1' },
});

let upstream: Server | undefined;
let proxy: ValidatingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  upstream?.closeAllConnections();
  await new Promise((r) => (upstream ? upstream.close(r) : r(undefined)));
  proxy = upstream = undefined;
});

/** A stand-in daemon answering with `handle`, and the proxy in front of it. */
async function behindProxy(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<ValidatingProxy> {
  upstream = createServer(handle);
  await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
  proxy = await startValidatingProxy((upstream.address() as AddressInfo).port);
  return proxy;
}

/** A request through the proxy; resolves with the answer as it starts (its body still to come). */
function send(port: number, method: string, path: string, body?: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: body ? { 'content-type': 'application/json' } : {} }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  for await (const chunk of res) out += String(chunk);
  return out;
}

describe('the validating proxy', () => {
  it('reports an answer the document does not allow, naming the operation and the label, and passes one it does', async () => {
    let listed = 0;
    const p = await behindProxy((req, res) => {
      if (req.url === '/v1/health') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"fine"}');
      if (req.url === '/v1/sessions' && listed++ === 0) return void res.writeHead(418, { 'content-type': 'application/json' }).end('{"sessions":[]}');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"sessions":[]}');
    });
    p.label = 'docs/x.md:1: curl health';
    const health = await send(p.port, 'GET', '/v1/health');
    expect([health.statusCode, await text(health)]).toEqual([200, '{"status":"fine"}']); // the daemon's answer, not blocked
    p.label = 'docs/x.md:2: curl sessions';
    await text(await send(p.port, 'GET', '/v1/sessions'));
    const found = await p.settle();
    expect(found).toEqual([
      { label: 'docs/x.md:1: curl health', exchange: 'GET /v1/health → 200', violations: [expect.stringMatching(/^getHealth \(GET \/v1\/health\): the 200 application\/json body is not valid: .*\/status must be equal to one of the allowed values/)] },
      { label: 'docs/x.md:2: curl sessions', exchange: 'GET /v1/sessions → 418', violations: [expect.stringMatching(/^listSessions \(GET \/v1\/sessions\): status 418 is not documented/)] },
    ]);
    // A request the daemon accepted and the document refuses: the body is checked too.
    await text(await send(p.port, 'POST', '/v1/sessions/s1?bogus=1', '{"agent": "mock"}'));
    expect((await p.settle()).flatMap((v) => v.violations)).toContainEqual("createSessionWithId (POST /v1/sessions/{id}): the daemon accepted the query parameter 'bogus', which the document does not declare");
    await text(await send(p.port, 'GET', '/v1/sessions')); // the same operation, answered as documented
    expect(await p.settle()).toEqual([]);
    expect(p.checked).toBe(4);
  });

  it('passes an SSE stream live, frame by frame and byte for byte, with its headers, and checks its frames', async () => {
    let release!: () => void;
    const clientHasFirst = new Promise<void>((r) => (release = r));
    let secondWritten = false;
    const frames = [`id: 1\ndata: ${JSON.stringify(event(1))}\n\n`, `id: 2\ndata: ${JSON.stringify(event(2))}\n\n`];
    const p = await behindProxy((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-kept': 'As-Sent' });
      res.write(frames[0]);
      // The second frame only once the client has the first: a proxy that held the stream until its end would never deliver it.
      void clientHasFirst.then(() => ((secondWritten = true), res.end(frames[1])));
    });
    const res = await send(p.port, 'GET', '/v1/sessions/s1/events/sse');
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['x-kept']).toBe('As-Sent');
    let received = '';
    for await (const chunk of res) {
      received += String(chunk);
      if (received === frames[0]) {
        expect(secondWritten).toBe(false); // arrived while the daemon still held the stream open
        release();
      }
    }
    expect(received).toBe(frames.join(''));
    expect(await p.settle()).toEqual([]);
    expect(p.checked).toBe(1);
  });

  it('forwards the request body byte for byte, and a client that goes away cuts the daemon connection of its stream', async () => {
    let bodyAtDaemon = '';
    let resolveGone!: () => void;
    const daemonSawClose = new Promise<void>((r) => (resolveGone = r));
    const p = await behindProxy(async (req, res) => {
      for await (const chunk of req) bodyAtDaemon += String(chunk);
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify(event(1))}\n{"sequence":`); // a whole line, then half of one
      res.on('close', () => resolveGone());
    });
    const body = '{ "message" :\n "hi"  }';
    const res = await send(p.port, 'POST', '/v1/sessions/s1/messages/stream', body);
    await new Promise<void>((r) => res.once('data', () => r()));
    res.destroy();
    await daemonSawClose; // the test times out if the proxy kept the daemon's side open
    expect(bodyAtDaemon).toBe(body);
    expect(await p.settle()).toEqual([]); // the whole line checked and valid, the half one left out
    expect(p.checked).toBe(1);
  });

  it('sends a request that came without a body (curl -X POST with no -d) on without one', async () => {
    let framing: unknown;
    const p = await behindProxy((req, res) => {
      framing = [req.headers['content-length'], req.headers['transfer-encoding'], req.headers['x-twice']];
      res.writeHead(202).end();
    });
    const socket = connect(p.port, '127.0.0.1');
    socket.write('POST /v1/sessions/s1/interrupt HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Twice: a\r\nx-twice: b\r\nConnection: close\r\n\r\n');
    let got = '';
    await new Promise<void>((r) => socket.on('data', (d) => (got += String(d))).on('end', r));
    expect(got).toMatch(/^HTTP\/1\.1 202 /);
    expect(framing).toEqual([undefined, undefined, 'a, b']); // and a repeated header arrives as both
    expect(await p.settle()).toEqual([]);
  });

  it('pipes a WebSocket upgrade through unchecked', async () => {
    const p = await behindProxy((_req, res) => res.writeHead(404).end());
    upstream!.on('upgrade', (req, socket) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Path: ${req.url}\r\n\r\n`);
      socket.on('data', (d) => socket.write(`echo ${String(d)}`));
      socket.on('end', () => socket.end()); // the proxy's side closed: so does this one
    });
    const socket = connect(p.port, '127.0.0.1');
    socket.write('GET /v1/acp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    let got = '';
    await new Promise<void>((r) => socket.on('data', (d) => ((got += String(d)), got.includes('\r\n\r\n') && r())));
    expect(got).toMatch(/^HTTP\/1\.1 101 .*X-Path: \/v1\/acp\r\n\r\n$/s);
    socket.write('frame');
    await new Promise<void>((r) => socket.on('data', () => got.endsWith('echo frame') && r()));
    socket.destroy();
    expect([p.upgrades, p.checked]).toEqual([1, 0]);
    expect(await p.settle()).toEqual([]);
  });
});
