// GET /metrics after a real scenario with the mock agent (real processes, real sockets): every
// number is checked exactly against what the scenario did and what the event logs hold.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PINNED_AGENTS } from '../../src/agents/versions.js';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { turnReason } from '../../src/metrics/observe-events.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { expectNoUnparsed, makeApp, waitFor } from '../support/helpers.js';
import { abortAllStreams, openSse, openStream, portOf } from '../support/sse-client.js';

const TOKEN = 'metrics-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const temps: string[] = [];
let current: App | undefined;

afterEach(async () => {
  abortAllStreams();
  await current?.app.close();
  current = undefined;
});
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `agentwire-metrics-${name}-`));
  temps.push(dir);
  return dir;
}

async function listening(config: Partial<Config> = {}): Promise<{ app: App; port: number }> {
  const app = await makeApp({ config: { token: TOKEN, ...config } });
  current = app;
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: portOf(app.app) };
}

async function call(app: App, method: 'GET' | 'POST', url: string, body?: unknown) {
  const payload = body === undefined ? {} : { payload: JSON.stringify(body), headers: { ...AUTH, 'content-type': 'application/json' } };
  return app.app.inject({ method, url, headers: AUTH, ...payload });
}

/** One scrape as `name{a="x",b="y"}` (labels sorted) → value. */
async function scrape(app: App): Promise<Map<string, number>> {
  const res = await app.app.inject({ method: 'GET', url: '/metrics', headers: AUTH });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of res.body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = m[2] ? m[2].split(/,(?=\w+=")/).sort().join(',') : '';
    samples.set(`${m[1]}{${labels}}`, Number(m[3]));
  }
  return samples;
}

function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',');
  return samples.get(`${name}{${key}}`);
}

async function turn(app: App, id: string, message: string, stop: (e: UniversalEvent) => boolean): Promise<void> {
  const before = (await getEventsAuthed(app, id)).length;
  const res = await call(app, 'POST', `/v1/sessions/${id}/messages`, { message });
  expect(res.statusCode, res.body).toBe(204);
  await waitFor(async () => (await getEventsAuthed(app, id)).slice(before).some(stop), 10_000, `'${message}' to finish`);
}

async function getEventsAuthed(app: App, id: string): Promise<UniversalEvent[]> {
  const res = await call(app, 'GET', `/v1/sessions/${id}/events?limit=10000`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { events: UniversalEvent[] }).events;
}

