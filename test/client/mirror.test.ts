// The transcript mirror against a real PostgreSQL server and real durable daemons: three daemons
// flooded while the `agentwire-mirror` command and one daemon are SIGKILLed and started again,
// after which PostgreSQL holds exactly the daemons' (session, sequence, event_id), no more, no
// fewer; and the smaller promises: migrations run twice, resuming the daemon's feed at the cursor
// stored with the last batch, sessions created (and 50 short ones deleted) while the mirror was
// away, a daemon down when the mirror starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientSource } from '../../client/src/mirror/client-source.js';
import { BatchQueue } from '../../client/src/mirror/batch-queue.js';
import { parseCli, tokenVariable, UsageError } from '../../client/src/mirror/cli.js';
import type { EventRow } from '../../client/src/mirror/mirror-store.js';
import { migrate, mirror, type Mirror } from '../../client/src/mirror/index.js';
import type { DaemonSource, DaemonTarget } from '../../client/src/mirror/types.js';
import { waitFor } from '../support/helpers.js';
import { startPostgres, type Postgres } from '../support/postgres.js';
import { buildDaemonInstall, buildMirrorCommand, FleetDaemon, MirrorProcess, takeFleet, storedCount, storedKeys } from '../support/mirror-fleet.js';

let server: Postgres;
let command: { bin: string; remove: () => void };
let install: { dir: string; remove: () => void };
let mockHome: string;
let databases = 0;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  // The server first: without its binaries the file fails at once, saying what to install.
  server = await startPostgres();
  mockHome = mkdtempSync(join(tmpdir(), 'aw-mirror-mock-'));
  [command, install] = await Promise.all([buildMirrorCommand(), buildDaemonInstall()]);
}, 60_000);

afterAll(async () => {
  install?.remove();
  command?.remove();
  await server?.stop();
  if (mockHome) rmSync(mockHome, { recursive: true, force: true });
});

afterEach(async () => {
  const kill = takeFleet();
  try {
    for (const c of cleanups.splice(0).reverse()) await c();
  } finally {
    kill();
  }
}, 60_000);

/** A fresh database, and a pool on it closed after the test. */
async function database(): Promise<{ url: string; db: pg.Pool }> {
  const url = await server.createDatabase(`mirror_${++databases}`);
  const db = new pg.Pool({ connectionString: url, max: 2 });
  cleanups.push(() => db.end());
  return { url, db };
}

async function fleetDaemon(id: string): Promise<FleetDaemon> {
  const d = await FleetDaemon.create(install.dir, id, mockHome);
  cleanups.push(() => d.remove());
  return d;
}

const target = (d: FleetDaemon): DaemonTarget => ({ id: d.id, baseUrl: d.baseUrl, token: d.token });

/** mirror() in this process, stopped after the test. */
async function startMirror(url: string, daemons: DaemonTarget[], source?: (d: DaemonTarget) => DaemonSource): Promise<Mirror> {
  // Warnings are printed: when a test fails, they say what the mirror saw.
  const log = (e: { level: string }) => e.level !== 'info' && console.warn(JSON.stringify(e));
  const m = await mirror({ connectionString: url, daemons, maxBackoffMs: 500, log, ...(source ? { source } : {}) });
  cleanups.push(() => m.stop());
  return m;
}

/** Until PostgreSQL holds as many events as the daemons serve; then the exact comparison. */
async function expectMirrored(db: pg.Pool, daemons: FleetDaemon[], timeoutMs = 30_000): Promise<number> {
  for (const d of daemons) await d.settled();
  const expected = (await Promise.all(daemons.map((d) => d.eventKeys()))).flat().sort();
  await waitFor(async () => (await storedCount(db)) >= expected.length, timeoutMs, `${expected.length} events in PostgreSQL`);
  expect(await storedKeys(db)).toEqual(expected);
  return expected.length;
}

async function turn(d: FleetDaemon, session: string, message: string): Promise<void> {
  await d.call('POST', `/v1/sessions/${session}/messages`, { message });
  await d.settled();
}

