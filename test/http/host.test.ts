// The Host allow-list against DNS rebinding (src/http/host.ts): which names each configuration
// answers to, that a refusal comes before CORS, auth and routing, and, over a real socket, that
// a page on attacker.example re-pointed at 127.0.0.1 cannot create a session.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { hostAllowed, hostName } from '../../src/http/host.js';
import { makeApp } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

let app: App | undefined;

afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

const get = (a: App, host: string, url = '/v1/sessions', headers: Record<string, string> = {}) =>
  a.app.inject({ method: 'GET', url, headers: { host, ...headers } });

describe('Host names', () => {
  it.each([
    ['localhost:2468', 'localhost'],
    ['LOCALHOST', 'localhost'],
    ['localhost.', 'localhost'],
    ['[::1]:2468', '::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
    ['127.0.0.1:80', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['Attacker.Example:2468', 'attacker.example'],
  ])('%s is %s', (header, name) => expect(hostName(header)).toBe(name));

  it.each(['attacker.example@127.0.0.1', '127.0.0.1/x', 'a b', '', ':2468', '[::1', 'http://localhost', 'localhost:port'])('%j is not a host', (header) => {
    expect(hostName(header)).toBeUndefined();
  });

  it('treats loopback names, the listen address and --allowed-host patterns as allowed', () => {
    const policy = { listen: '10.0.0.5', allowed: ['agentwire.internal', '*.example.com'] };
    for (const name of ['localhost', 'app.localhost', '127.0.0.1', '127.255.0.9', '::1', '10.0.0.5', 'agentwire.internal', 'a.example.com', 'a.b.example.com']) {
      expect(hostAllowed(name, policy), name).toBe(true);
    }
    for (const name of ['attacker.example', 'example.com', 'evilexample.com', 'localhost.attacker.example', '10.0.0.6', '0.0.0.0', '::2', 'agentwire.internal.attacker.example']) {
      expect(hostAllowed(name, policy), name).toBe(false);
    }
  });

  it('accepts any IP literal, and only those, on a wildcard listen address', () => {
    for (const listen of ['0.0.0.0', '::']) {
      const policy = { listen, allowed: [] };
      expect(hostAllowed('192.168.1.20', policy)).toBe(true);
      expect(hostAllowed('fd00::1', policy)).toBe(true);
      expect(hostAllowed('myhost.lan', policy)).toBe(false);
    }
  });
});

describe('the default daemon (127.0.0.1, no --allowed-host)', () => {
  it('answers loopback names at any port', async () => {
    app = await makeApp();
    for (const host of ['localhost', 'localhost:2468', '127.0.0.1:2468', '127.0.0.2', '[::1]:9', 'agentwire.localhost:2468']) {
      expect((await get(app, host)).statusCode, host).toBe(200);
    }
  });

  it('refuses any other name with 421 host_not_allowed, and says how to allow it', async () => {
    app = await makeApp();
    for (const host of ['attacker.example:2468', 'attacker.example', '0.0.0.0:2468', '192.168.1.20:2468', 'localhost.attacker.example']) {
      const problem = expectProblem(await get(app, host), 421, 'host_not_allowed');
      expect(problem.detail).toMatch(/--allowed-host/);
    }
  });

  it('refuses before auth, CORS and routing: no 401, no CORS headers, no 404', async () => {
    app = await makeApp({ config: { token: 'test-token-0123456789', corsOrigins: ['http://attacker.example:2468'] } });
    const preflight = await app.app.inject({
      method: 'OPTIONS',
      url: '/v1/sessions',
      headers: { host: 'attacker.example:2468', origin: 'http://attacker.example:2468', 'access-control-request-method': 'POST' },
    });
    expectProblem(preflight, 421, 'host_not_allowed');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expectProblem(await get(app, 'attacker.example', '/v1/sessions'), 421, 'host_not_allowed');
    expectProblem(await get(app, 'attacker.example', '/no/such/route'), 421, 'host_not_allowed');
    expectProblem(await get(app, 'localhost', '/v1/sessions'), 401, 'unauthorized');
  });
});

describe('configured hosts', () => {
  it('--host: its own name is allowed', async () => {
    app = await makeApp({ config: { host: 'agentwire.lan', noToken: true } });
    expect((await get(app, 'agentwire.lan:2468')).statusCode).toBe(200);
    expectProblem(await get(app, 'other.lan'), 421, 'host_not_allowed');
  });

  it('--host 0.0.0.0: IP literals are allowed, names need --allowed-host', async () => {
    app = await makeApp({ config: { host: '0.0.0.0', noToken: true, allowedHosts: ['agentwire.internal'] } });
    expect((await get(app, '172.17.0.2:2468')).statusCode).toBe(200);
    expect((await get(app, 'agentwire.internal:2468')).statusCode).toBe(200);
    expectProblem(await get(app, 'attacker.example:2468'), 421, 'host_not_allowed');
  });

  it('--allowed-host *.example.com allows subdomains, not the name itself', async () => {
    app = await makeApp({ config: { allowedHosts: ['*.example.com'] } });
    expect((await get(app, 'agents.example.com')).statusCode).toBe(200);
    expectProblem(await get(app, 'example.com'), 421, 'host_not_allowed');
  });

  it('--allowed-host * turns the check off, but one Host header is still required', async () => {
    app = await makeApp({ config: { allowedHosts: ['*'] } });
    expect((await get(app, 'attacker.example:2468')).statusCode).toBe(200);
    expectProblem(await get(app, 'a b'), 400, 'invalid_request');
  });
});

describe('over a real socket', () => {
  const send = (port: number, host: string, method: string, path: string, body?: string) =>
    new Promise<{ status: number; type: string; json: Record<string, unknown> }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers: { host, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', json: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('a rebound name (attacker.example:2468 pointing at 127.0.0.1) cannot create a session', async () => {
    app = await makeApp();
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.app.server.address() as AddressInfo;
    const forged = await send(port, 'attacker.example:2468', 'POST', '/v1/sessions', '{"agent":"mock"}');
    expect(forged.status).toBe(421);
    expect(forged.type).toMatch(/^application\/problem\+json/);
    expect(forged.json).toMatchObject({ code: 'host_not_allowed', host: 'attacker.example' });
    expect(app.sessions.list()).toEqual([]);
    // The same request under the daemon's own address goes through.
    const real = await send(port, `127.0.0.1:${port}`, 'POST', '/v1/sessions', '{"agent":"mock"}');
    expect(real.status).toBe(201);
    expect(app.sessions.list()).toHaveLength(1);
  });
});
