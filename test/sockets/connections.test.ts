// Bounded connections over real sockets (src/http/connections.ts): a request whose body trickles
// in is answered 408 problem+json and closed within --request-timeout; an SSE stream answering a
// complete request outlives that bound; sockets past --max-connections are answered 503
// problem+json and closed, and a freed slot lets the next one in. inject() has no sockets.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { createMock, makeApp, waitFor } from '../support/helpers.js';
import { abortAllStreams, openSse, portOf } from '../support/sse-client.js';

let a: App | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  abortAllStreams();
  await a?.app.close();
  a = undefined;
});

async function listening(config: Partial<Config>): Promise<{ app: App; port: number }> {
  const app = await makeApp({ config: { sseKeepAliveMs: 200, ...config } });
  a = app;
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: portOf(app.app) };
}

/** A raw socket: what it received, and when the server closed its side. */
interface Raw {
  socket: Socket;
  received: () => string;
  ended: Promise<number>;
}

async function open(port: number): Promise<Raw> {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  let data = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
  socket.on('error', () => {});
  const ended = new Promise<number>((resolve) => {
    socket.once('end', () => resolve(performance.now()));
    socket.once('close', () => resolve(performance.now()));
  });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, received: () => data, ended };
}

/** Status line, headers (lower-cased names) and the JSON body of a raw answer. */
function parse(raw: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe('--request-timeout', () => {
  it('answers a trickled body 408 problem+json and closes the connection within the bound', async () => {
    const { port } = await listening({ requestTimeoutMs: 1_000 });
    const raw = await open(port);
    const started = performance.now();
    const body = JSON.stringify({ agent: 'mock' });
    raw.socket.write(`POST /v1/sessions/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 100}\r\n\r\n`);
    // One byte every 100 ms: the socket is never idle, the body never complete.
    const trickle = setInterval(() => raw.socket.writable && raw.socket.write(' '), 100);
    const ended = await raw.ended;
    clearInterval(trickle);
    const elapsed = ended - started;
    const answer = parse(raw.received());
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toMatchObject({ status: 408, code: 'request_timeout', detail: expect.stringContaining('--request-timeout') });
    // The bound, plus at most one check interval (a quarter of it) and some scheduling.
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2_000);
    console.log(`trickled body: 408 and closed after ${Math.round(elapsed)} ms (bound 1000 ms)`);
  });

  it('headers that never end are answered 408 too', async () => {
    const { port } = await listening({ requestTimeoutMs: 500 });
    const raw = await open(port);
    raw.socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => raw.socket.writable && raw.socket.write('X-Slow: 1\r\n'), 100);
    await raw.ended;
    clearInterval(trickle);
    expect(parse(raw.received())).toMatchObject({ status: 408, body: { code: 'request_timeout' } });
  });

  it('does not cut an SSE stream that outlives the bound', async () => {
    const { app, port } = await listening({ requestTimeoutMs: 500 });
    await createMock(app, 's1');
    const client = await openSse({ port, path: '/v1/sessions/s1/events/sse' });
    expect(client.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // four bounds, eight checks
    expect(client.completed).toBe(false);
    expect(client.req.socket?.destroyed).toBe(false);
    // Still live: a turn's events arrive on it.
    const res = await fetch(`http://127.0.0.1:${port}/v1/sessions/s1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Reply with exactly the single word OK.' }),
    });
    expect(res.status).toBeLessThan(300);
    await waitFor(() => client.frames.some((f) => f.data.includes('"turn.ended"')), 5_000, 'turn.ended on the stream');
  });

  it('is a duration flag', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig(['--request-timeout', '2m'], {}).requestTimeoutMs).toBe(120_000);
    expect(loadConfig([], {}).requestTimeoutMs).toBe(30_000);
    expect(() => loadConfig(['--request-timeout', '10ms'], {})).toThrow(/--request-timeout \(AGENTWIRE_REQUEST_TIMEOUT\): use at least 100ms/);
  });
});

describe('--max-connections', () => {
  it('answers connections past the limit 503 problem+json with Retry-After and closes them; a freed slot lets one in', async () => {
    const { port } = await listening({ maxConnections: 5 });
    const held = await Promise.all(Array.from({ length: 5 }, () => open(port)));
    // Each held connection is served: a keep-alive request answered on it.
    for (const raw of held) raw.socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => held.every((raw) => raw.received().includes('"status":"ok"') || raw.received().startsWith('HTTP/1.1 200')), 5_000, 'five answers');

    const refused = await open(port);
    refused.socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await refused.ended;
    const answer = parse(refused.received());
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/problem+json', 'retry-after': '1', connection: 'close' });
    expect(answer.body).toMatchObject({ status: 503, code: 'too_many_connections', limit: 5, detail: expect.stringContaining('--max-connections') });

    // fetch() sees the same answer, not a network error.
    const viaFetch = await fetch(`http://127.0.0.1:${port}/v1/health`);
    expect(viaFetch.status).toBe(503);
    expect(await viaFetch.json()).toMatchObject({ code: 'too_many_connections' });

    held[0]!.socket.destroy();
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).status === 200, 5_000, 'a freed slot');
  });

  it('counts refusals in /metrics', async () => {
    const { port } = await listening({ maxConnections: 2 });
    const held = await Promise.all([open(port), open(port)]);
    for (let i = 0; i < 3; i++) {
      const refused = await open(port);
      await refused.ended;
    }
    held[0]!.socket.destroy();
    const text = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return res.status === 200 ? res.text() : undefined;
    }, 5_000, '/metrics');
    // 3, or more when a scrape came before the server saw the freed socket close (then refused too).
    expect(Number(/^agentwire_connections_refused_total (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^agentwire_connections 2$/m); // the one held, and the scrape's own
  });
});
