// Exposing the daemon: bearer-token auth on every route but health, ?token= only where a browser
// needs it, CORS off by default and preflights answered before auth, request ids, and logs that
// never contain a secret.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/agents/registry.js';
import type { AgentDriver } from '../../src/agents/types.js';
import type { App } from '../../src/app.js';
import { Config } from '../../src/config.js';
import { ROUTES } from '../../src/http/routes.js';
import { createMock, makeApp } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

const TOKEN = 'test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let app: App | undefined;

afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

async function secured(extra: Record<string, unknown> = {}) {
  app = await makeApp({ config: { token: TOKEN, ...extra } });
  return app;
}

describe('bearer token', () => {
  // Every declared route behind the token (src/http/routes.ts), with a body that would be accepted
  // so that only the token is missing, and a path no route has (401 too: nothing is open by default).
  const BODIES: Record<string, unknown> = {
    createSession: { agent: 'mock' },
    createSessionWithId: { agent: 'mock' },
    postMessage: { message: 'hi' },
    postMessageStream: { message: 'hi' },
    replyPermission: { reply: 'once' },
    replyQuestion: { answers: [] },
    updateSession: { budget: null },
    postStream: { agent: 'mock', messages: [{ role: 'user', content: 'hi' }] },
    postStreamV1: { agent: 'mock', messages: [{ role: 'user', content: 'hi' }] },
  };
  const SAMPLE: Record<string, string> = { id: 's1', permissionId: 'p1', questionId: 'q1', agent: 'mock' };
  const routes: [string, string, unknown?][] = [
    ...ROUTES.filter((r) => r.auth !== 'open').map((r): [string, string, unknown?] => [
      r.method.toUpperCase(),
      r.path.replace(/:(\w+)/g, (_m, name: string) => SAMPLE[name]!),
      BODIES[r.operationId],
    ]),
    ['GET', '/no/such/route'],
  ];

  it('has a body for every declared route that takes one', () => {
    const needing = ROUTES.filter((r) => r.body !== undefined && r.body !== 'none' && !r.optionalBody).map((r) => r.operationId);
    expect(Object.keys(BODIES).sort()).toEqual(needing.sort());
  });

  it.each(routes)('%s %s answers 401 without a token, and with a wrong one', async (method, url, body) => {
    const a = await secured();
    const payload = body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
    const missing = await a.app.inject({ method: method as 'GET', url, ...payload });
    expectProblem(missing, 401, 'unauthorized');
    // RFC 6750: the 401 names the scheme, and says when the token presented was the problem.
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="agentwire"');
    const wrong = await a.app.inject({ method: method as 'GET', url, ...payload, headers: { ...payload.headers, authorization: 'Bearer nope' } });
    expect(expectProblem(wrong, 401, 'unauthorized').detail).toMatch(/not valid/);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="agentwire", error="invalid_token"');
    // No session was created behind the refusal.
    expect(a.sessions.list()).toEqual([]);
  });

  it('lets /v1/health through and serves everything with the right token', async () => {
    const a = await secured();
    expect((await a.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
    const res = await a.app.inject({ method: 'POST', url: '/v1/sessions/s1', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"agent":"mock"}' });
    expect(res.statusCode, res.body).toBe(200);
    expect((await a.app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: { authorization: `bearer  ${TOKEN}` } })).statusCode).toBe(200);
  });

  // The comparison copies the presented token into a buffer the token's size: a token cut or padded
  // to that size, or one that only starts like it, must still be refused.
  it.each([
    [`Bearer ${TOKEN}`, 200],
    [`  Bearer ${TOKEN}  `, 200],
    [`BEARER\t${TOKEN}`, 200],
    [`Bearer ${TOKEN}x`, 401],
    [`Bearer ${TOKEN.slice(0, -1)}`, 401],
    [`Bearer ${TOKEN.slice(0, -1)}\u00e9`, 401],
    [`Bearer ${TOKEN}\u0000`, 401],
    [`Bearer ${TOKEN} ${TOKEN}`, 401],
    [`Basic ${TOKEN}`, 401],
    ['Bearer ', 401],
  ])('compares the token exactly: %j answers %i', async (header, status) => {
    const a = await secured();
    const res = await a.app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: header } });
    expect(res.statusCode, res.body).toBe(status);
  });

  it('accepts ?token= on the two GET event streams and the ACP WebSocket only', async () => {
    const a = await secured();
    await a.app.inject({ method: 'POST', url: '/v1/sessions/s1', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"agent":"mock"}' });
    expectProblem(await a.app.inject({ method: 'GET', url: `/v1/sessions/s1/events?token=${TOKEN}` }), 401, 'unauthorized');
    // A cursor past the end answers before the stream opens, which shows the token was accepted.
    expectProblem(await a.app.inject({ method: 'GET', url: `/v1/sessions/s1/events/sse?token=${TOKEN}&offset=999` }), 400, 'offset_ahead');
    expectProblem(await a.app.inject({ method: 'GET', url: `/v1/events/sse?token=${TOKEN}&after=999999999` }), 400, 'offset_ahead');
    // The POST turn stream never comes from an EventSource: the header only, and a token in its
    // URL is refused even beside the header (it would end up in logs for nothing).
    const message = { 'content-type': 'application/json' };
    const payload = '{"message":"Reply with exactly the single word OK."}';
    expectProblem(await a.app.inject({ method: 'POST', url: `/v1/sessions/s1/messages/stream?token=${TOKEN}`, headers: message, payload }), 401, 'unauthorized');
    expectProblem(await a.app.inject({ method: 'POST', url: `/v1/sessions/s1/messages/stream?token=${TOKEN}`, headers: { ...auth, ...message }, payload }), 400, 'invalid_request');
    const turn = await a.app.inject({ method: 'POST', url: '/v1/sessions/s1/messages/stream', headers: { ...auth, ...message }, payload });
    expect(turn.statusCode).toBe(200);
    expect(turn.body).toContain('"type":"turn.ended"');
    expectProblem(await a.app.inject({ method: 'GET', url: '/v1/sessions/s1/events/sse?token=wrong' }), 401, 'unauthorized');
    // GET /v1/acp without an upgrade is told to upgrade: past the token, which the query carried.
    expectProblem(await a.app.inject({ method: 'GET', url: `/v1/acp?token=${TOKEN}` }), 400, 'invalid_request');
    expectProblem(await a.app.inject({ method: 'GET', url: '/v1/acp?token=wrong' }), 401, 'unauthorized');
  });
});

