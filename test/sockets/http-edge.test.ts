// HTTP at its edges, over real sockets (inject() cannot send these): requests Node's parser
// refuses or hands to another event (no Host, two Host headers, an unknown method, CONNECT), a body
// far over the limit from a client still writing it, and the served OpenAPI document's address.
// Every answer is problem+json; the bad-input corpus holds the cases inject() can send.
import { Agent, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { RouteTable } from '../../src/http/methods.js';
import { clientErrorAnswerer } from '../../src/http/problems.js';
import { makeApp } from '../support/helpers.js';

const BODY_LIMIT = 64 * 1024;
let app: App;
let port = 0;

beforeAll(async () => {
  app = await makeApp({ config: { bodyLimitBytes: BODY_LIMIT } });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app?.app.close();
});

/** Writes `raw` and collects everything until the server closes. */
const exchange = (raw: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let response = '';
    socket.setEncoding('latin1').on('data', (d: string) => (response += d));
    socket.on('close', () => resolve(response));
    socket.on('error', reject);
    // Keep-alive answers leave the socket open: stop once a whole response is in.
    socket.on('data', () => {
      const [head = '', body = ''] = response.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(head);
      if (length && Buffer.byteLength(body, 'latin1') >= Number(length[1])) socket.end();
    });
  });

function problemOf(response: string, status: number, code: string): { head: string; problem: Record<string, unknown> } {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
  expect(head.toLowerCase()).toContain('content-type: application/problem+json');
  const problem = JSON.parse(body) as Record<string, unknown>;
  expect(problem).toMatchObject({ status, code, type: `https://agentwire.dev/problems/${code}` });
  return { head, problem };
}

describe('requests Node would answer itself', () => {
  it.each([
    ['no Host header (HTTP/1.1)', 'GET /v1/sessions HTTP/1.1\r\n\r\n', /no Host header/],
    ['no Host header (HTTP/1.0)', 'GET /v1/sessions HTTP/1.0\r\n\r\n', /no Host header/],
    ['two Host headers', 'GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n', /2 Host headers/],
    ['an empty Host header', 'GET /v1/sessions HTTP/1.1\r\nHost: \r\n\r\n', /not a host name/],
  ])('%s: 400 problem+json', async (_what, raw, detail) => {
    const { problem } = problemOf(await exchange(raw), 400, 'invalid_request');
    expect(problem.detail).toMatch(detail);
  });

  it('an unknown method on a known path: 405 with Allow', async () => {
    const { head, problem } = problemOf(await exchange('BREW /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 405, 'method_not_allowed');
    expect(head).toMatch(/\r\nallow: GET, HEAD\r\n/i);
    expect(problem.allow).toEqual(['GET', 'HEAD']);
  });

  it('an unknown method on an unknown path: 404', async () => {
    problemOf(await exchange('BREW /coffee HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 404, 'not_found');
  });

  it('CONNECT to a host:port (a proxy tunnel): 404, never a silent close', async () => {
    problemOf(await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 404, 'not_found');
  });

  it('CONNECT to a known path: 405 with Allow', async () => {
    const { head } = problemOf(await exchange('CONNECT /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 405, 'method_not_allowed');
    expect(head).toMatch(/\r\nallow: GET, HEAD, POST\r\n/i);
  });

  it('PROPFIND (known to the parser, not to the router) on a known path: 405', async () => {
    problemOf(await exchange('PROPFIND /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 405, 'method_not_allowed');
  });
});

describe('the clientError answer, for errors a test cannot provoke quickly', () => {
  const socket = () => {
    const s = { writable: true, written: '', destroyed: false, end: (text: string) => void (s.written = text), destroy: () => void (s.destroyed = true) };
    return s;
  };
  const answer = clientErrorAnswerer(new RouteTable());

  it('headers that did not arrive in time (headersTimeout): 408 problem+json', () => {
    const s = socket();
    answer(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), s as never);
    expect(problemOf(s.written, 408, 'request_timeout').head).toMatch(/\r\nConnection: close$/);
  });

  it('a reset connection: closed, nothing written', () => {
    const s = socket();
    answer(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), s as never);
    expect(s).toMatchObject({ written: '', destroyed: true });
  });
});

describe('a body far over the limit, from a client still writing it', () => {
  // agent: false sends Connection: close, the case where Node closes the socket soonest.
  const upload = (options: { chunked?: boolean; agent?: Agent; host?: string }) =>
    new Promise<{ status: number; body: Record<string, unknown>; error?: string }>((resolve) => {
      const size = 20 * 1024 * 1024;
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/sessions',
        agent: options.agent ?? false,
        headers: { 'content-type': 'application/json', host: options.host ?? `127.0.0.1:${port}`, ...(options.chunked ? {} : { 'content-length': String(size) }) },
      });
      let answer: { status: number; body: Record<string, unknown> } | undefined;
      let error: string | undefined;
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => (answer = { status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
      req.on('close', () => resolve({ ...(answer ?? { status: 0, body: {} }), ...(error ? { error } : {}) }));
      // Written in 1 MB pieces without waiting: the way a client streams a file it already has.
      const piece = Buffer.alloc(1024 * 1024, 'a');
      for (let sent = 0; sent < size; sent += piece.length) req.write(piece);
      req.end();
    });

  it('reads the 413 problem+json, with no EPIPE or reset (Content-Length and chunked)', async () => {
    for (const chunked of [false, true]) {
      const result = await upload({ chunked });
      expect(result.error, `chunked=${chunked}`).toBeUndefined();
      expect(result.status).toBe(413);
      expect(result.body).toMatchObject({ code: 'body_too_large', status: 413 });
    }
    expect(app.sessions.list()).toEqual([]);
  });

  it('so does a refusal that comes before the body is even looked at (421)', async () => {
    const result = await upload({ host: 'attacker.example:2468' });
    expect(result.error).toBeUndefined();
    expect(result.body).toMatchObject({ code: 'host_not_allowed' });
  });

  it('and a keep-alive connection stays usable afterwards', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await upload({ agent })).status).toBe(413);
      const health = await new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/v1/health', agent }, (res) => {
          res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject).end();
      });
      expect(health).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });
});

describe('a body still being read away at shutdown', () => {
  it('does not hold app.close()', async () => {
    const own = await makeApp({ config: { bodyLimitBytes: BODY_LIMIT } });
    await own.app.listen({ host: '127.0.0.1', port: 0 });
    const ownPort = (own.app.server.address() as AddressInfo).port;
    // Declares 20 MB, sends 1 MB, then stalls: the 413 comes at once, the drain never ends.
    const req = request({ host: '127.0.0.1', port: ownPort, method: 'POST', path: '/v1/sessions', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(20 * 1024 * 1024) } });
    req.on('error', () => {});
    const status = new Promise<number>((resolve) => req.on('response', (res) => resolve(res.resume().statusCode ?? 0)));
    req.write(Buffer.alloc(1024 * 1024, 'a'));
    expect(await status).toBe(413);
    const started = Date.now();
    await own.app.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    req.destroy();
  });
});

describe('GET /openapi.json', () => {
  it('names the address the daemon listens on', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/openapi.json`);
    expect(res.status).toBe(200);
    const document = (await res.json()) as { servers: { url: string }[]; paths: Record<string, unknown> };
    expect(document.servers).toEqual([{ url: `http://127.0.0.1:${port}`, description: 'This daemon' }]);
    expect(Object.keys(document.paths)).toContain('/v1/sessions');
  });
});
