// The daemon-wide feed through inject (GET /v1/events; the SSE form is test/sockets/feed-sse.test.ts):
// every session's events in commit order under one cursor, byte for byte what the session's own
// poll serves, deletion entries, the filters, and --deleted-retention: a DELETEd session leaves
// the list at once but stays readable through the feed, across a restart and a re-created id,
// until its window passes; with 0 its events go at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { systemClock } from '../../src/util/deps.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, runTurn } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

interface Entry {
  cursor: number;
  event?: UniversalEvent;
  session_deleted?: { session_id: string; agent: string; last_sequence: number; reason: string; time: string };
}
interface Page {
  entries: Entry[];
  cursor: number;
  hasMore: boolean;
}

let dataDir: string;
const apps: App[] = [];
beforeEach(() => void (dataDir = mkdtempSync(join(tmpdir(), 'aw-feed-'))));
afterEach(async () => {
  for (const a of apps.splice(0)) await a.app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Real time: deletion windows are compared with the clock of the daemon that started later. */
async function daemon(config: Partial<Config> = {}): Promise<App> {
  const app = await makeApp({ config: { dataDir, ...config }, clock: systemClock });
  apps.push(app);
  return app;
}

async function stop(app: App): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.app.close();
}

async function feed(app: App, query = ''): Promise<Page> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/events?limit=10000${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

const eventsOf = (page: Page, id: string) => page.entries.filter((e) => e.event?.session_id === id).map((e) => e.event!);

describe('GET /v1/events', () => {
  it.each(['on', 'off'] as const)('serves every session in commit order under one cursor, as each session serves it (persist %s)', async (persist) => {
    const app = await daemon({ persist });
    await createMock(app, 'a');
    await createMock(app, 'b');
    await runTurn(app, 'a', 'echo one');
    await runTurn(app, 'b', 'echo two');
    const page = await feed(app);
    expect(page.entries.map((e) => e.cursor)).toEqual(page.entries.map((_, i) => i + 1));
    expect(page).toMatchObject({ cursor: page.entries.length, hasMore: false, lastCursor: page.entries.length });
    for (const id of ['a', 'b']) {
      const own = await getEvents(app, id);
      expectNoUnparsed(own);
      expect(eventsOf(page, id)).toEqual(own);
    }
    // Paging by cursor and limit reads the same entries.
    const first = await app.app.inject({ method: 'GET', url: '/v1/events?limit=3' });
    expect(first.json()).toMatchObject({ cursor: 3, hasMore: true });
    expect((await feed(app, '&after=3')).entries).toEqual(page.entries.slice(3));
    // A cursor past the end belongs to another feed.
    expectProblem(await app.app.inject({ method: 'GET', url: `/v1/events?after=${page.cursor + 1}` }), 400, 'offset_ahead');
  });

  it('filters by session, agent and type; include_raw adds the native payloads; the cursor moves past what was left out', async () => {
    const app = await daemon({ persist: 'off' });
    await createMock(app, 'a');
    await createMock(app, 'b');
    await runTurn(app, 'a', 'echo one');
    const all = await feed(app);
    const onlyB = await feed(app, '&session_id=b');
    expect(onlyB.entries.map((e) => e.event)).toEqual(await getEvents(app, 'b'));
    expect(onlyB.cursor).toBe(all.cursor);
    expect((await feed(app, '&sessionId=a')).entries.map((e) => e.event)).toEqual(await getEvents(app, 'a'));
    expect((await feed(app, '&agent=claude')).entries).toEqual([]);
    expect((await feed(app, '&agent=mock')).entries).toEqual(all.entries);
    const ends = await feed(app, '&types=turn.ended,session.started');
    expect(ends.entries.map((e) => `${e.event!.session_id}:${e.event!.type}`)).toEqual(['a:session.started', 'b:session.started', 'a:turn.ended']);
    const raw = await feed(app, '&session_id=a&include_raw=true');
    expect(raw.entries.map((e) => e.event)).toEqual(await getEvents(app, 'a', 0, true));
    expect(raw.entries.some((e) => e.event!.raw !== null)).toBe(true);
    expectProblem(await app.app.inject({ method: 'GET', url: '/v1/events?sesion_id=a' }), 400, 'invalid_request');
  });

  it('a DELETEd session leaves the list at once; the feed keeps its events, across a restart and a new session under its id', async () => {
    let app = await daemon();
    await createMock(app, 'demo');
    await runTurn(app, 'demo', 'echo first life');
    const old = await getEvents(app, 'demo');
    expect((await app.app.inject({ method: 'DELETE', url: '/v1/sessions/demo' })).statusCode).toBe(204);
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions' })).json()).toEqual({ sessions: [] });
    expectProblem(await app.app.inject({ method: 'GET', url: '/v1/sessions/demo' }), 404, 'session_not_found');
    const before = await feed(app);
    const deleted = before.entries.at(-1)!;
    expect(deleted.session_deleted).toMatchObject({ session_id: 'demo', agent: 'mock', reason: 'deleted', last_sequence: old.length + 1 });
    // DELETE terminated it first: its session.ended is its last event, then the deletion.
    const kept = eventsOf(before, 'demo');
    expect(kept.slice(0, old.length)).toEqual(old);
    expect(kept.map((e) => e.type).slice(old.length)).toEqual(['session.ended']);
    expectNoUnparsed(kept);
    await stop(app);

    app = await daemon();
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions' })).json()).toEqual({ sessions: [] });
    expect((await feed(app)).entries).toEqual(before.entries);
    await createMock(app, 'demo');
    await runTurn(app, 'demo', 'echo second life');
    const now = await feed(app);
    expect(now.entries.slice(0, before.entries.length)).toEqual(before.entries);
    const fresh = now.entries.slice(before.entries.length);
    expect(fresh[0]!.cursor).toBe(before.cursor + 1); // continues, never reused
    expect(fresh.map((e) => e.event)).toEqual(await getEvents(app, 'demo'));
    expect(fresh[0]!.event).toMatchObject({ type: 'session.started', sequence: 1 });

    // Past the window the old incarnation's events go; its deletion entry and the new one stay.
    apps.splice(apps.indexOf(app), 1);
    await app.app.close();
    app = await daemon({ deletedRetentionMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    app.sessions.prune();
    const after = await feed(app);
    expect(after.entries.map((e) => e.cursor)).toEqual([deleted.cursor, ...fresh.map((e) => e.cursor)]);
  });

  it('a session leaving the list any other way says so too: forgotten after the TTL (--persist off)', async () => {
    const app = await daemon({ persist: 'off', endedSessionTtlMs: 1 });
    await createMock(app, 'brief');
    expect((await app.app.inject({ method: 'POST', url: '/v1/sessions/brief/terminate' })).statusCode).toBe(204);
    await new Promise((r) => setTimeout(r, 5));
    app.sessions.sweep();
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions' })).json()).toEqual({ sessions: [] });
    const last = (await feed(app)).entries.at(-1)!;
    expect(last.session_deleted).toMatchObject({ session_id: 'brief', reason: 'forgotten' });
  });

  it('--deleted-retention 0 drops a deleted session\'s events at once; the feed still says it was deleted', async () => {
    const app = await daemon({ deletedRetentionMs: 0 });
    await createMock(app, 'gone');
    await createMock(app, 'kept');
    expect((await app.app.inject({ method: 'DELETE', url: '/v1/sessions/gone' })).statusCode).toBe(204);
    await stop(app);
    const again = await daemon({ deletedRetentionMs: 0 });
    const page = await feed(again);
    expect(page.entries.filter((e) => e.event).map((e) => e.event!.session_id)).toEqual(['kept']);
    expect(page.entries.filter((e) => e.session_deleted).map((e) => e.session_deleted!.session_id)).toEqual(['gone']);
  });
});
