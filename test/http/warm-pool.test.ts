// The warm pool (--warm) with the mock agent: a create with the daemon's defaults adopts a ready
// spare, anything else (its own env, another cwd) starts its own agent; the pool refills after the
// pooled session's first turn, replaces a spare that dies (with a growing delay, never in a hot
// loop), yields to sessions at --max-sessions, shows in GET /v1/agents and /metrics, and leaves no
// process behind at shutdown.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createRegistry } from '../../src/agents/registry.js';
import type { AgentDriver, SpareOptions } from '../../src/agents/types.js';
import { WarmPool } from '../../src/sessions/warm-pool.js';
import { expectWellFormedTurn, sendTurn } from '../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, makeApp, post, waitFor } from '../support/helpers.js';
import { alive, allGone, killGroups } from '../support/procs.js';

let app: App | undefined;
const groups = new Set<number>();

afterEach(async () => {
  await app?.app.close();
  app = undefined;
  killGroups(groups);
  groups.clear();
});

type Warm = { size: number; ready: number; starting: number };

async function warmOf(agent: string): Promise<Warm> {
  const res = await app!.app.inject({ method: 'GET', url: '/v1/agents' });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agents: { id: string; warm: Warm }[] }).agents.find((a) => a.id === agent)!.warm;
}

const untilReady = (n: number, what = `${n} ready spare(s)`) => waitFor(async () => (await warmOf('mock')).ready === n, 10_000, what);

/** The pids of the ready mock spares (the pool's own bookkeeping, as a test may read it). */
function sparePids(): number[] {
  const pool = (app!.sessions as unknown as { pool: { ready: Map<string, { handle: { pid: number } }[]> } }).pool;
  return (pool.ready.get('mock') ?? []).map((s) => s.handle.pid);
}

/** A process's environment, one NAME=value per entry. */
const environ = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

async function sessionPid(id: string): Promise<number> {
  const started = (await getEvents(app!, id)).find((e) => e.type === 'session.started');
  const pid = Number(started?.type === 'session.started' ? started.data.metadata?.pid : NaN);
  expect(pid).toBeGreaterThan(0);
  groups.add(pid);
  return pid;
}

async function warmApp(config: Record<string, unknown> = {}): Promise<App> {
  app = await makeApp({ config: { warm: ['mock=1'], ...config }, baseDir: mkdtempSync(join(tmpdir(), 'aw-warm-')) });
  await app.app.ready();
  return app;
}