describe('GET /metrics', () => {
  it('counts a scenario exactly: turns, HITL, a crash, streams, processes, events, HTTP', async () => {
    const { app, port } = await listening();
    expect((await call(app, 'POST', '/v1/sessions/s1', { agent: 'mock' })).statusCode).toBe(200);
    expect((await call(app, 'POST', '/v1/sessions/s2', { agent: 'mock' })).statusCode).toBe(200);

    // An SSE subscriber open during the turns, counted while it is open.
    const sse = await openSse({ port, path: `/v1/sessions/s1/events/sse?token=${TOKEN}` });
    expect(sse.status).toBe(200);
    await turn(app, 's1', 'Reply with exactly the single word OK.', (e) => e.type === 'turn.ended');
    await turn(app, 's1', 'permission', (e) => e.type === 'permission.requested');
    const waiting = await scrape(app);
    expect(sample(waiting, 'agentwire_sessions', { status: 'waiting' })).toBe(1);
    expect(sample(waiting, 'agentwire_stream_subscribers', { format: 'sse' })).toBe(1);
    const permission = (await getEventsAuthed(app, 's1')).find((e) => e.type === 'permission.requested');
    const permissionId = permission?.type === 'permission.requested' ? permission.data.permission_id : '';
    const reply = await call(app, 'POST', `/v1/sessions/s1/permissions/${permissionId}/reply`, { reply: 'once' });
    expect(reply.statusCode, reply.body).toBe(204);
    await waitFor(async () => (await getEventsAuthed(app, 's1')).filter((e) => e.type === 'turn.ended').length === 2, 10_000, 'the permission turn to end');
    await sse.until(() => sse.lastId === app.sessions.get('s1').log.lastSequence, 5000, 'the SSE stream to catch up');
    sse.abort();
    await waitFor(() => app.sessions.get('s1').subscribers === 0, 5000, 'the SSE subscriber to go');

    // A turn stream as NDJSON, ended by the daemon at turn.ended.
    const ndjson = await openStream({ port, method: 'POST', path: '/v1/sessions/s1/messages/stream', headers: { ...AUTH, accept: 'application/x-ndjson' }, body: { message: 'echo hi' } });
    expect(ndjson.status).toBe(200);
    await ndjson.ended(10_000);

    await turn(app, 's2', 'crash', (e) => e.type === 'session.ended');
    await waitFor(() => app.sessions.get('s2').status === 'ended', 5000, 's2 to end');
    expect((await app.app.inject({ method: 'GET', url: '/no/such/route', headers: AUTH })).statusCode).toBe(404);
    // The crashed agent's exit is counted once it is reaped, a moment after session.ended.
    let m = await waitFor(async () => {
      const s = await scrape(app);
      return sample(s, 'agentwire_agent_process_exits_total', { code: '3', signal: 'none', killed: 'false' }) === 1 ? s : undefined;
    }, 5000, 'the crashed process to be counted');

    const s1 = await getEventsAuthed(app, 's1');
    const s2 = await getEventsAuthed(app, 's2');
    expectNoUnparsed([...s1, ...s2]);

    expect(sample(m, 'agentwire_sessions', { status: 'idle' })).toBe(1);
    expect(sample(m, 'agentwire_sessions', { status: 'ended' })).toBe(1);
    expect(sample(m, 'agentwire_sessions', { status: 'running' })).toBe(0);
    expect(sample(m, 'agentwire_sessions', { status: 'waiting' })).toBe(0);
    expect(sample(m, 'agentwire_sessions_started_total', { agent: 'mock' })).toBe(2);
    expect(sample(m, 'agentwire_sessions_ended_total', { agent: 'mock', reason: 'error' })).toBe(1);

    // Turns: OK, permission and echo completed in s1; crash ended in error in s2.
    expect(sample(m, 'agentwire_turns_started_total', { agent: 'mock' })).toBe(4);
    expect(sample(m, 'agentwire_turns_ended_total', { agent: 'mock', reason: 'completed' })).toBe(3);
    expect(sample(m, 'agentwire_turns_ended_total', { agent: 'mock', reason: 'error' })).toBe(1);
    expect(sample(m, 'agentwire_turn_duration_seconds_count', { agent: 'mock', reason: 'completed' })).toBe(3);
    expect(sample(m, 'agentwire_turn_duration_seconds_count', { agent: 'mock', reason: 'error' })).toBe(1);
    expect(sample(m, 'agentwire_turn_duration_seconds_bucket', { agent: 'mock', reason: 'completed', le: '+Inf' })).toBe(3);

    expect(sample(m, 'agentwire_hitl_requests_total', { agent: 'mock', kind: 'permission' })).toBe(1);
    expect(sample(m, 'agentwire_hitl_resolved_total', { agent: 'mock', kind: 'permission', outcome: 'approved' })).toBe(1);
    expect(sample(m, 'agentwire_hitl_answer_seconds_count', { kind: 'permission', outcome: 'approved' })).toBe(1);
    expect(sample(m, 'agentwire_hitl_answer_seconds_sum', { kind: 'permission', outcome: 'approved' })).toBeGreaterThan(0);

    // Every event of both logs, by type, and nothing else.
    const byType = new Map<string, number>();
    for (const e of [...s1, ...s2]) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    for (const [type, n] of byType) expect(sample(m, 'agentwire_events_total', { agent: 'mock', type }), type).toBe(n);
    const counted = [...m].filter(([k]) => k.startsWith('agentwire_events_total{'));
    expect(counted.reduce((sum, [, v]) => sum + v, 0)).toBe(s1.length + s2.length);
    expect(sample(m, 'agentwire_event_log_events')).toBe(s1.length + s2.length);
    expect(sample(m, 'agentwire_event_log_bytes')).toBe(app.sessions.get('s1').log.size.bytes + app.sessions.get('s2').log.size.bytes);

    expect(sample(m, 'agentwire_stream_subscribers', { format: 'sse' })).toBe(0);
    expect(sample(m, 'agentwire_stream_subscribers', { format: 'ndjson' })).toBe(0);
    expect(sample(m, 'agentwire_stream_subscribers_dropped_total', { reason: 'lag' })).toBeUndefined();
    // Only s1's mock is still running in this test process.
    expect(sample(m, 'agentwire_agent_processes')).toBe(1);

    // HTTP by route pattern: the ids in the URLs never become labels.
    expect(sample(m, 'agentwire_http_requests_total', { method: 'POST', route: '/v1/sessions/:id', status: '200' })).toBe(2);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'POST', route: '/v1/sessions/:id/messages', status: '204' })).toBe(3);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'POST', route: '/v1/sessions/:id/permissions/:permissionId/reply', status: '204' })).toBe(1);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'POST', route: '/v1/sessions/:id/messages/stream', status: '200' })).toBe(1);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    // The SSE stream the client left is counted as such, not as a 200 it never finished.
    expect(sample(m, 'agentwire_http_requests_total', { method: 'GET', route: '/v1/sessions/:id/events/sse', status: 'aborted' })).toBe(1);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'GET', route: '/v1/sessions/:id/events/sse', status: '200' })).toBeUndefined();
    expect([...m.keys()].filter((k) => k.includes('s1') || k.includes('s2'))).toEqual([]);

    // Default Node process metrics come along.
    expect(sample(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // Terminating s1 reaps its process: the daemon killed it.
    expect((await call(app, 'POST', '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    m = await waitFor(async () => {
      const s = await scrape(app);
      return sample(s, 'agentwire_agent_processes') === 0 ? s : undefined;
    }, 5000, 'the terminated process to be reaped');
    const killed = [...m].filter(([k]) => k.startsWith('agentwire_agent_process_exits_total{') && k.includes('killed="true"'));
    expect(killed.reduce((sum, [, v]) => sum + v, 0)).toBe(1);
    expect(sample(m, 'agentwire_sessions_ended_total', { agent: 'mock', reason: 'terminated' })).toBe(1);
    expect(sample(m, 'agentwire_sessions', { status: 'ended' })).toBe(2);
  });

  it('needs the token when one is set; health stays open', async () => {
    const { app } = await listening();
    const bare = await app.app.inject({ method: 'GET', url: '/metrics' });
    expect(bare.statusCode).toBe(401);
    expect(bare.headers['content-type']).toMatch(/^application\/problem\+json/);
    const wrong = await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.statusCode).toBe(401);
    expect((await app.app.inject({ method: 'GET', url: '/v1/health' })).statusCode).toBe(200);
    const m = await scrape(app);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(2);
    expect(sample(m, 'agentwire_http_requests_total', { method: 'GET', route: '/v1/health', status: '200' })).toBe(1);
  });

  it('counts a subscriber closed for falling behind', async () => {
    const { app, port } = await listening({ subscriberMaxLag: 50, subscriberLagGraceMs: 100 });
    expect((await call(app, 'POST', '/v1/sessions/s1', { agent: 'mock' })).statusCode).toBe(200);
    const slow = await openSse({ port, path: `/v1/sessions/s1/events/sse?token=${TOKEN}` });
    await slow.until(() => slow.lastId === app.sessions.get('s1').log.lastSequence, 5000, 'the backlog');
    slow.pause();
    expect((await call(app, 'POST', '/v1/sessions/s1/messages', { message: 'flood 20000' })).statusCode).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood turn to end');
    await waitFor(() => app.sessions.get('s1').subscribers === 0, 5000, 'the paused subscriber to be closed');
    const m = await scrape(app);
    expect(sample(m, 'agentwire_stream_subscribers_dropped_total', { reason: 'lag' })).toBe(1);
    expect(sample(m, 'agentwire_stream_subscribers_dropped_total', { reason: 'evicted' })).toBeUndefined();
    expect(sample(m, 'agentwire_stream_subscribers', { format: 'sse' })).toBe(0);
    expectNoUnparsed(await getEventsAuthed(app, 's1'));
  });

  it('counts agent installs by outcome: a complete install reused, one npm cannot find failed', async () => {
    const agentsDir = tempDir('agents');
    const version = PINNED_AGENTS.amp.version;
    // A complete install as install.ts leaves it: the marker naming the version and an executable.
    const target = join(agentsDir, 'amp', version);
    mkdirSync(join(target, 'bin'), { recursive: true });
    writeFileSync(join(target, 'bin', 'amp'), '#!/bin/sh\necho 1\n', { mode: 0o755 });
    writeFileSync(join(target, '.agentwire-install.json'), JSON.stringify({ name: 'amp', version, executable: 'bin/amp' }));
    // A version npm cannot find: the install fails at npm (a path in the way would not do: an
    // install moves what is in its way aside, install-trust.ts).
    const { app } = await listening({ agentsDir });
    expect((await call(app, 'POST', '/v1/agents/amp/install', {})).statusCode).toBe(204);
    const failed = await call(app, 'POST', '/v1/agents/codex/install', { version: '0.0.1-nope' });
    expect(failed.statusCode, failed.body).toBe(502);
    const m = await scrape(app);
    expect(sample(m, 'agentwire_agent_installs_total', { agent: 'amp', outcome: 'reused' })).toBe(1);
    expect(sample(m, 'agentwire_agent_installs_total', { agent: 'codex', outcome: 'failed' })).toBe(1);
    expect(sample(m, 'agentwire_agent_installs_total', { agent: 'amp', outcome: 'installed' })).toBeUndefined();
   }, 60_000);
});

describe('turn reason labels', () => {
  it('keep to a fixed set whatever an agent puts in metadata', () => {
    expect(turnReason({ reason: 'interrupted' })).toBe('interrupted');
    expect(turnReason({ reason: 'agent_exited' })).toBe('agent_exited');
    expect(turnReason({})).toBe('unspecified');
    expect(turnReason(undefined)).toBe('unspecified');
    expect(turnReason({ reason: 'something the agent made up' })).toBe('other');
    expect(turnReason({ reason: 42 })).toBe('other');
  });
});