describe('CORS', () => {
  const preflight = (origin: string) => ({
    method: 'OPTIONS' as const,
    url: '/v1/sessions',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });

  it('is off by default: no CORS headers at all', async () => {
    app = await makeApp();
    const res = await app.app.inject({ method: 'GET', url: '/v1/health', headers: { origin: 'https://evil.test' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers preflights for configured origins before auth, with credentials', async () => {
    const a = await secured({ corsOrigins: ['https://app.test'] });
    const ok = await a.app.inject(preflight('https://app.test'));
    expect(ok.statusCode).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.test');
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    expect(String(ok.headers['access-control-allow-headers'])).toMatch(/Authorization/);
    const other = await a.app.inject(preflight('https://evil.test'));
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    // Actual requests still need the token, and carry the CORS header.
    const get = await a.app.inject({ method: 'GET', url: '/v1/sessions', headers: { origin: 'https://app.test', ...auth } });
    expect(get.statusCode).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('https://app.test');
  });

  it('allows any origin with *, but never with credentials', async () => {
    app = await makeApp({ config: { corsOrigins: ['*'] } });
    const res = await app.app.inject(preflight('https://anything.test'));
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('health, request ids and logs', () => {
  it('answers 503 while draining: health says so, other routes are shutting_down problems', async () => {
    // A driver whose terminate waits for the test holds the drain open deterministically.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = createRegistry(Config.parse({})).mock!;
    const slow: AgentDriver = {
      ...real,
      start: async (options, sink) => {
        const handle = await real.start(options, sink);
        return { ...handle, pid: handle.pid, terminate: async () => (await gate, handle.terminate()) };
      },
    };
    app = await makeApp({ registry: { mock: slow } });
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.app.server.address() as AddressInfo;
    await createMock(app, 's1');
    const closing = app.app.close();
    app = undefined;
    const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'draining' });
    const other = await fetch(`http://127.0.0.1:${port}/v1/sessions`);
    expect(other.status).toBe(503);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await other.json()).toMatchObject({ code: 'shutting_down' });
    release();
    await closing;
  });

  it('tags every response with a request id, honouring a sane X-Request-Id', async () => {
    app = await makeApp();
    const generated = await app.app.inject({ method: 'GET', url: '/v1/health' });
    expect(generated.headers['x-request-id']).toMatch(/^req_\d+$/);
    const given = await app.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'trace-42' } });
    expect(given.headers['x-request-id']).toBe('trace-42');
    const hostile = await app.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'a b\u0001' } });
    expect(hostile.headers['x-request-id']).toMatch(/^req_\d+$/);
  });

  it('logs JSON with request ids and session ids, and never the token', async () => {
    const lines: string[] = [];
    app = await makeApp({ config: { token: TOKEN, logLevel: 'debug' }, logStream: { write: (l) => void lines.push(l) } });
    await app.app.inject({ method: 'POST', url: '/v1/sessions/s1', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"agent":"mock"}' });
    await app.app.inject({ method: 'GET', url: `/v1/sessions/s1/events/sse?token=${TOKEN}&offset=999` });
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.some((r) => typeof r.reqId === 'string')).toBe(true);
    expect(records.some((r) => r.sessionId === 's1' && r.agent === 'mock' && r.msg === 'session started')).toBe(true);
    expect(lines.join('\n')).not.toContain(TOKEN);
    expect(lines.join('\n')).toContain('token=[redacted]');
  });
});