describe('mirror: three daemons flooded, the mirror and a daemon SIGKILLed mid-flood', () => {
  it('PostgreSQL ends up with exactly the daemons\' (session, sequence, event_id): nothing lost, nothing twice', async () => {
    const { url, db } = await database();
    const fleet = [await fleetDaemon('a'), await fleetDaemon('b'), await fleetDaemon('c')];
    const [, b, c] = fleet as [FleetDaemon, FleetDaemon, FleetDaemon];
    const FLOODED = 4;
    const PER_TURN = 6000;
    // History from before the mirror starts: small sessions with a finished turn each.
    for (const d of fleet) {
      for (let i = 1; i <= 2; i++) await d.call('POST', `/v1/sessions/t${i}`, { agent: 'mock' });
      for (let i = 1; i <= FLOODED; i++) await d.call('POST', `/v1/sessions/f${i}`, { agent: 'mock' });
      await Promise.all([1, 2].map((i) => d.call('POST', `/v1/sessions/t${i}/messages`, { message: 'tool' })));
    }
    // Tokens from the environment only, by the documented scheme.
    const env = Object.fromEntries(fleet.map((d) => [`AGENTWIRE_MIRROR_TOKEN_${d.id.toUpperCase()}`, d.token]));
    const args = ['--database', url, ...fleet.flatMap((d) => ['--daemon', `${d.id}=${d.baseUrl}`]), '--stats-interval-ms', '1000'];
    const first = new MirrorProcess(command.bin, args, env);
    cleanups.push(() => first.kill());
    await first.started();

    // Paced floods (600 events/s per session, 10 s each), so that the kills land mid-flood: the
    // kill waits for 3,600 rows in PostgreSQL, which a loaded CI machine once took over 5 s to
    // reach (floods of 5 s had ended by then, and nothing was cut).
    for (const d of fleet) for (let i = 1; i <= FLOODED; i++) await d.call('POST', `/v1/sessions/f${i}/messages`, { message: `flood ${PER_TURN} paced 600` });
    await waitFor(async () => (await storedCount(db)) >= 3600, 30_000, 'the first 3,600 flooded events in PostgreSQL');
    first.kill('SIGKILL');
    await b.kill();
    await first.exited;

    // While both are down: the other daemons go on flooding and a session is created.
    await c.call('POST', '/v1/sessions/late', { agent: 'mock' });
    await c.call('POST', '/v1/sessions/late/messages', { message: 'tool' });
    await b.restart();
    // b closed the turns the kill cut short (so the kill did land mid-flood), and floods again.
    const cut = await Promise.all([1, 2, 3, 4].map(async (i) => (await b.events(`f${i}`)).some((e) => e.type === 'error' && (e.data as { code?: string }).code === 'daemon_restarted')));
    expect(cut.some(Boolean)).toBe(true);
    for (let i = 1; i <= FLOODED; i++) await b.call('POST', `/v1/sessions/f${i}/messages`, { message: 'flood 2000' });

    const second = new MirrorProcess(command.bin, args, env);
    cleanups.push(() => second.kill());
    await second.started();
    const total = await expectMirrored(db, fleet, 60_000);
    // a's and c's floods ran to the end; b's were cut short by the kill, then flooded again.
    expect(total).toBeGreaterThan(2 * FLOODED * PER_TURN);
    const stats = second.logs.filter((l) => l.msg === 'stats').at(-1) as { daemons: { id: string; up: boolean }[] } | undefined;
    expect(stats?.daemons.map((d) => d.up)).toEqual([true, true, true]);

    second.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.logs.some((l) => l.msg === 'mirror stopped')).toBe(true);
    expect(await storedKeys(db)).toHaveLength(total);
  }, 120_000);
});

describe('mirror: schema', () => {
  it('migrations are versioned and idempotent: a second run (and a second mirror) changes nothing', async () => {
    const { url, db } = await database();
    expect(await migrate(db)).toEqual([1, 2]);
    expect(await migrate(db)).toEqual([]);
    const { rows } = await db.query('SELECT version, name FROM agentwire_mirror_migrations ORDER BY version');
    expect(rows).toEqual([{ version: 1, name: 'sessions and events' }, { version: 2, name: 'the feed cursor per daemon, deleted sessions' }]);
    const d = await fleetDaemon('schema');
    await d.call('POST', '/v1/sessions/s1', { agent: 'mock' });
    await turn(d, 's1', 'tool');
    const m = await startMirror(url, [target(d)]);
    await expectMirrored(db, [d]);
    await m.stop();
    const again = await startMirror(url, [target(d)]);
    await waitFor(() => again.stats().daemons[0]!.up, 10_000, 'the second mirror to reach the daemon');
    expect(await migrate(db)).toEqual([]);
    const session = (await db.query('SELECT agent, status, info FROM agentwire_sessions WHERE session_id = $1', ['s1'])).rows[0];
    expect(session).toMatchObject({ agent: 'mock', status: 'idle', info: { sessionId: 's1', agent: 'mock' } });
  });
});

