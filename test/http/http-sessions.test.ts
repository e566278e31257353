// The session lifecycle routes, request validation and the problem+json rendering of every error,
// framework errors included. Turn-level routes are in http-turns.test.ts.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { SessionInfo } from '../../src/schema/api.js';
import { createMockDriver } from '../../src/agents/mock/driver.js';
import { Config } from '../../src/config.js';
import { VERSION } from '../../src/version.js';
import { expectProblem, sessionStarted } from '../support/http-problems.js';
import { createMock, getEvents, makeApp, post } from '../support/helpers.js';

// realpath: the mock reports process.cwd(), which has symlinks resolved.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'agentwire-http-')));
mkdirSync(join(base, 'sub'));

let app: App;

afterEach(async () => {
  await app?.app.close();
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

const get = (url: string) => app.app.inject({ method: 'GET', url });
const info = async (id: string) => (await get(`/v1/sessions/${id}`)).json<SessionInfo>();

describe('session lifecycle', () => {
  it('creates a session under a client-chosen id, once', async () => {
    app = await makeApp();
    const created = await post(app, '/v1/sessions/mine', { agent: 'mock' });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toEqual({ healthy: true, nativeSessionId: expect.stringMatching(/^mock-[a-z0-9]{12}$/) });

    const again = await post(app, '/v1/sessions/mine', { agent: 'mock' });
    expectProblem(again, 409, 'session_exists');
    expect(again.json()).toMatchObject({ sessionId: 'mine' });
  });

  it('creates a session under a generated id and answers with its SessionInfo', async () => {
    app = await makeApp();
    const res = await post(app, '/v1/sessions', { agent: 'mock', title: 'generated' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<SessionInfo>();
    expect(body).toMatchObject({ sessionId: 'sess_1', agent: 'mock', title: 'generated', status: 'idle', ended: false });
    expect((await get(`/v1/sessions/${body.sessionId}`)).statusCode).toBe(200);
  });

  it('lists sessions newest first', async () => {
    app = await makeApp();
    for (const id of ['a', 'b', 'c']) await createMock(app, id);
    const res = await get('/v1/sessions');
    expect(res.statusCode).toBe(200);
    expect(res.json<{ sessions: SessionInfo[] }>().sessions.map((s) => s.sessionId)).toEqual(['c', 'b', 'a']);
  });

  it('describes one session', async () => {
    app = await makeApp({ baseDir: base });
    await createMock(app, 's1', { agentMode: 'build', permissionMode: 'plan', model: 'mock-big' });
    const body = await info('s1');
    expect(body).toEqual({
      sessionId: 's1',
      agent: 'mock',
      agentMode: 'build',
      permissionMode: 'plan',
      model: 'mock-big',
      nativeSessionId: expect.stringMatching(/^mock-/),
      ended: false,
      status: 'idle',
      restored: false,
      eventCount: (await getEvents(app, 's1')).length,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      cwd: base,
      permissionPolicy: 'ask',
      hitlTimeoutMs: 0,
      queued: 0,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      budget: {},
    });
    expect(body.eventCount).toBeGreaterThan(0);
    expect(Date.parse(body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(body.createdAt));
    expect(sessionStarted(await getEvents(app, 's1')).metadata).toMatchObject({ model: 'mock-big', mode: 'build' });
  });

  it('defaults agentMode and permissionMode', async () => {
    app = await makeApp();
    await createMock(app, 's1');
    expect(await info('s1')).toMatchObject({ agentMode: 'default', permissionMode: 'default' });
  });

  it('DELETE terminates and forgets the session', async () => {
    app = await makeApp();
    await createMock(app, 's1');
    const pid = Number(sessionStarted(await getEvents(app, 's1')).metadata?.pid);
    const res = await app.app.inject({ method: 'DELETE', url: '/v1/sessions/s1' });
    expect(res.statusCode, res.body).toBe(204);
    expectProblem(await get('/v1/sessions/s1'), 404, 'session_not_found');
    expect(() => process.kill(pid, 0)).toThrow();
    expect((await get('/v1/sessions')).json()).toEqual({ sessions: [] });
  });

  it('answers 404 session_not_found on every per-session route', async () => {
    app = await makeApp();
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/sessions/nope'],
      ['DELETE', '/v1/sessions/nope'],
      ['POST', '/v1/sessions/nope/messages', { message: 'hi' }],
      ['POST', '/v1/sessions/nope/messages/stream', { message: 'hi' }],
      ['POST', '/v1/sessions/nope/interrupt'],
      ['POST', '/v1/sessions/nope/terminate'],
      ['GET', '/v1/sessions/nope/events'],
      ['GET', '/v1/sessions/nope/events/sse'],
      ['POST', '/v1/sessions/nope/permissions/perm_1/reply', { reply: 'once' }],
      ['POST', '/v1/sessions/nope/questions/q_1/reply', { answers: [['red']] }],
      ['POST', '/v1/sessions/nope/questions/q_1/reject'],
    ];
    for (const [method, url, body] of routes) {
      const res = await app.app.inject({
        method: method as 'GET',
        url,
        ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(404);
      expectProblem(res, 404, 'session_not_found');
    }
  });
});

describe('cwd and env', () => {
  it('resolves a relative cwd against the base directory', async () => {
    app = await makeApp({ baseDir: base });
    await createMock(app, 's1', { cwd: 'sub' });
    expect((await info('s1')).cwd).toBe(join(base, 'sub'));
    expect(sessionStarted(await getEvents(app, 's1')).metadata).toMatchObject({ cwd: join(base, 'sub') });
  });

  it('uses an absolute cwd as given', async () => {
    app = await makeApp();
    await createMock(app, 's1', { cwd: join(base, 'sub') });
    expect((await info('s1')).cwd).toBe(join(base, 'sub'));
    expect(sessionStarted(await getEvents(app, 's1')).metadata).toMatchObject({ cwd: join(base, 'sub') });
  });

  it('refuses a cwd that does not exist', async () => {
    app = await makeApp({ baseDir: base });
    const res = await post(app, '/v1/sessions/s1', { agent: 'mock', cwd: 'missing' });
    expectProblem(res, 400, 'invalid_cwd');
    expect(res.json()).toMatchObject({ cwd: join(base, 'missing') });
    expectProblem(await get('/v1/sessions/s1'), 404, 'session_not_found');
  });

  // The mock cannot print its environment, but the kernel can (agentwire targets Linux sandboxes).
  it('passes env to the agent process', async () => {
    app = await makeApp();
    await createMock(app, 's1', { env: { AGENTWIRE_TEST_MARKER: 'hello env' } });
    const pid = Number(sessionStarted(await getEvents(app, 's1')).metadata?.pid);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('AGENTWIRE_TEST_MARKER=hello env');
  });
});

describe('agents', () => {
  it('answers 501 for a known agent without an adapter (a build whose registry lacks it)', async () => {
    app = await makeApp({ registry: { mock: createMockDriver(Config.parse({})) } });
    const res = await post(app, '/v1/sessions/s1', { agent: 'opencode' });
    expectProblem(res, 501, 'agent_not_available');
    expect(res.json()).toMatchObject({ agent: 'opencode' });
  });

  it('answers 400 for an unknown agent, naming the field', async () => {
    app = await makeApp();
    const res = await post(app, '/v1/sessions/s1', { agent: 'foo' });
    const problem = expectProblem(res, 400, 'invalid_request');
    expect(problem.detail).toContain('body.agent');
    expect(problem.errors).toEqual([expect.objectContaining({ path: 'body.agent' })]);
  });
});

describe('problem+json for framework errors', () => {
  it('malformed JSON → 400 malformed_json', async () => {
    app = await makeApp();
    const res = await app.app.inject({ method: 'POST', url: '/v1/sessions', payload: '{"agent": mock', headers: { 'content-type': 'application/json' } });
    expectProblem(res, 400, 'malformed_json');
  });

  it('a body that is not JSON → 415 unsupported_media_type', async () => {
    app = await makeApp();
    const res = await app.app.inject({ method: 'POST', url: '/v1/sessions', payload: 'agent=mock', headers: { 'content-type': 'text/plain' } });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('unknown route → 404 not_found', async () => {
    app = await makeApp();
    const res = await get('/v1/nothing-here');
    expectProblem(res, 404, 'not_found');
    expect(res.json().detail).toContain('/v1/nothing-here');
  });

  it('a body over the limit → 413 body_too_large', async () => {
    app = await makeApp({ config: { bodyLimitBytes: 2048 } });
    await createMock(app, 's1');
    const res = await post(app, '/v1/sessions/s1/messages', { message: 'x'.repeat(3000) });
    expectProblem(res, 413, 'body_too_large');
  });

  it('a missing body → 400 invalid_request', async () => {
    app = await makeApp();
    await createMock(app, 's1');
    const res = await post(app, '/v1/sessions/s1/messages');
    expect(expectProblem(res, 400, 'invalid_request').detail).toMatch(/body is required/);
  });

  it('an unknown field in CreateSessionRequest → 400 invalid_request', async () => {
    app = await makeApp();
    const res = await post(app, '/v1/sessions/s1', { agent: 'mock', colour: 'blue' });
    expect(expectProblem(res, 400, 'invalid_request').detail).toContain('colour');
  });

  it('an invalid session id in the path → 400 invalid_request', async () => {
    app = await makeApp();
    expectProblem(await post(app, '/v1/sessions/-bad!', { agent: 'mock' }), 400, 'invalid_request');
  });

  it('an empty JSON body on /interrupt is no body, not a parse error', async () => {
    app = await makeApp();
    await createMock(app, 's1');
    const send = () =>
      app.app.inject({ method: 'POST', url: '/v1/sessions/s1/interrupt', payload: '', headers: { 'content-type': 'application/json' } });
    // With no turn running the answer is 409 no_turn_running: the body was accepted.
    expectProblem(await send(), 409, 'no_turn_running');
    expect((await post(app, '/v1/sessions/s1/messages', { message: 'slow 20' })).statusCode).toBe(204);
    expect((await send()).statusCode).toBe(202);
  });
});

describe('limits', () => {
  it('refuses a session over maxSessions until one has ended, then evicts the oldest ended one', async () => {
    app = await makeApp({ config: { maxSessions: 2 } });
    await createMock(app, 'a');
    await createMock(app, 'b');
    const refused = await post(app, '/v1/sessions/c', { agent: 'mock' });
    expect(expectProblem(refused, 429, 'too_many_sessions').limit).toBe(2);

    expect((await post(app, '/v1/sessions/a/terminate')).statusCode).toBe(204);
    // A create that fails does not cost the ended session its place.
    expectProblem(await post(app, '/v1/sessions/c', { agent: 'mock', cwd: '/no/such/dir' }), 400, 'invalid_cwd');
    expect((await get('/v1/sessions/a')).statusCode).toBe(200);
    await createMock(app, 'c');
    expectProblem(await get('/v1/sessions/a'), 404, 'session_not_found');
    expect((await get('/v1/sessions')).json<{ sessions: SessionInfo[] }>().sessions.map((s) => s.sessionId)).toEqual(['c', 'b']);
  });
});

describe('daemon routes', () => {
  it('GET /openapi.json serves an OpenAPI 3.1 document', async () => {
    app = await makeApp();
    const res = await get('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/v1/sessions/{id}');
  });

  it('GET /v1/health', async () => {
    app = await makeApp();
    const res = await get('/v1/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', version: VERSION, uptimeMs: expect.any(Number) });
  });
});
