// The Origin check (src/http/origin.ts) through inject, with the real mock agent behind: a request
// a page on another origin sent is 403 origin_not_allowed whatever its method, body or token, and
// leaves the session as it was; the daemon's own origin, --cors-origin and '*' are let through;
// requests without Origin or Sec-Fetch-Site (curl, backends, the Node client) are untouched. The
// same attack from real Chromium is in origin-browser.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { isOwnOrigin } from '../../src/http/origin.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, runTurn, waitFor } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

const HOST = '127.0.0.1:2468';
const OWN = `http://${HOST}`;
const FOREIGN = 'http://127.0.0.2:8000';
const TOKEN = 'origin-test-token-0123456789abcdef';
let app: App | undefined;

afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

type Method = 'GET' | 'POST' | 'DELETE' | 'OPTIONS';
const send = (a: App, method: Method, url: string, headers: Record<string, string> = {}, payload?: string) =>
  a.app.inject({ method, url, headers: { host: HOST, ...headers }, ...(payload === undefined ? {} : { payload }) });

const status = async (a: App, id = 's1') => (await send(a, 'GET', `/v1/sessions/${id}`)).json<{ status: string }>().status;

/** A mock session with a pending permission: the state every refused request must leave alone. */
async function waitingSession(config: Record<string, unknown> = {}): Promise<App> {
  app = await makeApp({ config: { noToken: true, ...config } });
  await createMock(app, 's1');
  const events = await runTurn(app, 's1', 'permission');
  expect(events.some((e) => e.type === 'permission.requested')).toBe(true);
  expect(await status(app)).toBe('waiting');
  return app;
}

async function permissionId(a: App): Promise<string> {
  const events = await getEvents(a, 's1');
  expectNoUnparsed(events);
  const asked = events.find((e) => e.type === 'permission.requested');
  return (asked?.data as { permission_id: string }).permission_id;
}

describe('isOwnOrigin', () => {
  it('is http:// or https:// followed by exactly the Host header', () => {
    expect(isOwnOrigin('http://127.0.0.1:2468', '127.0.0.1:2468')).toBe(true);
    expect(isOwnOrigin('https://agents.example.com', 'agents.example.com')).toBe(true);
    expect(isOwnOrigin('http://localhost', 'localhost')).toBe(true);
    for (const [origin, host] of [
      ['http://127.0.0.1:2469', '127.0.0.1:2468'],
      ['http://localhost:2468', '127.0.0.1:2468'],
      ['http://x127.0.0.1:2468', '127.0.0.1:2468'],
      ['ftp://127.0.0.1:2468', '127.0.0.1:2468'],
      ['null', 'null'],
      ['http://', ''],
      ['http://127.0.0.1:2468', undefined],
    ] as const) {
      expect(isOwnOrigin(origin, host), `${origin} on ${host}`).toBe(false);
    }
  });
});