describe('warm pool (mock)', () => {
  it('a create with the defaults adopts the spare, runs a turn, and the pool refills after it', async () => {
    await warmApp();
    await untilReady(1);
    const [spare] = sparePids();
    const res = await post(app!, '/v1/sessions/pooled', { agent: 'mock' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await sessionPid('pooled')).toBe(spare);
    // The refill waits for the pooled session's first turn (or a delay): it is not booting yet.
    expect((await warmOf('mock')).starting + (await warmOf('mock')).ready).toBe(0);
    const turn = await sendTurn(app!, 'pooled', 'Reply with exactly the single word OK.');
    await expectWellFormedTurn(app!, 'pooled', turn, 'Reply with exactly the single word OK.');
    await untilReady(1, 'the refill');
    expect(sparePids()[0]).not.toBe(spare);
    // The session.started the spare printed before it was adopted reached the session, first.
    const events = await getEvents(app!, 'pooled');
    expect(events[0]?.type).toBe('session.started');
    expectNoUnparsed(events);
  });

  it('a create that brings its own env, or another cwd, gets a fresh agent, never the spare', async () => {
    await warmApp();
    await untilReady(1);
    const [spare] = sparePids();
    const withEnv = await post(app!, '/v1/sessions/env', { agent: 'mock', env: { SECRET_TOKEN: 'only-mine' } });
    expect(withEnv.statusCode, withEnv.body).toBe(200);
    expect(await sessionPid('env')).not.toBe(spare);
    const other = mkdtempSync(join(tmpdir(), 'aw-warm-other-'));
    const elsewhere = await post(app!, '/v1/sessions/cwd', { agent: 'mock', cwd: other });
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    expect(await sessionPid('cwd')).not.toBe(spare);
    const moded = await post(app!, '/v1/sessions/mode', { agent: 'mock', agentMode: 'plan' });
    expect(moded.statusCode, moded.body).toBe(200);
    expect(await sessionPid('mode')).not.toBe(spare);
    expect(sparePids()).toEqual([spare]);
    for (const id of ['env', 'cwd', 'mode']) expectNoUnparsed(await getEvents(app!, id));
    // The session's env reached its own agent, never the spare.
    expect(environ(await sessionPid('env'))).toContain('SECRET_TOKEN=only-mine');
    expect(environ(spare!)).not.toContain('SECRET_TOKEN');
  });

  it('a spare never carries a session env: the refill after a pooled session has none either', async () => {
    await warmApp();
    await untilReady(1);
    const withEnv = await post(app!, '/v1/sessions/env', { agent: 'mock', env: { SECRET_TOKEN: 'only-mine' } });
    expect(withEnv.statusCode, withEnv.body).toBe(200);
    expect((await post(app!, '/v1/sessions/pooled', { agent: 'mock' })).statusCode).toBe(200);
    await sendTurn(app!, 'pooled', 'Reply with exactly the single word OK.');
    await untilReady(1, 'the refill');
    expect(environ(sparePids()[0]!)).not.toContain('SECRET_TOKEN');
    expect(environ(await sessionPid('pooled'))).not.toContain('SECRET_TOKEN');
    for (const id of ['env', 'pooled']) expectNoUnparsed(await getEvents(app!, id));
  });

  it('a spare that dies is replaced', async () => {
    await warmApp();
    await untilReady(1);
    const [spare] = sparePids();
    process.kill(-spare!, 'SIGKILL');
    await waitFor(() => sparePids().length === 1 && sparePids()[0] !== spare, 10_000, 'a new spare');
    expect(alive(spare!)).toBe(false);
  });

  it('shows in /metrics, and shutdown reaps every spare', async () => {
    await warmApp({ warm: ['mock=2'] });
    await untilReady(2);
    const metrics = await app!.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('agentwire_warm_spares{agent="mock",state="ready"} 2');
    const pids = sparePids();
    pids.forEach((p) => groups.add(p));
    await app!.app.close();
    app = undefined;
    for (const pid of pids) await allGone(pid);
  });

  it('spares count against --max-sessions and make way for sessions', async () => {
    await warmApp({ warm: ['mock=2'], maxSessions: 2 });
    await untilReady(2);
    const res = await post(app!, '/v1/sessions/own', { agent: 'mock', env: { A: '1' } });
    expect(res.statusCode, res.body).toBe(200);
    await sessionPid('own');
    await waitFor(async () => (await warmOf('mock')).ready === 1, 5_000, 'one spare stopped');
    // A second create fits (it takes the last spare); a third is refused, as without a pool.
    expect((await post(app!, '/v1/sessions/second', { agent: 'mock' })).statusCode).toBe(200);
    await sessionPid('second');
    expect((await warmOf('mock')).ready).toBe(0);
    expect((await post(app!, '/v1/sessions/third', { agent: 'mock' })).statusCode).toBe(429);
  });

  it('with --agent-user, spares run as that user, like any agent', async () => {
    const base = mkdtempSync(join(tmpdir(), 'aw-warm-user-'));
    chmodSync(base, 0o755); // the agent user needs to enter its cwd
    app = await makeApp({ config: { warm: ['mock=1'], agentUser: 'nobody', noToken: true }, baseDir: base });
    await app.app.ready();
    await untilReady(1);
    const [spare] = sparePids();
    groups.add(spare!);
    const uid = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
    expect(uid(spare!)).toBe(65534);
    expect((await post(app, '/v1/sessions/as-nobody', { agent: 'mock' })).statusCode).toBe(200);
    expect(await sessionPid('as-nobody')).toBe(spare);
    expectNoUnparsed(await getEvents(app, 'as-nobody'));
  });

  it('--warm refuses an agent that keeps no spares', async () => {
    await expect(makeApp({ config: { warm: ['amp=1'] } })).rejects.toThrow(/amp.*keeps no warm spares/);
  });
});

describe('warm pool rules', () => {
  const registry = createRegistry({ maxLineChars: 1024, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 1, stderrTailLines: 1 });
  const defaults: SpareOptions = { cwd: '/work', agentMode: 'default', permissionMode: 'default', model: undefined, variant: undefined };

  it.each(['mock', 'claude', 'codex', 'opencode'] as const)('%s: a spare serves its own defaults only', (agent) => {
    const serves = registry[agent]!.spareServes!;
    expect(serves(defaults, { ...defaults })).toBe(true);
    expect(serves(defaults, { ...defaults, cwd: '/elsewhere' })).toBe(false);
    expect(serves(defaults, { ...defaults, model: 'other' })).toBe(false);
    expect(serves(defaults, { ...defaults, permissionMode: 'bypass' })).toBe(false);
  });

  it('a spare that cannot start is retried with a growing delay, not in a hot loop', async () => {
    let starts = 0;
    const failing = { ...registry.mock!, start: async () => (starts++, Promise.reject(new Error('boom'))) } as AgentDriver;
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const pool = new WarmPool({ registry: { mock: failing }, sizes: { mock: 1 }, baseDir: '/', logger, room: () => 10, backoffMs: 20, maxBackoffMs: 10_000 });
    pool.fill();
    await new Promise((r) => setTimeout(r, 700));
    await pool.close();
    // 20, 40, 80, 160, 320 ms of back-off fit in 700 ms: at most 6 starts, however fast start fails.
    expect(starts).toBeGreaterThanOrEqual(3);
    expect(starts).toBeLessThanOrEqual(6);
  });
});