describe('mirror: resuming', () => {
  it('resumes the feed after the cursor stored with the last batch, and picks up sessions created while it was away', async () => {
    const { url, db } = await database();
    const d = await fleetDaemon('resume');
    await d.call('POST', '/v1/sessions/old', { agent: 'mock' });
    await turn(d, 'old', 'flood 500');
    const first = await startMirror(url, [target(d)]);
    const before = await expectMirrored(db, [d]);
    await first.stop();

    await turn(d, 'old', 'flood 300');
    await d.call('POST', '/v1/sessions/new', { agent: 'mock' });
    await turn(d, 'new', 'tool');
    await d.call('POST', '/v1/sessions/new/terminate');

    const stored = Number((await db.query('SELECT cursor FROM agentwire_mirror_cursors')).rows[0].cursor);
    expect(stored).toBeGreaterThanOrEqual(before);
    const asked: number[] = [];
    const spy = (t: DaemonTarget): DaemonSource => {
      const real = clientSource(t);
      return { check: (s) => real.check(s), feed: (after, s) => (asked.push(after), real.feed(after, s)) };
    };
    const second = await startMirror(url, [target(d)], spy);
    const total = await expectMirrored(db, [d]);
    expect(asked[0]).toBe(stored); // one feed, from where the first mirror stopped
    // Nothing was written twice: the second mirror stored exactly what the first had not.
    expect(second.stats().eventsWritten).toBe(total - before);
    const rows = (await db.query('SELECT session_id, status FROM agentwire_sessions ORDER BY session_id')).rows;
    expect(rows).toEqual([{ session_id: 'new', status: 'ended' }, { session_id: 'old', status: 'idle' }]);
  });

  it('a daemon down when the mirror starts is retried with backoff and never holds up the others', async () => {
    const { url, db } = await database();
    const up = await fleetDaemon('up');
    const down = await fleetDaemon('down');
    await down.kill();
    await up.call('POST', '/v1/sessions/a', { agent: 'mock' });
    const m = await startMirror(url, [target(down), target(up)]);
    await turn(up, 'a', 'flood 200');
    await expectMirrored(db, [up]);
    const stats = m.stats().daemons.find((s) => s.id === 'down')!;
    expect(stats).toMatchObject({ up: false, eventsWritten: 0 });
    expect(stats.lastError).toBeTruthy();

    await down.restart();
    await down.call('POST', '/v1/sessions/b', { agent: 'mock' });
    await turn(down, 'b', 'flood 200');
    await expectMirrored(db, [up, down]);
    expect(m.stats().daemons.every((s) => s.up)).toBe(true);
  });
});

describe('mirror: sessions that lived and died while it was stopped', () => {
  it('50 short sessions created, run and deleted while the mirror is stopped are in PostgreSQL with every event, exactly once', async () => {
    const { url, db } = await database();
    const d = await fleetDaemon('short');
    const first = await startMirror(url, [target(d)]);
    await d.call('POST', '/v1/sessions/before', { agent: 'mock' });
    await waitFor(async () => (await storedCount(db)) > 0, 10_000, 'the first session in PostgreSQL');
    await first.stop();

    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const { sessionId } = (await d.call('POST', '/v1/sessions', { agent: 'mock' })) as { sessionId: string };
      ids.push(sessionId);
      await turn(d, sessionId, `echo short ${i}`);
      await d.call('DELETE', `/v1/sessions/${sessionId}`);
    }
    // The README's way: an id deleted and used again while the mirror is away.
    for (let i = 0; i < 2; i++) {
      await d.call('POST', '/v1/sessions/demo', { agent: 'mock' });
      await turn(d, 'demo', `echo demo ${i}`);
      await d.call('DELETE', '/v1/sessions/demo');
    }
    const truth = await feedKeys(d);
    const m = await startMirror(url, [target(d)]);
    await waitFor(async () => (await storedCount(db)) >= truth.events.length, 30_000, `${truth.events.length} events in PostgreSQL`);
    await waitFor(() => m.stats().daemons[0]!.cursor === truth.last, 10_000, 'the last cursor stored');
    // Every event of every session, each once: the deleted 'demo's moved aside under 'demo/<cursor>'.
    const stored = (await db.query<{ k: string }>(`SELECT split_part(session_id, '/', 1) || '/' || sequence || '/' || event_id AS k FROM agentwire_events`)).rows.map((r) => r.k).sort();
    expect(stored).toEqual(truth.events);
    const sessions = (await db.query<{ session_id: string; agent: string; deleted: boolean }>('SELECT session_id, agent, deleted_at IS NOT NULL AS deleted FROM agentwire_sessions')).rows;
    for (const id of ids) expect(sessions.find((s) => s.session_id === id), id).toMatchObject({ agent: 'mock', deleted: true });
    expect(sessions.filter((s) => s.session_id.startsWith('demo')).map((s) => s.deleted)).toEqual([true, true]);
    expect(m.stats().daemons[0]).toMatchObject({ sessions: 1, eventsMissed: 0 }); // 'before' is the only one left
    const unparsed = await db.query("SELECT 1 FROM agentwire_events WHERE type = 'agent.unparsed'");
    expect(unparsed.rowCount).toBe(0);
  }, 120_000);
});

