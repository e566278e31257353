// The EventStore implementations on their own: the contract both keep (commit reporting, what a
// reader may see), and what only the SQLite store does (a real file: keyset pages, restart,
// deletes, retention, the data-dir lock, schema migrations, a full disk and its recovery).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteDatabase } from '../../../src/store/sqlite-binding.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore, SessionProgress, SessionRecord } from '../../../src/store/event-store.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { MIGRATIONS, migrate, SCHEMA_VERSION } from '../../../src/store/migrations.js';
import { SqliteStore, StoreInUseError } from '../../../src/store/sqlite-store.js';

const Database = sqliteDatabase();

const dirs: string[] = [];
const stores: EventStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aw-store-'));
  dirs.push(dir);
  return join(dir, 'agentwire.db');
}

function sqlite(path = tempDb(), retryMs = 20): SqliteStore {
  const store = new SqliteStore(path, { retryMs });
  stores.push(store);
  return store;
}

/** A deletion whose events go at once (--deleted-retention 0). */
const DROP = { time: '2026-01-01T00:00:00.000Z', lastSequence: 0, reason: 'deleted', keep: false } as const;

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const progress = (over: Partial<SessionProgress> = {}): SessionProgress => ({
  nativeSessionId: null,
  status: 'idle',
  snapshot: { turnId: null, turnCount: 0, permissions: [], questions: [], openItems: [] },
  updatedAt: '2026-01-01T00:00:00.000Z',
  endedAt: null,
  lastSequence: 0,
  ...over,
});

const record = (id: string, over: Partial<SessionRecord> = {}): SessionRecord => ({
  id,
  agent: 'mock',
  request: { agent: 'mock', cwd: '/tmp', agentMode: 'default', permissionMode: 'default' },
  createdAt: '2026-01-01T00:00:00.000Z',
  ...progress(),
  ...over,
});

const event = (sequence: number, raw: string | null = null) => ({ sequence, json: `{"sequence":${sequence},"raw":null}`, raw });

describe.each([
  ['memory', () => new MemoryStore()],
  ['sqlite', () => sqlite()],
] as const)('EventStore contract (%s)', (_name, make) => {
  it('reports every event as committed, in order, by the end of the tick at the latest', async () => {
    const store = make();
    const seen: number[] = [];
    store.attach('s1', (sequence) => seen.push(sequence));
    store.createSession(record('s1'));
    for (let i = 1; i <= 5; i++) store.appendEvent('s1', event(i));
    await tick();
    expect(seen.at(-1)).toBe(5);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(store.failure).toBeNull();
    expect(store.pendingEvents).toBe(0);
  });

  it('reads only what it keeps: everything when durable, nothing in memory', async () => {
    const store = make();
    store.createSession(record('s1'));
    for (let i = 1; i <= 3; i++) store.appendEvent('s1', event(i));
    await tick();
    const read = store.readEvents('s1', 0, 10).map((e) => e.sequence);
    expect(read).toEqual(store.durable ? [1, 2, 3] : []);
    expect(store.loadSessions().map((s) => s.id)).toEqual(store.durable ? ['s1'] : []);
  });
});

