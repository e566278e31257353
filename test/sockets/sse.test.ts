// SSE over real sockets: the wire format, replay-then-live without gap or duplicate, resuming,
// keep-alive, raw payloads, slow consumers (real TCP backpressure), eviction and the turn stream.
// inject() cannot show any of this: it buffers whole bodies and has no flow control.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';
import { abortAllStreams, openSse, openStream, portOf, type SseClient } from '../support/sse-client.js';

let a: App | undefined;

afterEach(async () => {
  // app.close() waits for open connections, and an SSE stream never ends by itself.
  abortAllStreams();
  await a?.app.close();
  a = undefined;
});

async function listening(config: Partial<Config> = {}): Promise<{ app: App; port: number }> {
  const app = await makeApp({ config: { sseKeepAliveMs: 50, ...config } });
  a = app;
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: portOf(app.app) };
}

function sse(port: number, id: string, query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  return openSse({ port, path: `/v1/sessions/${id}/events/sse${query}`, headers });
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

function sequences(events: UniversalEvent[]): number[] {
  return events.map((e) => e.sequence);
}

function lastSequence(app: App, id: string): number {
  return app.sessions.get(id).log.lastSequence;
}

/** Frames must be exactly `id:` then one `data:`; anything else would change what EventSource sees. */
function expectWellFormed(client: SseClient): void {
  for (const frame of client.frames) {
    expect(frame.fields.map((f) => f.name)).toEqual(['id', 'data']);
    expect(frame.id).toBe(String((JSON.parse(frame.data) as UniversalEvent).sequence));
  }
}

describe('GET /v1/sessions/:id/events/sse', () => {
  it('sends SSE headers, one retry line first, and one id+data frame per event, replay then live', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    await runTurn(app, 's1', 'Reply with exactly the single word OK.');
    const backlog = await getEvents(app, 's1');

    const client = await sse(port, 's1');
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['cache-control']).toContain('no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.headers['content-encoding']).toBeUndefined();

    await client.until(() => client.lastId === backlog.length, 5000, 'the backlog');
    expect(client.events()).toEqual(backlog);

    const res = await post(app, '/v1/sessions/s1/messages', { message: 'Reply with exactly the single word LIVE.' });
    expect(res.statusCode, res.body).toBe(204);
    await client.until(() => client.events().filter((e) => e.type === 'turn.ended').length === 2, 5000, 'the live turn');

    const all = await getEvents(app, 's1');
    expect(client.events()).toEqual(all);
    expect(sequences(all)).toEqual(range(1, all.length));
    const live = client.events().slice(backlog.length);
    expect(live[0]?.type).toBe('turn.started');
    expect(live.some((e) => e.type === 'item.completed' && e.data.item.role === 'assistant' && JSON.stringify(e.data.item.content).includes('LIVE'))).toBe(true);

    expect(client.entries[0]).toEqual({ kind: 'block', fields: [{ name: 'retry', value: String(app.config.sseRetryMs) }] });
    expect(client.retries).toHaveLength(1);
    expect(client.text).not.toMatch(/^event:/m);
    expectWellFormed(client);
    expectNoUnparsed(all);
  });

  it('has no gap and no duplicate at the replay/live seam for clients connecting mid-turn', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const res = await post(app, '/v1/sessions/s1/messages', { message: 'flood 4000' });
    expect(res.statusCode, res.body).toBe(204);

    // Connect repeatedly while the turn streams, so several clients straddle the seam at
    // different points of the backlog.
    const clients: { client: SseClient; seenAtConnect: number }[] = [];
    while (app.sessions.get('s1').status !== 'idle' && clients.length < 12) {
      const seenAtConnect = lastSequence(app, 's1');
      clients.push({ client: await sse(port, 's1'), seenAtConnect });
      await new Promise((r) => setTimeout(r, 5));
    }
    await waitFor(() => app.sessions.get('s1').status === 'idle', 10_000, 'the flood turn to end');
    const all = await getEvents(app, 's1');
    const last = all.length;
    expect(sequences(all)).toEqual(range(1, last));

    const midTurn = clients.filter(({ seenAtConnect }) => seenAtConnect > 2 && seenAtConnect < last);
    expect(midTurn.length, 'at least one client connected while the turn was streaming').toBeGreaterThan(0);
    for (const { client } of clients) {
      await client.until(() => client.lastId === last, 5000, `event ${last}`);
      const got = client.events();
      expect(sequences(got)).toEqual(range(1, last));
      expect(got.at(-1)?.type).toBe('turn.ended');
      expectWellFormed(client);
    }
    expectNoUnparsed(all);
  });

  it('resumes after Last-Event-ID or ?offset=, and Last-Event-ID wins over offset', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    await runTurn(app, 's1', 'Reply with exactly the single word OK.');
    const all = await getEvents(app, 's1');
    const last = all.length;
    expect(last).toBeGreaterThan(5);

    const byHeader = await sse(port, 's1', '', { 'last-event-id': '3' });
    const byOffset = await sse(port, 's1', '?offset=2');
    const both = await sse(port, 's1', '?offset=1', { 'last-event-id': '4' });
    const atEnd = await sse(port, 's1', '', { 'last-event-id': String(last) });
    for (const c of [byHeader, byOffset, both]) await c.until(() => c.lastId === last, 5000, `event ${last}`);

    expect(sequences(byHeader.events())).toEqual(range(4, last));
    expect(sequences(byOffset.events())).toEqual(range(3, last));
    expect(sequences(both.events())).toEqual(range(5, last));
    expect(byHeader.events()).toEqual(all.slice(3));

    // Caught up: nothing is replayed, but the stream is live.
    await atEnd.until(() => atEnd.comments.includes('keep-alive'), 2000, 'a keep-alive');
    expect(atEnd.frames).toEqual([]);
    await runTurn(app, 's1', 'Reply with exactly the single word AGAIN.');
    await atEnd.until(() => atEnd.events().some((e) => e.type === 'turn.ended'), 5000, 'the next turn');
    expect(atEnd.events()[0]?.sequence).toBe(last + 1);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it.each(['abc', '-1', '1.5'])('answers an invalid Last-Event-ID (%s) with 400 problem+json', async (value) => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const res = await openStream({ port, path: '/v1/sessions/s1/events/sse', headers: { 'last-event-id': value } });
    await res.ended();
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(res.json().detail).toContain('Last-Event-ID');
    expect(app.sessions.get('s1').subscribers).toBe(0);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('sends a ": keep-alive" comment at the configured interval', async () => {
    const { app, port } = await listening({ sseKeepAliveMs: 50 });
    await createMock(app, 's1');
    const client = await sse(port, 's1');
    const started = Date.now();
    await client.until(() => client.comments.filter((c) => c === 'keep-alive').length >= 3, 2000, 'three keep-alives');
    // Three ticks of 50 ms; generous upper bound for a loaded machine, far below the 15 s default.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(client.text).toContain('\n\n: keep-alive\n\n');
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('serves the native line as raw with include_raw=true, and raw: null without it', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    await runTurn(app, 's1', 'Reply with exactly the single word OK.');
    const last = lastSequence(app, 's1');

    const withRaw = await sse(port, 's1', '?include_raw=true');
    const camel = await sse(port, 's1', '?includeRaw=true');
    const without = await sse(port, 's1');
    for (const c of [withRaw, camel, without]) await c.until(() => c.lastId === last, 5000, `event ${last}`);

    const rawEvents = withRaw.events();
    const agentEvents = rawEvents.filter((e) => e.source === 'agent');
    expect(agentEvents.length).toBeGreaterThan(0);
    for (const e of agentEvents) expect(e.raw, `${e.type} #${e.sequence}`).not.toBeNull();
    const delta = rawEvents.find((e) => e.type === 'item.delta' && e.source === 'agent');
    expect(delta?.raw).toEqual({ type: 'text', id: 'msg_1', chunk: 'OK' });
    const started = rawEvents.find((e) => e.type === 'item.started' && e.source === 'agent');
    expect(started?.raw).toEqual({ type: 'message_start', id: 'msg_1', role: 'assistant' });
    expect(camel.events()).toEqual(rawEvents);

    const plain = without.events();
    expect(plain.map((e) => e.raw)).toEqual(plain.map(() => null));
    // Apart from raw, the two streams carry the same events.
    expect(rawEvents.map((e) => ({ ...e, raw: null }))).toEqual(plain);
    expectNoUnparsed(plain);
  });

  it('closes a paused subscriber that falls behind with a comment naming where to resume, and the resume is exact', async () => {
    const { app, port } = await listening({ subscriberMaxLag: 50, subscriberLagGraceMs: 100 });
    await createMock(app, 's1');
    const first = await sse(port, 's1');
    await first.until(() => first.lastId === lastSequence(app, 's1'), 5000, 'the backlog');
    first.pause();

    const res = await post(app, '/v1/sessions/s1/messages', { message: 'flood 20000' });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood turn to end');
    // The server lets go of the subscriber while the client is still not reading.
    await waitFor(() => app.sessions.get('s1').subscribers === 0, 5000, 'the paused subscriber to be closed');
    const last = lastSequence(app, 's1');
    expect(last).toBeGreaterThan(20_000);

    first.resume();
    await first.ended(5000);
    const closing = first.entries.at(-1);
    expect(closing?.kind).toBe('comment');
    const comment = closing?.kind === 'comment' ? closing.text : '';
    expect(comment).toMatch(/^closed: /);
    const firstIds = sequences(first.events());
    const resumeAt = firstIds.at(-1)!;
    expect(comment).toContain(`Last-Event-ID: ${resumeAt}`);
    expect(resumeAt).toBeLessThan(last);
    expect(firstIds).toEqual(range(1, resumeAt));
    expectWellFormed(first);

    const second = await sse(port, 's1', '', { 'last-event-id': String(resumeAt) });
    await second.until(() => second.lastId === last, 10_000, `event ${last}`);
    const secondIds = sequences(second.events());
    expect(secondIds[0]).toBe(resumeAt + 1);
    expect([...firstIds, ...secondIds]).toEqual(range(1, last));
    expect(second.comments.some((c) => c.startsWith('closed'))).toBe(false);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('closes a paused subscriber through real TCP backpressure, not only a burst of appends', async () => {
    // The server keeps writing until the kernel socket buffers (a few MB on loopback) are full,
    // and only then stops draining. The flood is well over those buffers plus the limit
    // (~300 bytes per delta event), so the close cannot depend on buffer sizes.
    const { app, port } = await listening({ subscriberMaxLag: 5000, subscriberLagGraceMs: 100 });
    await createMock(app, 's1');
    const paused = await sse(port, 's1');
    await paused.until(() => paused.lastId === lastSequence(app, 's1'), 5000, 'the backlog');
    paused.pause();

    const res = await post(app, '/v1/sessions/s1/messages', { message: 'flood 50000' });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood turn to end');
    await waitFor(() => app.sessions.get('s1').subscribers === 0, 5000, 'the paused subscriber to be closed');
    const last = lastSequence(app, 's1');

    paused.resume();
    await paused.ended(5000);
    const closing = paused.entries.at(-1);
    const comment = closing?.kind === 'comment' ? closing.text : '';
    expect(comment).toMatch(/^closed: subscriber fell \d+ events behind \(limit 5000\)/);
    const resumeAt = paused.lastId;
    expect(comment).toContain(`Last-Event-ID: ${resumeAt}`);
    expect(sequences(paused.events())).toEqual(range(1, resumeAt));
    expect(resumeAt).toBeLessThan(last - 5000);

    const rest = await sse(port, 's1', '', { 'last-event-id': String(resumeAt) });
    await rest.until(() => rest.lastId === last, 10_000, `event ${last}`);
    expect([...sequences(paused.events()), ...sequences(rest.events())]).toEqual(range(1, last));
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('keeps a client that reads, even when one stdout read appends far more than the lag limit', async () => {
    // One read of the mock's stdout (~1,600 lines per 64 KiB) appends far more than 50 events at
    // once; the grace period tells that burst apart from a client that stopped reading.
    const { app, port } = await listening({ subscriberMaxLag: 50, subscriberLagGraceMs: 1000 });
    await createMock(app, 's1');
    const reader = await sse(port, 's1');
    await reader.until(() => reader.lastId === lastSequence(app, 's1'), 5000, 'the backlog');
    const res = await post(app, '/v1/sessions/s1/messages', { message: 'flood 20000' });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 15_000, 'the flood turn to end');
    const last = lastSequence(app, 's1');
    await reader.until(() => reader.lastId === last, 10_000, `event ${last}`);
    expect(sequences(reader.events())).toEqual(range(1, last));
    expect(reader.comments.some((c) => c.startsWith('closed'))).toBe(false);
    expect(app.sessions.get('s1').subscribers).toBe(1);
  });

  it('refuses a cursor past the last event instead of silently skipping what comes next', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const ahead = await openStream({ port, path: '/v1/sessions/s1/events/sse', headers: { 'last-event-id': '500' } });
    await ahead.ended();
    expect(ahead.status).toBe(400);
    expect(ahead.json()).toMatchObject({ status: 400, code: 'offset_ahead', offset: 500, lastSequence: lastSequence(app, 's1') });
    expect(app.sessions.get('s1').subscribers).toBe(0);
  });

  it('ends open streams, after session.ended, when the session is deleted or the daemon closes', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    await createMock(app, 's2');
    const one = await sse(port, 's1');
    const two = await sse(port, 's2');
    await one.until(() => one.lastId === lastSequence(app, 's1'), 5000, 'the s1 backlog');

    expect((await app.app.inject({ method: 'DELETE', url: '/v1/sessions/s1' })).statusCode).toBe(204);
    await one.ended(2000);
    expect(one.events().at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
    expect(one.comments.at(-1)).toMatch(/^closed: /);

    // Graceful shutdown must not wait for clients to hang up: it terminates and ends the streams.
    const started = Date.now();
    await app.app.close();
    a = undefined;
    expect(Date.now() - started).toBeLessThan(3000);
    await two.ended(2000);
    expect(two.events().at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'terminated' } });
  });

  it('answers 410 events_evicted for a cursor older than the log holds', async () => {
    const { app, port } = await listening({ maxEventsPerSession: 20 });
    await createMock(app, 's1');
    const res = await post(app, '/v1/sessions/s1/messages', { message: 'flood 30' });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 5000, 'the turn to end');
    const last = lastSequence(app, 's1');
    expect(last).toBeGreaterThan(20);
    const oldest = app.sessions.get('s1').log.oldestSequence;
    expect(oldest).toBe(last - 19);

    for (const cursor of [{ query: '?offset=0' }, { query: '', headers: { 'last-event-id': String(oldest - 2) } }]) {
      const gone = await openStream({ port, path: `/v1/sessions/s1/events/sse${cursor.query}`, headers: cursor.headers ?? {} });
      await gone.ended();
      expect(gone.status).toBe(410);
      expect(gone.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(gone.json()).toMatchObject({ status: 410, code: 'events_evicted', sessionId: 's1', oldestAvailable: oldest });
    }

    // The oldest event still held is reachable, so a client can resume with a known loss.
    const client = await sse(port, 's1', `?offset=${oldest - 1}`);
    await client.until(() => client.lastId === last, 5000, `event ${last}`);
    expect(sequences(client.events())).toEqual(range(oldest, last));
    expect(app.sessions.get('s1').subscribers).toBe(1);
    expectNoUnparsed(client.events());
  });
});

describe('POST /v1/sessions/:id/messages/stream (SSE)', () => {
  function turnStream(port: number, id: string, message: string): Promise<SseClient> {
    return openSse({ port, path: `/v1/sessions/${id}/messages/stream`, method: 'POST', body: { message } });
  }

  it("streams one turn's frames from turn.started to turn.ended, then ends", async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const before = lastSequence(app, 's1');
    const client = await turnStream(port, 's1', 'Reply with exactly the single word OK.');
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['x-accel-buffering']).toBe('no');
    await client.ended(5000);
    expect(client.completed).toBe(true);

    const got = client.events();
    expect(got[0]?.type).toBe('turn.started');
    expect(got.at(-1)?.type).toBe('turn.ended');
    expect(got.filter((e) => e.type === 'turn.ended')).toHaveLength(1);
    expect(sequences(got)).toEqual(range(before + 1, lastSequence(app, 's1')));
    expect(got).toEqual(await getEvents(app, 's1', before));
    const reply = got.find((e) => e.type === 'item.completed' && e.data.item.role === 'assistant');
    expect(reply?.type === 'item.completed' && reply.data.item.content).toEqual([{ type: 'text', text: 'OK' }]);
    expect(client.retries).toHaveLength(1);
    expect(client.entries[0]?.kind).toBe('block');
    expectWellFormed(client);
    expect(app.sessions.get('s1').subscribers).toBe(0);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('ends the stream at permission.requested, leaving the turn waiting', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const client = await turnStream(port, 's1', 'permission');
    await client.ended(5000);
    const got = client.events();
    expect(got[0]?.type).toBe('turn.started');
    const asked = got.at(-1);
    expect(asked?.type).toBe('permission.requested');
    expect(got.some((e) => e.type === 'turn.ended')).toBe(false);
    expect(app.sessions.get('s1').status).toBe('waiting');

    // Answering resumes the turn outside this (closed) stream.
    const permissionId = asked?.type === 'permission.requested' ? asked.data.permission_id : '';
    const res = await post(app, `/v1/sessions/s1/permissions/${permissionId}/reply`, { reply: 'once' });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(() => app.sessions.get('s1').status === 'idle', 5000, 'the turn to finish');
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('refuses a second turn stream while a turn runs with 409 turn_in_progress', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const running = await turnStream(port, 's1', 'slow 100');
    await running.until(() => running.events().some((e) => e.type === 'item.delta'), 5000, 'a first delta');

    const second = await openStream({ port, path: '/v1/sessions/s1/messages/stream', method: 'POST', body: { message: 'hello' } });
    await second.ended();
    expect(second.status).toBe(409);
    expect(second.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(second.json()).toMatchObject({ status: 409, code: 'turn_in_progress', sessionId: 's1' });
    // The refused request's subscriber was released; only the running stream remains.
    expect(app.sessions.get('s1').subscribers).toBe(1);

    const res = await post(app, '/v1/sessions/s1/interrupt');
    expect(res.statusCode, res.body).toBe(202);
    await running.ended(5000);
    const end = running.events().at(-1);
    expect(end?.type).toBe('turn.ended');
    expect(end?.type === 'turn.ended' && end.data.metadata?.reason).toBe('interrupted');
    expect(app.sessions.get('s1').subscribers).toBe(0);
    expectNoUnparsed(await getEvents(app, 's1'));
  });
});