describe('a page on another origin', () => {
  it('is refused on every method with 403 origin_not_allowed, naming the origin and the fix, and nothing happens', async () => {
    const a = await waitingSession();
    const id = await permissionId(a);
    const o = { origin: FOREIGN };
    const json = { ...o, 'content-type': 'application/json' };
    const attempts: [Method, string, Record<string, string>, string?][] = [
      ['POST', '/v1/sessions/s1/terminate', o],
      ['POST', '/v1/sessions/s1/interrupt', o],
      ['POST', `/v1/sessions/s1/permissions/${id}/reply`, json, '{"reply":"once"}'],
      ['POST', '/v1/sessions/s1/messages', { ...o, 'content-type': 'text/plain' }, 'hi'],
      ['POST', '/v1/sessions', json, '{"agent":"mock"}'],
      ['POST', '/v1/agents/gemini/install', o],
      ['DELETE', '/v1/sessions/s1', o],
      ['GET', '/v1/sessions/s1', o],
      ['GET', '/v1/health', o],
      ['GET', '/no/such/route', o],
      ['OPTIONS', '/v1/sessions/s1/terminate', { ...o, 'access-control-request-method': 'POST' }],
    ];
    for (const [method, url, headers, payload] of attempts) {
      const res = await send(a, method, url, headers, payload);
      const problem = expectProblem(res, 403, 'origin_not_allowed');
      expect(problem.origin).toBe(FOREIGN);
      expect(problem.detail).toContain(`--cors-origin ${FOREIGN}`);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      // Refused before anything else ran: no request id was even set.
      expect(res.headers['x-request-id'], `${method} ${url}`).toBeUndefined();
    }
    expect(await status(a)).toBe('waiting');
    expect(a.sessions.list().map((s) => s.sessionId)).toEqual(['s1']);
    const events = await getEvents(a, 's1');
    expectNoUnparsed(events);
    expect(events.some((e) => e.type === 'permission.resolved' || e.type === 'turn.ended' || e.type === 'session.ended')).toBe(false);
  });

  it('is refused with a valid token, in the header or as ?token= on the streaming routes', async () => {
    app = await makeApp({ config: { token: TOKEN } });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const made = await send(app, 'POST', '/v1/sessions/s1', { ...auth, 'content-type': 'application/json' }, '{"agent":"mock"}');
    expect(made.statusCode, made.body).toBe(200);
    const o = { origin: FOREIGN };
    expectProblem(await send(app, 'POST', '/v1/sessions/s1/terminate', { ...o, ...auth }), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'GET', `/v1/sessions/s1/events/sse?token=${TOKEN}`, o), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'POST', `/v1/sessions/s1/messages/stream?token=${TOKEN}`, { ...o, 'content-type': 'application/json' }, '{"message":"hi"}'), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'POST', '/v1/sessions/s1/messages/stream', { ...o, 'content-type': 'application/json' }, '{"message":"hi"}'), 403, 'origin_not_allowed');
    // Without the Origin the same token works: the refusal was the origin's.
    const info = await send(app, 'GET', '/v1/sessions/s1', auth);
    expect(info.json<{ status: string }>().status).toBe('idle');
    const events = await send(app, 'GET', '/v1/sessions/s1/events', auth);
    expectNoUnparsed(events.json<{ events: [] }>().events);
  });

  it('is refused when its origin is opaque (Origin: null)', async () => {
    app = await makeApp({ config: { noToken: true } });
    const problem = expectProblem(await send(app, 'POST', '/v1/sessions', { origin: 'null', 'content-type': 'application/json' }, '{"agent":"mock"}'), 403, 'origin_not_allowed');
    expect(problem.origin).toBe('null');
    expect(problem.detail).toMatch(/opaque origin/);
    expect(app.sessions.list()).toEqual([]);
  });

  it('is refused on another port or name of the same machine: only Host itself is the own origin', async () => {
    app = await makeApp({ config: { noToken: true } });
    for (const origin of ['http://127.0.0.1:2469', 'http://localhost:2468', 'http://127.0.0.1', 'ws://127.0.0.1:2468']) {
      expectProblem(await send(app, 'GET', '/v1/sessions', { origin }), 403, 'origin_not_allowed');
    }
  });

  it('comes after the Host check: a rebound name with its own origin is still 421', async () => {
    app = await makeApp({ config: { noToken: true } });
    expectProblem(await send(app, 'POST', '/v1/sessions', { host: 'attacker.example:2468', origin: 'http://attacker.example:2468' }), 421, 'host_not_allowed');
  });
});