describe('SqliteStore', () => {
  it('commits the events of one tick in one transaction, then reports them', async () => {
    const store = sqlite();
    const seen: number[] = [];
    store.attach('s1', (sequence) => seen.push(sequence));
    store.createSession(record('s1'));
    for (let i = 1; i <= 1000; i++) store.appendEvent('s1', event(i));
    expect(seen).toEqual([]); // not visible before the commit
    expect(store.pendingEvents).toBe(1000);
    await tick();
    expect(seen).toEqual([1000]); // one commit for the tick
  });

  it('serves keyset pages with raw payloads, and a restart finds sessions and events as written', async () => {
    const path = tempDb();
    const store = sqlite(path);
    store.createSession(record('s1'));
    for (let i = 1; i <= 600; i++) store.appendEvent('s1', event(i, i % 2 ? `{"n":${i}}` : null));
    store.updateSession('s1', () => progress({ nativeSessionId: 'native-1', status: 'running', lastSequence: 600 }));
    store.flush();
    expect(store.readEvents('s1', 0, 256).map((e) => e.sequence)).toEqual(Array.from({ length: 256 }, (_, i) => i + 1));
    expect(store.readEvents('s1', 590, 256).map((e) => e.sequence)).toEqual([591, 592, 593, 594, 595, 596, 597, 598, 599, 600]);
    expect(store.readEvents('s1', 0, 1)[0]).toEqual({ sequence: 1, json: '{"sequence":1,"raw":null}', raw: '{"n":1}' });
    store.close();
    stores.pop();
    const again = sqlite(path);
    const [s1] = again.loadSessions();
    expect(s1).toMatchObject({ id: 's1', agent: 'mock', nativeSessionId: 'native-1', status: 'running', lastSequence: 600 });
    expect(s1!.request).toMatchObject({ agent: 'mock', cwd: '/tmp' });
    expect(again.readEvents('s1', 599, 10)).toEqual([{ sequence: 600, json: '{"sequence":600,"raw":null}', raw: null }]);
  });

  it('a record it cannot serialise is written without the part that failed and reported; the batch and every later write commit', async () => {
    const store = sqlite();
    const dropped: [string, string, string][] = [];
    store.onRecordDropped((...d) => dropped.push(d));
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const seen: string[] = [];
    for (const id of ['poison', 'other']) store.attach(id, (sequence) => seen.push(`${id}:${sequence}`));
    store.createSession(record('poison', { request: { agent: 'mock', cwd: '/tmp', _meta: deep } }));
    store.createSession(record('other'));
    store.appendEvent('poison', event(1));
    store.appendEvent('other', event(1));
    store.updateSession('other', () => progress({ lastSequence: 1, snapshot: { turnId: null, cyclic } as never }));
    await tick();
    await tick();
    expect(store.failure).toBeNull();
    expect(seen.sort()).toEqual(['other:1', 'poison:1']);
    expect(dropped.map(([id, part]) => `${id}:${part}`).sort()).toEqual(['other:snapshot', 'poison:request']);
    const poison = store.loadSessions().find((r) => r.id === 'poison')!;
    expect(poison.request).toMatchObject({ agent: 'mock', cwd: '/tmp' });
    expect(JSON.stringify(poison.request)).toContain('[not stored: nested more than 256 levels deep]');
    // The store keeps taking writes: another session, and more of both.
    store.createSession(record('later'));
    store.appendEvent('later', event(1));
    store.appendEvent('other', event(2));
    store.flush();
    expect(store.readEvents('later', 0, 10).map((e) => e.sequence)).toEqual([1]);
    expect(store.readEvents('other', 0, 10).map((e) => e.sequence)).toEqual([1, 2]);
  });

  it('deletes a session with its events', async () => {
    const store = sqlite();
    store.createSession(record('s1'));
    store.createSession(record('s2'));
    store.appendEvent('s1', event(1));
    store.appendEvent('s2', event(1));
    store.deleteSession('s1', DROP);
    expect(store.loadSessions().map((s) => s.id)).toEqual(['s2']);
    expect(store.readEvents('s1', 0, 10)).toEqual([]);
    expect(store.readEvents('s2', 0, 10)).toHaveLength(1);
  });

  it('deletes a big session\'s events in slices between turns of the event loop, resuming after a restart', async () => {
    const path = tempDb();
    const fill = (store: SqliteStore, id: string, n: number) => {
      store.createSession(record(id));
      for (let k = 1; k <= n; k++) store.appendEvent(id, event(k));
      store.flush();
    };
    const count = (id: string) => {
      const db = new Database(path);
      try {
        return [db.prepare('SELECT count(*) FROM events WHERE session_id = ?').pluck().get(id), db.prepare('SELECT count(*) FROM dropping').pluck().get()];
      } finally {
        db.close();
      }
    };
    let store = sqlite(path);
    fill(store, 'big', 20_000);
    fill(store, 'kept', 10);
    store.deleteSession('big', DROP);
    // Gone for every reader at once, though its rows are not deleted yet.
    expect(store.loadSessions().map((s) => s.id)).toEqual(['kept']);
    expect(store.readEvents('big', 0, 10)).toEqual([]);
    store.close();
    stores.pop();
    expect(count('big')).toEqual([20_000, 1]); // the drop was interrupted before its first slice

    store = sqlite(path);
    expect(store.loadSessions().map((s) => s.id)).toEqual(['kept']);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await store.drained();
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(3); // timers ran between the slices: the loop was never held for all of it
    expect(store.readEvents('kept', 0, 100)).toHaveLength(10);
    store.close();
    stores.pop();
    expect(count('big')).toEqual([0, 0]);
  });

  it('a session created with the id of one being dropped starts clean at sequence 1', async () => {
    const store = sqlite();
    const seen: number[] = [];
    store.createSession(record('s1'));
    for (let k = 1; k <= 5_000; k++) store.appendEvent('s1', event(k));
    store.flush();
    store.deleteSession('s1', DROP);
    store.attach('s1', (sequence) => seen.push(sequence));
    store.createSession(record('s1'));
    store.appendEvent('s1', { sequence: 1, json: '{"new":true,"raw":null}', raw: null });
    store.flush();
    expect(store.failure).toBeNull();
    expect(seen).toEqual([1]);
    expect(store.readEvents('s1', 0, 10_000)).toEqual([{ sequence: 1, json: '{"new":true,"raw":null}', raw: null }]);
    await store.drained();
    expect(store.readEvents('s1', 0, 10_000)).toHaveLength(1);
  });

  it('a second store on the same file is refused while the first holds it, and allowed after', () => {
    const path = tempDb();
    const first = sqlite(path);
    expect(() => new SqliteStore(path)).toThrow(StoreInUseError);
    expect(() => new SqliteStore(path)).toThrow(/in use by another agentwire daemon/);
    first.close();
    stores.pop();
    expect(() => sqlite(path)).not.toThrow();
  });

  it('retention drops ended sessions past the cutoff, then the oldest ended ones while over the size, and gives space back', async () => {
    const store = sqlite();
    const big = 'x'.repeat(2000);
    const ids = ['old', 'mid', 'new', 'live'];
    ids.forEach((id, i) => {
      store.createSession(record(id));
      for (let n = 1; n <= 500; n++) store.appendEvent(id, { sequence: n, json: `{"n":${n},"pad":"${big}","raw":null}`, raw: null });
      if (id !== 'live') store.updateSession(id, () => progress({ status: 'ended', endedAt: `2026-01-0${i + 1}T00:00:00.000Z`, lastSequence: 500 }));
    });
    store.flush();
    const full = store.sizeBytes();
    expect(store.prune({ endedBefore: '2026-01-02T00:00:00.000Z', deletedBefore: '2000-01-01T00:00:00.000Z', maxBytes: Number.MAX_SAFE_INTEGER })).toEqual(['old']);
    // Over the size: the oldest ended go first; a live session is never dropped for space.
    expect(store.prune({ endedBefore: '2000-01-01T00:00:00.000Z', deletedBefore: '2000-01-01T00:00:00.000Z', maxBytes: 1 })).toEqual(['mid', 'new']);
    expect(store.loadSessions().map((s) => s.id)).toEqual(['live']);
    await (store as SqliteStore).drained(); // their events go in slices; the space comes back after
    expect(store.sizeBytes()).toBeLessThan(full / 3);
    expect(statSync((store as SqliteStore).path).size + walSize((store as SqliteStore).path)).toBeLessThan(full);
  });

  it('a full disk: the commit fails whole, writes are held and reported, and all of them land once space returns', async () => {
    const store = sqlite();
    const failures: (string | null)[] = [];
    store.onHealth((f) => failures.push(f?.code ?? null));
    const seen: number[] = [];
    store.attach('s1', (sequence) => seen.push(sequence));
    store.createSession(record('s1'));
    store.appendEvent('s1', event(1));
    store.flush();
    const pages = store.pageCount();
    store.limitPages(pages);
    const pad = 'y'.repeat(4000);
    for (let n = 2; n <= 200; n++) store.appendEvent('s1', { sequence: n, json: `{"pad":"${pad}","raw":null}`, raw: null });
    store.flush();
    expect(store.failure?.code).toBe('SQLITE_FULL');
    expect(failures).toEqual(['SQLITE_FULL']);
    expect(seen).toEqual([1]); // nothing past the last commit is visible
    expect(store.pendingEvents).toBe(199);
    expect(store.readEvents('s1', 0, 1000)).toHaveLength(1); // the file holds exactly what was committed
    store.limitPages(1_000_000);
    await waitUntil(() => store.failure === null);
    expect(failures).toEqual(['SQLITE_FULL', null]);
    expect(seen.at(-1)).toBe(200);
    expect(store.readEvents('s1', 0, 1000).map((e) => e.sequence)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });
});

describe('schema migrations', () => {
  // The previous schema, and the first one (so every migration runs on real rows once).
  it.each([SCHEMA_VERSION - 1, 1])('opens a database written by schema %i and upgrades it in place, data intact', (from) => {
    const path = tempDb();
    const old = new Database(path);
    migrate(old, from);
    expect(old.pragma('user_version', { simple: true })).toBe(from);
    old.prepare(
      "INSERT INTO sessions (id, agent, request, native_session_id, status, snapshot, created_at, updated_at, ended_at, last_sequence) VALUES ('s1', 'mock', '{\"agent\":\"mock\"}', 'n1', 'ended', '{\"turnId\":null,\"turnCount\":1,\"permissions\":[],\"questions\":[]}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 2)",
    ).run();
    old.prepare("INSERT INTO events (session_id, sequence, json, raw) VALUES ('s1', 1, '{\"a\":1}', NULL), ('s1', 2, '{\"b\":2}', '[1]')").run();
    old.close();

    const store = sqlite(path);
    expect(store.loadSessions()).toMatchObject([{ id: 's1', nativeSessionId: 'n1', status: 'ended', lastSequence: 2 }]);
    expect(store.readEvents('s1', 0, 10).map((e) => e.json)).toEqual(['{"a":1}', '{"b":2}']);
    store.close();
    stores.pop();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    // Version 2 backfilled each session's event bytes from its rows (a row written by version 2
    // itself starts at the column's default).
    const bytes = from < 2 ? '{"a":1}'.length + '{"b":2}'.length + '[1]'.length : 0;
    expect(check.prepare("SELECT event_bytes FROM sessions WHERE id = 's1'").pluck().get()).toBe(bytes);
    // Version 3: the table of sessions being dropped, empty.
    expect(check.prepare('SELECT count(*) FROM dropping').pluck().get()).toBe(0);
    check.close();
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('refuses a database from a newer agentwire', () => {
    const path = tempDb();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => new SqliteStore(path)).toThrow(/newer than this daemon's/);
  });
});

function walSize(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
