// What the app logs, as JSON records: nothing per request at info, and no work per request for it
// either; one record per request at debug (refused ones included, the token redacted); a session's
// start, its agent's exit and its end, with the fields a machine reads.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { makeApp, waitFor } from '../support/helpers.js';

const TOKEN = 'app-log-test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let app: App | undefined;

afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

type LogRecord = Record<string, unknown> & { msg?: string; level?: number };

/** An app at `logLevel` whose records are collected, and how many 'close' listeners each reply had. */
async function loggedApp(logLevel: 'info' | 'debug') {
  const lines: string[] = [];
  app = await makeApp({ config: { token: TOKEN, logLevel }, logStream: { write: (l) => void lines.push(l) } });
  const closeListeners: number[] = [];
  app.app.addHook('onSend', async (_req, reply) => void closeListeners.push(reply.raw.listenerCount('close')));
  const records = () => lines.map((l) => JSON.parse(l) as LogRecord);
  return { app, records, closeListeners };
}

/** A few requests of every kind: answered, refused by auth (a token in the query where a route takes
 *  none, a wrong one) and by the Host check, not found. */
async function someRequests(a: App) {
  await a.app.inject({ method: 'GET', url: '/v1/health' });
  await a.app.inject({ method: 'GET', url: `/v1/sessions?token=${TOKEN}` });
  await a.app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: 'Bearer wrong-token-0123456789' } });
  await a.app.inject({ method: 'GET', url: '/v1/health', headers: { host: 'evil.example' } });
  await a.app.inject({ method: 'GET', url: '/nowhere', headers: auth });
}

describe('request lines', () => {
  it('at info: none, and the request log adds nothing to a request', async () => {
    const info = await loggedApp('info');
    await someRequests(info.app);
    expect(info.records().filter((r) => r.req !== undefined || r.res !== undefined || /request/.test(r.msg ?? ''))).toEqual([]);
    const atInfo = info.closeListeners.slice();
    await info.app.app.close();

    const debug = await loggedApp('debug');
    await someRequests(debug.app);
    // The one thing the debug request log does per request is listen for the end of its answer.
    expect(debug.closeListeners).toEqual(atInfo.map((n) => n + 1));
  });

  it('at debug: one record per request, with its method, redacted URL, status, time and id', async () => {
    const { app: a, records } = await loggedApp('debug');
    await someRequests(a);
    const requests = records().filter((r) => r.msg === 'request completed');
    expect(records().filter((r) => r.msg === 'incoming request')).toEqual([]);
    expect(requests.map((r) => [(r.req as { method: string }).method, (r.req as { url: string }).url, (r.res as { statusCode: number }).statusCode])).toEqual([
      ['GET', '/v1/health', 200],
      ['GET', '/v1/sessions?token=[redacted]', 401], // this route takes no query token
      ['GET', '/v1/sessions', 401],
      ['GET', '/v1/health', 421],
      ['GET', '/nowhere', 404],
    ]);
    for (const r of requests) {
      expect(r).toMatchObject({ level: 20, reqId: expect.stringMatching(/^req_\d+$/), responseTime: expect.any(Number) });
      expect(r.aborted).toBeUndefined();
    }
    expect(JSON.stringify(records())).not.toContain(TOKEN);
  });
});

describe('session lines', () => {
  it("a session's start, its agent's exit and its end, with the session's id and agent", async () => {
    const { app: a, records } = await loggedApp('info');
    const created = await a.app.inject({ method: 'POST', url: '/v1/sessions/s1', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"agent":"mock"}' });
    expect(created.statusCode, created.body).toBe(200);
    expect((await a.app.inject({ method: 'DELETE', url: '/v1/sessions/s1', headers: auth })).statusCode).toBe(204);
    await waitFor(() => records().some((r) => r.msg === 'session ended'), 5000, 'the session ended line');
    const lines = records().filter((r) => r.sessionId === 's1');
    expect(lines.map((r) => r.msg)).toEqual(['session started', 'agent process exited', 'session ended']);
    const [started, exited, ended] = lines;
    expect(started).toMatchObject({ level: 30, agent: 'mock', agentPid: expect.any(Number), cwd: expect.any(String) });
    expect(exited).toMatchObject({ level: 30, agent: 'mock', agentPid: started!.agentPid, exitCode: null, signal: 'SIGTERM', requested: true });
    expect(ended).toMatchObject({ level: 30, agent: 'mock', reason: 'terminated', terminatedBy: 'daemon' });
  });

  it('an agent that crashes: its exit and the end of its session are warnings', async () => {
    const { app: a, records } = await loggedApp('info');
    await a.app.inject({ method: 'POST', url: '/v1/sessions/s2', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"agent":"mock"}' });
    await a.app.inject({ method: 'POST', url: '/v1/sessions/s2/messages', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"message":"crash 3"}' });
    await waitFor(() => records().some((r) => r.msg === 'session ended'), 5000, 'the session ended line');
    const byMsg = Object.fromEntries(records().filter((r) => r.sessionId === 's2').map((r) => [r.msg, r]));
    expect(byMsg['agent process exited']).toMatchObject({ level: 40, exitCode: 3, requested: false });
    expect(byMsg['session ended']).toMatchObject({ level: 40, reason: 'error', terminatedBy: 'agent', exitCode: 3, message: expect.any(String) });
  });
});