describe('Sec-Fetch-Site without an Origin', () => {
  it('cross-site and same-site are refused; same-origin and none pass', async () => {
    app = await makeApp({ config: { noToken: true } });
    for (const site of ['cross-site', 'same-site']) {
      const problem = expectProblem(await send(app, 'GET', '/v1/agents/mock/models', { 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }), 403, 'origin_not_allowed');
      expect(problem.secFetchSite).toBe(site);
      expect(problem.detail).toMatch(/--cors-origin/);
    }
    for (const site of ['same-origin', 'none']) {
      expect((await send(app, 'GET', '/v1/sessions', { 'sec-fetch-site': site })).statusCode, site).toBe(200);
    }
  });

  it('lets a top-level navigation open the public pages, and nothing else', async () => {
    app = await makeApp({ config: { noToken: true } });
    const navigate = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    const opened = await send(app, 'GET', '/?token=x', navigate);
    expect(opened.statusCode).toBe(302);
    expect(opened.headers.location).toBe('/ui/?token=x');
    expect((await send(app, 'GET', '/ui', { ...navigate, 'sec-fetch-site': 'same-site' })).statusCode).toBe(301);
    // Not a public page; not top-level (a frame); not a navigation (a script or image).
    expectProblem(await send(app, 'GET', '/v1/sessions', navigate), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'GET', '/metrics', navigate), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'GET', '/', { ...navigate, 'sec-fetch-dest': 'iframe' }), 403, 'origin_not_allowed');
    expectProblem(await send(app, 'GET', '/', { ...navigate, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' }), 403, 'origin_not_allowed');
  });
});

describe('allowed callers', () => {
  it('the daemon\'s own origin (the inspector it serves), over http or behind a TLS proxy', async () => {
    const a = await waitingSession();
    const id = await permissionId(a);
    const reply = await send(a, 'POST', `/v1/sessions/s1/permissions/${id}/reply`, { origin: OWN, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, '{"reply":"once"}');
    expect(reply.statusCode, reply.body).toBe(204);
    const proxied = await send(a, 'GET', '/v1/sessions/s1', { host: 'agents.example.com', origin: 'https://agents.example.com' });
    expect(proxied.statusCode).toBe(421); // the Host check still wants the name allowed ...
    await a.app.close();
    app = await makeApp({ config: { noToken: true, allowedHosts: ['agents.example.com'] } });
    const allowed = await send(app, 'GET', '/v1/sessions', { host: 'agents.example.com', origin: 'https://agents.example.com' });
    expect(allowed.statusCode).toBe(200); // ... and then its https origin is the daemon's own
  });

  it('an origin given with --cors-origin, with its CORS headers and preflight', async () => {
    app = await makeApp({ config: { token: TOKEN, corsOrigins: ['https://app.test'] } });
    const preflight = await send(app, 'OPTIONS', '/v1/sessions/s1/terminate', { origin: 'https://app.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.test');
    const list = await send(app, 'GET', '/v1/sessions', { origin: 'https://app.test', authorization: `Bearer ${TOKEN}` });
    expect(list.statusCode).toBe(200);
    expect(list.headers['access-control-allow-origin']).toBe('https://app.test');
    // The token still applies to it, and other origins are still refused.
    expectProblem(await send(app, 'GET', '/v1/sessions', { origin: 'https://app.test' }), 401, 'unauthorized');
    expectProblem(await send(app, 'GET', '/v1/sessions', { origin: 'https://other.test', authorization: `Bearer ${TOKEN}` }), 403, 'origin_not_allowed');
  });

  it("--cors-origin '*': any origin, opaque ones and Sec-Fetch-Site included", async () => {
    app = await makeApp({ config: { noToken: true, corsOrigins: ['*'] } });
    for (const headers of [{ origin: FOREIGN }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const res = await send(app, 'GET', '/v1/sessions', headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(200);
    }
    expect((await send(app, 'GET', '/v1/sessions', { origin: FOREIGN })).headers['access-control-allow-origin']).toBe('*');
  });

  it('requests without Origin or Sec-Fetch-Site (curl, backends, the Node client) are untouched', async () => {
    const a = await waitingSession();
    expect((await send(a, 'POST', '/v1/sessions/s1/interrupt', { 'sec-fetch-mode': 'cors' })).statusCode).toBe(202);
    const events = await waitFor(async () => {
      const all = await getEvents(a, 's1');
      return all.some((e) => e.type === 'turn.ended') ? all : undefined;
    }, 5000, 'the interrupted turn to end');
    expectNoUnparsed(events);
    expect((await send(a, 'POST', '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    expect((await send(a, 'DELETE', '/v1/sessions/s1')).statusCode).toBe(204);
  });
});