/** The daemon's whole feed: its events' keys (session/sequence/event_id, sorted) and its last cursor. */
async function feedKeys(d: FleetDaemon): Promise<{ events: string[]; last: number }> {
  const events: string[] = [];
  let after = 0;
  for (;;) {
    const page = (await d.call('GET', `/v1/events?after=${after}&limit=10000`)) as { entries: { cursor: number; event?: { session_id: string; sequence: number; event_id: string } }[]; cursor: number; hasMore: boolean };
    for (const e of page.entries) if (e.event) events.push(`${e.event.session_id}/${e.event.sequence}/${e.event.event_id}`);
    after = page.cursor;
    if (!page.hasMore) return { events: events.sort(), last: after };
  }
}

describe('agentwire-mirror: arguments', () => {
  it('takes tokens from the environment only, per daemon or for all', () => {
    const env = { AGENTWIRE_MIRROR_TOKEN_SANDBOX_1: 'one', AGENTWIRE_MIRROR_TOKEN: 'all' };
    const config = parseCli(['--database', 'postgres://m@db/x', '--daemon', 'sandbox-1=http://10.0.0.1:2468/', '--daemon', 'b=http://10.0.0.2:2468'], env);
    expect(tokenVariable('sandbox-1')).toBe('AGENTWIRE_MIRROR_TOKEN_SANDBOX_1');
    expect(config.daemons).toEqual([
      { id: 'sandbox-1', baseUrl: 'http://10.0.0.1:2468', token: 'one' },
      { id: 'b', baseUrl: 'http://10.0.0.2:2468', token: 'all' },
    ]);
    expect(config).toMatchObject({ connectionString: 'postgres://m@db/x', batchSize: 2000 });
    expect(parseCli(['--daemon', 'a=http://h:1'], { AGENTWIRE_MIRROR_DATABASE_URL: 'postgres://e/x' }).connectionString).toBe('postgres://e/x');
    expect(() => parseCli(['--database', 'postgres://m@db/x', '--daemon', 'a=http://h:1', '--token', 'secret'], {})).toThrow(UsageError);
    expect(() => parseCli(['--daemon', 'a=http://h:1'], {})).toThrow(/no database/);
    expect(() => parseCli(['--database', 'postgres://m@db/x', '--daemon', 'no-url'], {})).toThrow(/<id>=<http/);
  });
});

describe('mirror: the batch queue', () => {
  it('stops its readers while full, writes batches in order and retries a failed one', async () => {
    const written: number[][] = [];
    let release: (() => void) | undefined;
    let failOnce = true;
    const queue = new BatchQueue({
      batchSize: 3,
      maxDelayMs: 5,
      capacity: 6,
      capacityBytes: 1 << 20,
      async write(rows) {
        await new Promise<void>((r) => (release = r)); // the database is slow: each batch waits to be let through
        if (failOnce) {
          failOnce = false;
          throw new Error('connection reset');
        }
        written.push(rows.map((r) => r.sequence));
      },
      onError: () => {},
    });
    const row = (sequence: number): EventRow => ({ cursor: sequence, sessionId: 's', sequence, type: 'item.delta', time: '2026-01-01T00:00:00.000Z', json: '{}' });
    const pushed: (Promise<void> | void)[] = [];
    for (let i = 1; i <= 6; i++) pushed.push(queue.push(row(i)));
    expect(pushed.slice(0, 5).every((p) => p === undefined)).toBe(true);
    let resumed = false;
    void Promise.resolve(pushed[5]).then(() => (resumed = true));
    await waitFor(() => release, 1000, 'the first write');
    await new Promise((r) => setTimeout(r, 20));
    expect(resumed).toBe(false); // six held (three being written): the reader waits
    // Let the writes through one by one: batch 1 fails and is retried, then batch 2.
    for (let i = 0; i < 3; i++) {
      const r = await waitFor(() => release, 5000, 'the next write');
      release = undefined;
      r();
    }
    await waitFor(() => written.length === 2 && resumed, 5000, 'both batches, and the reader let go');
    expect(written).toEqual([[1, 2, 3], [4, 5, 6]]);
    await queue.close(1000);
  });
});
