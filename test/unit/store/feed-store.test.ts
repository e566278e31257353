// The stores' side of the daemon-wide feed: cursors given at staging and reported per commit in
// order, deletion entries after a session's last event, keyset pages merged from events and
// deletions, a cursor never given twice (also after the entries that had the highest ones were
// dropped, across a reopen), a deleted session kept, renamed when its id is used again, then
// pruned; and the migration that gives a v3 store's events their cursors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FeedRecord, SessionRecord } from '../../../src/store/event-store.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { migrate } from '../../../src/store/migrations.js';
import { sqliteDatabase } from '../../../src/store/sqlite-binding.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';

const dirs: string[] = [];
const open: SqliteStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aw-feed-store-'));
  dirs.push(dir);
  return join(dir, 'agentwire.db');
}

function sqlite(path: string): SqliteStore {
  const store = new SqliteStore(path);
  open.push(store);
  return store;
}

function reopen(store: SqliteStore): SqliteStore {
  store.close();
  open.splice(open.indexOf(store), 1);
  return sqlite(store.path);
}

const record = (id: string, agent = 'mock'): SessionRecord => ({
  id, agent, request: { agent }, createdAt: '2026-01-01T00:00:00.000Z', nativeSessionId: null, status: 'idle',
  snapshot: { turnId: null, turnCount: 0, permissions: [], questions: [], openItems: [] },
  updatedAt: '2026-01-01T00:00:00.000Z', endedAt: null, lastSequence: 0,
});
const ev = (id: string, n: number) => ({ sequence: n, json: `{"session_id":"${id}","sequence":${n},"type":"item.delta","raw":null}`, raw: null });
const del = (keep: boolean, time = '2026-01-02T00:00:00.000Z') => ({ time, lastSequence: 2, reason: 'deleted' as const, keep });
const brief = (r: FeedRecord) => `${r.cursor}:${r.sessionId}:${r.deleted ? 'deleted' : JSON.parse(r.json).sequence}`;

describe('the feed in the stores', () => {
  it('the memory store gives cursors at once and hands them on once per tick, deletions after the last event', async () => {
    const store = new MemoryStore();
    const seen: FeedRecord[] = [];
    store.onFeed((records) => seen.push(...records));
    store.createSession(record('a'));
    store.appendEvent('a', ev('a', 1));
    store.appendEvent('a', ev('a', 2));
    store.deleteSession('a', del(false));
    expect(seen).toEqual([]);
    await new Promise((r) => process.nextTick(r));
    expect(seen.map(brief)).toEqual(['1:a:1', '2:a:2', '3:a:deleted']);
    expect(store.feedHead).toBe(3);
    expect(JSON.parse(seen[2]!.json)).toEqual({ session_id: 'a', agent: 'mock', time: '2026-01-02T00:00:00.000Z', last_sequence: 2, reason: 'deleted' });
  });

  it('SQLite reports each commit in cursor order, pages merge events with deletions, and a cursor is never given twice', () => {
    let store = sqlite(tempDb());
    const seen: FeedRecord[] = [];
    store.onFeed((records) => seen.push(...records));
    store.createSession(record('a'));
    store.createSession(record('b', 'claude'));
    store.appendEvent('a', ev('a', 1));
    store.appendEvent('b', ev('b', 1));
    store.appendEvent('a', ev('a', 2));
    expect(seen).toEqual([]); // nothing is reported before the commit
    store.flush();
    store.deleteSession('a', del(true));
    store.appendEvent('b', ev('b', 2));
    store.flush();
    const expected = ['1:a:1', '2:b:1', '3:a:2', '4:a:deleted', '5:b:2'];
    expect(seen.map(brief)).toEqual(expected);
    expect(seen.map((r) => r.agent)).toEqual(['mock', 'claude', 'mock', 'mock', 'claude']);
    expect(store.readFeed(0, 100).map(brief)).toEqual(expected);
    expect(store.readFeed(2, 2).map(brief)).toEqual(expected.slice(2, 4));
    expect(store.loadSessions().map((s) => s.id)).toEqual(['b']); // the deleted one is not listed

    // The entries with the highest cursors go; a reopened store still continues after them.
    store.deleteSession('b', del(false));
    store.prune({ endedBefore: '2000-01-01T00:00:00.000Z', deletedBefore: '2030-01-01T00:00:00.000Z', maxBytes: Number.MAX_SAFE_INTEGER });
    store = reopen(store);
    expect(store.feedHead).toBe(6);
    expect(store.readFeed(0, 100).map(brief)).toEqual(['4:a:deleted', '6:b:deleted']);
    store.createSession(record('c'));
    store.appendEvent('c', ev('c', 1));
    store.flush();
    expect(store.readFeed(6, 10).map(brief)).toEqual(['7:c:1']);
  });

  it('retention dropping a listed session announces it in the feed, after its last event', () => {
    const store = sqlite(tempDb());
    store.createSession(record('old'));
    store.appendEvent('old', ev('old', 1));
    store.updateSession('old', () => ({ ...record('old'), status: 'ended', endedAt: '2026-01-01T00:00:00.000Z', lastSequence: 1 }));
    store.flush();
    expect(store.prune({ endedBefore: '2026-02-01T00:00:00.000Z', deletedBefore: '2000-01-01T00:00:00.000Z', maxBytes: Number.MAX_SAFE_INTEGER })).toEqual(['old']);
    store.flush();
    const [mark] = store.readFeed(0, 10).filter((r) => r.deleted);
    expect(JSON.parse(mark!.json)).toMatchObject({ session_id: 'old', agent: 'mock', last_sequence: 1, reason: 'retention' });
    expect(mark!.cursor).toBe(2);
  });

  it('a deleted session kept for the feed is moved aside when its id is used again, and both are served', () => {
    let store = sqlite(tempDb());
    store.createSession(record('demo'));
    store.appendEvent('demo', ev('demo', 1));
    store.deleteSession('demo', del(true));
    store.createSession(record('demo'));
    store.appendEvent('demo', ev('demo', 1));
    store.flush();
    expect(store.readEvents('demo', 0, 10)).toHaveLength(1);
    store = reopen(store);
    expect(store.readFeed(0, 10).map(brief)).toEqual(['1:demo:1', '2:demo:deleted', '3:demo:1']);
    expect(store.loadSessions().map((s) => s.id)).toEqual(['demo']);
    // Its window passed: the old session's events go, the new session stays.
    store.prune({ endedBefore: '2000-01-01T00:00:00.000Z', deletedBefore: '2030-01-01T00:00:00.000Z', maxBytes: Number.MAX_SAFE_INTEGER });
    expect(store.readFeed(0, 10).map(brief)).toEqual(['2:demo:deleted', '3:demo:1']);
  });

  it('migrating a v3 store gives its events cursors in session creation order', () => {
    const path = tempDb();
    const db = new (sqliteDatabase())(path);
    migrate(db, 3);
    const insert = db.prepare("INSERT INTO sessions (id, agent, request, status, snapshot, created_at, updated_at) VALUES (?, 'mock', '{}', 'idle', '{}', ?, ?)");
    insert.run('later', '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z');
    insert.run('first', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
    for (const [id, n] of [['later', 1], ['first', 1], ['first', 2]] as const) {
      db.prepare('INSERT INTO events (session_id, sequence, json, raw) VALUES (?, ?, ?, NULL)').run(id, n, ev(id, n).json);
    }
    db.close();
    const store = sqlite(path);
    expect(store.readFeed(0, 10).map(brief)).toEqual(['1:first:1', '2:first:2', '3:later:1']);
    expect(store.feedHead).toBe(3);
  });
});
