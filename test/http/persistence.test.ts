// Sessions that outlive the daemon, in process: two apps one after the other on the same data dir
// (a real SQLite file), the mock as the agent. What a client sees after a restart: the same
// sessions and events byte for byte, `restored: true`, sequences that continue, the agent resumed
// on its own native session, the whole history readable behind the memory window, and a full disk
// that refuses new work without losing anything.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App, AppDeps } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { SessionInfo } from '../../src/schema/api.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { systemClock } from '../../src/util/deps.js';
import { assistantMessages, textOf } from '../support/e2e-turns.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, types, waitFor } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

let dataDir: string;
let home: string;
const apps: App[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'aw-persist-'));
  home = mkdtempSync(join(tmpdir(), 'aw-persist-mock-'));
});

afterEach(async () => {
  for (const a of apps.splice(0)) await a.app.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** A daemon on the shared data dir; the mock keeps its own sessions under `home`. */
async function daemon(config: Partial<Config> = {}, deps: AppDeps = {}): Promise<App> {
  const app = await makeApp({ config: { dataDir, ...config }, ...deps });
  apps.push(app);
  return app;
}

async function stop(app: App): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.app.close();
}

const env = () => ({ MOCK_AGENT_HOME: home });
const pollJson = async (app: App, id: string, offset = 0) =>
  (await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?offset=${offset}&limit=10000&include_raw=true` })).body;
const info = async (app: App, id: string) => (await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json() as SessionInfo;
const replies = (events: Awaited<ReturnType<typeof getEvents>>) => assistantMessages(events).map(textOf);

describe('durable sessions (SQLite store, in process)', () => {
  it('a restart keeps every session and event; the next message resumes the native session and continues the sequence', async () => {
    const first = await daemon();
    await createMock(first, 'keep', { env: env(), title: 'kept' });
    expect(replies(await runTurn(first, 'keep', 'echo remember me'))).toEqual(['remember me']);
    const before = await pollJson(first, 'keep');
    const last = (await getEvents(first, 'keep')).at(-1)!.sequence;
    await stop(first);

    const second = await daemon();
    // The same bytes (event ids, times, raw payloads), served from the store.
    expect(await pollJson(second, 'keep')).toBe(before);
    const listed = ((await second.app.inject({ method: 'GET', url: '/v1/sessions' })).json() as { sessions: SessionInfo[] }).sessions;
    expect(listed).toMatchObject([{ sessionId: 'keep', restored: true, status: 'idle', ended: false, title: 'kept', eventCount: last }]);

    const turn = await runTurn(second, 'keep', 'history');
    expect(turn[0]!.sequence).toBe(last + 1);
    expect(turn.map((e) => e.sequence)).toEqual(turn.map((_, i) => last + 1 + i));
    // The mock was started on its own session: it remembers the earlier prompt.
    expect(replies(turn)).toEqual(['Earlier prompts in this session (1):\n1. "echo remember me"']);
    expect(new Set((await getEvents(second, 'keep')).map((e) => e.native_session_id)).size).toBe(1);
    expectNoUnparsed(await getEvents(second, 'keep'));
  });

  it('a graceful stop ends a running turn as interrupted but not the session; the next daemon restores it idle', async () => {
    const first = await daemon();
    await createMock(first, 'busy', { env: env() });
    expect((await post(first, '/v1/sessions/busy/messages', { message: 'slow 100' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(first, 'busy')).some((e) => e.type === 'item.delta' && e.source === 'agent'), 5000, 'a tick');
    await stop(first);

    const second = await daemon();
    const events = await getEvents(second, 'busy');
    const ended = events.filter((e) => e.type === 'turn.ended');
    expect(ended.map((e) => e.data.metadata)).toEqual([{ reason: 'interrupted' }]);
    expect(types(events)).not.toContain('session.ended');
    expect(events.some((e) => e.type === 'error' && e.data.code === 'daemon_restarted')).toBe(false);
    expect(await info(second, 'busy')).toMatchObject({ status: 'idle', restored: true, ended: false });
    expect(replies(await runTurn(second, 'busy', 'echo still here'))).toEqual(['still here']);
    expectNoUnparsed(await getEvents(second, 'busy'));
  });

  it('a restart keeps the usage totals and the budget, raises and PATCHes included; the next turn is checked against them', async () => {
    const first = await daemon();
    await createMock(first, 'spent', { env: env(), budget: { max_tokens: 1000, max_turns: 1 } });
    await runTurn(first, 'spent', 'spend 2');
    await waitFor(async () => (await info(first, 'spent')).status === 'idle', 5000, 'spend to end');
    const patched = await first.app.inject({ method: 'PATCH', url: '/v1/sessions/spent', payload: JSON.stringify({ budget: { max_tokens: 1000, max_turns: 2 } }), headers: { 'content-type': 'application/json' } });
    expect(patched.statusCode, patched.body).toBe(200);
    const before = await info(first, 'spent');
    expect(before.usage).toMatchObject({ input_tokens: 200, output_tokens: 40, cost_source: 'price_table' });
    await stop(first);

    const second = await daemon();
    const after = await info(second, 'spent');
    expect(after).toMatchObject({ restored: true, usage: before.usage, budget: { max_tokens: 1000, max_turns: 2 } });
    // Turn 2 is within max_turns 2; its steps then cross max_tokens 1000 from the restored 240.
    const asked = await runTurn(second, 'spent', 'spend 3 300 100');
    const request = asked.find((e) => e.type === 'permission.requested');
    expect(request?.type === 'permission.requested' && request.data.metadata).toMatchObject({ limit: 'max_tokens', limit_value: 1000, spent: 1040 });
    expectNoUnparsed(await getEvents(second, 'spent'));
  });

  it('serves the whole history behind the memory window from the store: never a 410 for a session that exists', async () => {
    const app = await daemon({ maxEventsPerSession: 10 });
    await createMock(app, 'long', { env: env() });
    await runTurn(app, 'long', 'markdown');
    await runTurn(app, 'long', 'markdown');
    const all = await getEvents(app, 'long', 0);
    expect(all.length).toBeGreaterThan(30);
    expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1));
    // A page that starts in the store and ends in the window.
    const page = await getEvents(app, 'long', all.length - 15);
    expect(page.map((e) => e.sequence)).toEqual(all.slice(-15).map((e) => e.sequence));
    expectNoUnparsed(all);
  });

  it('DELETE removes the rows; a create that fails leaves nothing behind; ended sessions stay ended', async () => {
    const first = await daemon();
    await createMock(first, 'gone', { env: env() });
    await createMock(first, 'done', { env: env() });
    await runTurn(first, 'done', 'end');
    expect((await first.app.inject({ method: 'DELETE', url: '/v1/sessions/gone' })).statusCode).toBe(204);
    const failed = await post(first, '/v1/sessions/broken', { agent: 'mock', env: env(), nativeSessionId: 'mock-nosuchsession' });
    expect(failed.statusCode).toBe(502);
    await stop(first);

    const second = await daemon();
    const listed = ((await second.app.inject({ method: 'GET', url: '/v1/sessions' })).json() as { sessions: SessionInfo[] }).sessions;
    expect(listed.map((s) => [s.sessionId, s.status])).toEqual([['done', 'ended']]);
    expectProblem(await post(second, '/v1/sessions/done/messages', { message: 'hi' }), 409, 'session_ended');
  });

  it('retention drops sessions that ended longer ago than --retention', async () => {
    // Real time: each test app's stepping clock starts over, which would make the session end "later".
    const first = await daemon({}, { clock: systemClock });
    await createMock(first, 'old', { env: env() });
    expect((await post(first, '/v1/sessions/old/terminate')).statusCode).toBe(204);
    await stop(first);
    const kept = await daemon({}, { clock: systemClock });
    expect((await info(kept, 'old')).ended).toBe(true);
    await stop(kept);
    const pruned = await daemon({ retentionMs: 0 }, { clock: systemClock });
    expectProblem(await pruned.app.inject({ method: 'GET', url: '/v1/sessions/old' }), 404, 'session_not_found');
  });

  it('a full disk: new work gets 507 problem+json, an error event says so, and nothing is lost once space returns', async () => {
    const app = await daemon();
    await createMock(app, 'full', { env: env() });
    const store = app.store as SqliteStore;
    store.limitPages(store.pageCount() + 2);
    expect((await post(app, '/v1/sessions/full/messages', { message: 'flood 3000' })).statusCode).toBe(204);
    await waitFor(() => store.failure, 5000, 'the store to fail');
    expectProblem(await post(app, '/v1/sessions', { agent: 'mock' }), 507, 'store_unavailable');
    const health = await app.app.inject({ method: 'GET', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
    store.limitPages(1_000_000);
    await waitFor(() => store.failure === null, 5000, 'the store to recover');
    const events = await waitFor(async () => {
      const all = await getEvents(app, 'full');
      return all.some((e) => e.type === 'turn.ended') ? all : undefined;
    }, 10_000, 'the flood to end');
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'item.delta' && e.source === 'agent')).toHaveLength(3000);
    expect(events.filter((e) => e.type === 'error').map((e) => e.data.code)).toEqual(['store_unavailable']);
    expectNoUnparsed(events);
  });
});
