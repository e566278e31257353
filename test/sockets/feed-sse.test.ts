// The daemon-wide feed over real sockets (GET /v1/events/sse): frames carry the cursor as `id:`
// and one `data:` line with the entry; replay then live without gap or duplicate; Last-Event-ID
// resumes exactly, also from the store behind the feed's window; a paused reader is closed at the
// lag limit with where to resume; filters; ?token= for EventSource.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';
import { abortAllStreams, openSse, portOf, type SseClient } from '../support/sse-client.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Entry {
  cursor: number;
  event?: UniversalEvent;
  session_deleted?: { session_id: string };
}

let a: App | undefined;
const dirs: string[] = [];
afterEach(async () => {
  abortAllStreams();
  await a?.app.close();
  a = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function listening(config: Partial<Config> = {}): Promise<{ app: App; port: number }> {
  const app = await makeApp({ config: { sseKeepAliveMs: 50, ...config } });
  a = app;
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: portOf(app.app) };
}

const feed = (port: number, query = '', headers: Record<string, string> = {}) => openSse({ port, path: `/v1/events/sse${query}`, headers });
const entries = (client: SseClient) => client.events<Entry>();
const cursors = (client: SseClient) => entries(client).map((e) => e.cursor);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

function expectWellFormed(client: SseClient): void {
  for (const frame of client.frames) {
    expect(frame.fields.map((f) => f.name)).toEqual(['id', 'data']);
    expect(frame.id).toBe(String((JSON.parse(frame.data) as Entry).cursor));
  }
}

describe('GET /v1/events/sse', () => {
  it('replays every session then streams live, each entry once, in cursor order; a deletion is an entry', async () => {
    const { app, port } = await listening();
    await createMock(app, 'a');
    await runTurn(app, 'a', 'echo before');
    const client = await feed(port);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    await createMock(app, 'b');
    await runTurn(app, 'b', 'echo live');
    await post(app, '/v1/sessions/a/terminate');
    expect((await app.app.inject({ method: 'DELETE', url: '/v1/sessions/a' })).statusCode).toBe(204);
    await client.until(() => client.lastId === app.sessions.feed.lastCursor, 5000, 'the deletion');
    expect(cursors(client)).toEqual(range(1, app.sessions.feed.lastCursor));
    expectWellFormed(client);
    expect(entries(client).at(-1)!.session_deleted).toMatchObject({ session_id: 'a' });
    const b = entries(client).filter((e) => e.event?.session_id === 'b').map((e) => e.event!);
    expect(b).toEqual(await getEvents(app, 'b'));
    expectNoUnparsed(b);
  });

  it('Last-Event-ID resumes exactly, from the store behind the window; filters and ?token= apply', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aw-feed-sse-'));
    dirs.push(dataDir);
    // A window of 100 entries: a 3000-delta turn puts most of the feed behind it, in the store.
    const { app, port } = await listening({ dataDir, maxEventsPerSession: 100, token: 'feed-test-token-0123456789' });
    const auth = { authorization: 'Bearer feed-test-token-0123456789' };
    await app.app.inject({ method: 'POST', url: '/v1/sessions/s1', payload: { agent: 'mock' }, headers: auth });
    await app.app.inject({ method: 'POST', url: '/v1/sessions/s2', payload: { agent: 'mock' }, headers: auth });
    await app.app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { message: 'flood 3000' }, headers: auth });
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood');
    const last = app.sessions.feed.lastCursor;

    expect((await feed(port)).status).toBe(401);
    const first = await feed(port, '?after=10&token=feed-test-token-0123456789');
    await first.until(() => first.lastId === last, 10_000, 'the backlog');
    expect(cursors(first)).toEqual(range(11, last));
    const resumed = await feed(port, '', { ...auth, 'last-event-id': '1500' });
    await resumed.until(() => resumed.lastId === last, 10_000, 'the rest');
    expect(cursors(resumed)).toEqual(range(1501, last));

    const only = await feed(port, '?session_id=s2&types=session.started,turn.ended', auth);
    await app.app.inject({ method: 'POST', url: '/v1/sessions/s2/messages', payload: { message: 'echo hi' }, headers: auth });
    await only.until(() => only.events<Entry>().length === 2, 5000, "s2's start and turn end");
    expect(entries(only).map((e) => `${e.event!.session_id}:${e.event!.type}`)).toEqual(['s2:session.started', 's2:turn.ended']);
  });

  it('closes a paused reader that falls behind with where to resume, and the resume is exact', async () => {
    const { app, port } = await listening({ feedMaxLag: 50, subscriberLagGraceMs: 100 });
    await createMock(app, 's1');
    const paused = await feed(port);
    await paused.until(() => paused.lastId === app.sessions.feed.lastCursor, 5000, 'the backlog');
    paused.pause();
    expect((await post(app, '/v1/sessions/s1/messages', { message: 'flood 20000' })).statusCode).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood');
    await waitFor(() => app.sessions.feed.subscribers === 0, 5000, 'the paused reader to be closed');
    const last = app.sessions.feed.lastCursor;
    paused.resume();
    await paused.ended(5000);
    const closing = paused.entries.at(-1);
    const comment = closing?.kind === 'comment' ? closing.text : '';
    const resumeAt = paused.lastId;
    expect(comment).toMatch(/^closed: subscriber fell \d+ entries behind \(limit 50\)/);
    expect(comment).toContain(`Last-Event-ID: ${resumeAt}`);
    expect(cursors(paused)).toEqual(range(1, resumeAt));
    const rest = await feed(port, '', { 'last-event-id': String(resumeAt) });
    await rest.until(() => rest.lastId === last, 10_000, `entry ${last}`);
    expect([...cursors(paused), ...cursors(rest)]).toEqual(range(1, last));
    expectNoUnparsed(await getEvents(app, 's1'));
  });
});
