// Turn-level routes over HTTP: the turn lock, interrupt, HITL replies, terminate, and reading the
// log (raw payloads, paging, eviction). Lifecycle and validation are in http-sessions.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { SessionInfo } from '../../src/schema/api.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { expectProblem, sessionStarted } from '../support/http-problems.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';

let app: App;

afterEach(async () => {
  await app?.app.close();
});

const get = (url: string) => app.app.inject({ method: 'GET', url });
const info = async (id = 's1') => (await get(`/v1/sessions/${id}`)).json<SessionInfo>();
const untilStatus = (status: SessionInfo['status'], id = 's1') =>
  waitFor(async () => (await info(id)).status === status, 5000, `session ${id} ${status}`);

async function start(deps: Parameters<typeof makeApp>[0] = {}): Promise<void> {
  app = await makeApp(deps);
  await createMock(app, 's1');
}

describe('turn lock and interrupt', () => {
  it('refuses a second message while a turn runs, interrupts it, then takes a new one', async () => {
    await start();
    expect((await post(app, '/v1/sessions/s1/messages', { message: 'slow 20' })).statusCode).toBe(204);
    expect((await info()).status).toBe('running');

    const refused = await post(app, '/v1/sessions/s1/messages', { message: 'echo too soon' });
    expect(expectProblem(refused, 409, 'turn_in_progress')).toMatchObject({ sessionId: 's1', sessionStatus: 'running' });

    expect((await post(app, '/v1/sessions/s1/interrupt')).statusCode).toBe(202);
    await untilStatus('idle');
    expectProblem(await post(app, '/v1/sessions/s1/interrupt'), 409, 'no_turn_running');

    const events = await runTurn(app, 's1', 'echo after');
    expect(events.find((e) => e.type === 'turn.ended')).toBeDefined();
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('answers no_turn_running before any turn', async () => {
    await start();
    expectProblem(await post(app, '/v1/sessions/s1/interrupt'), 409, 'no_turn_running');
  });
});

describe('permission replies', () => {
  it('404 for an unknown id, 400 for a bad reply, 409 for a second reply', async () => {
    await start();
    expectProblem(await post(app, '/v1/sessions/s1/permissions/perm_404/reply', { reply: 'once' }), 404, 'permission_not_found');

    const events = await runTurn(app, 's1', 'permission');
    const asked = events.find((e) => e.type === 'permission.requested');
    const id = asked?.type === 'permission.requested' ? asked.data.permission_id : 'missing';
    const url = `/v1/sessions/s1/permissions/${id}/reply`;

    expect(expectProblem(await post(app, url, { reply: 'maybe' }), 400, 'invalid_request').detail).toContain('body.reply');
    expectProblem(await post(app, url), 400, 'invalid_request');
    expect((await info()).status).toBe('waiting'); // a refused reply resolves nothing

    expect((await post(app, url, { reply: 'once' })).statusCode).toBe(204);
    expect(expectProblem(await post(app, url, { reply: 'once' }), 409, 'permission_already_resolved')).toMatchObject({ permissionId: id });
    await untilStatus('idle');
  });
});

describe('question replies', () => {
  async function ask(): Promise<{ id: string; from: number }> {
    const from = (await info()).eventCount;
    const events = await runTurn(app, 's1', 'question');
    const asked = events.find((e) => e.type === 'question.requested');
    return { id: asked?.type === 'question.requested' ? asked.data.question_id : 'missing', from };
  }

  async function resolution(from: number): Promise<UniversalEvent | undefined> {
    await untilStatus('idle');
    return (await getEvents(app, 's1', from)).find((e) => e.type === 'question.resolved');
  }

  it('reply: question.resolved answered, with the response', async () => {
    await start();
    const { id, from } = await ask();
    expectProblem(await post(app, `/v1/sessions/s1/questions/${id}/reply`, { answers: 'red' }), 400, 'invalid_request');
    expect((await post(app, `/v1/sessions/s1/questions/${id}/reply`, { answers: [['red']] })).statusCode).toBe(204);
    expect((await resolution(from))?.data).toMatchObject({ question_id: id, status: 'answered', response: 'red' });
    expectProblem(await post(app, `/v1/sessions/s1/questions/${id}/reply`, { answers: [['blue']] }), 409, 'question_already_resolved');
  });

  it('reject: question.resolved rejected', async () => {
    await start();
    const { id, from } = await ask();
    expect((await post(app, `/v1/sessions/s1/questions/${id}/reject`)).statusCode).toBe(204);
    const resolved = await resolution(from);
    expect(resolved?.data).toMatchObject({ question_id: id, status: 'rejected' });
    expect(resolved?.data).not.toHaveProperty('response');
  });

  it('404 for an unknown question', async () => {
    await start();
    expectProblem(await post(app, '/v1/sessions/s1/questions/q_404/reply', { answers: [['red']] }), 404, 'question_not_found');
    expectProblem(await post(app, '/v1/sessions/s1/questions/q_404/reject'), 404, 'question_not_found');
  });
});

describe('terminate', () => {
  it('kills the agent, logs session.ended, is idempotent, and refuses further messages', async () => {
    await start();
    const pid = Number(sessionStarted(await getEvents(app, 's1')).metadata?.pid);
    expect(() => process.kill(pid, 0)).not.toThrow();

    expect((await post(app, '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    // terminate answers only once the process is reaped and the end is logged.
    const ended = (await getEvents(app, 's1')).filter((e) => e.type === 'session.ended');
    expect(ended).toEqual([expect.objectContaining({ source: 'daemon', data: expect.objectContaining({ reason: 'terminated', terminated_by: 'daemon' }) })]);
    expect(await info()).toMatchObject({ status: 'ended', ended: true });
    expect(() => process.kill(pid, 0)).toThrow();

    expect((await post(app, '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    expectProblem(await post(app, '/v1/sessions/s1/messages', { message: 'hello?' }), 409, 'session_ended');
    expectProblem(await post(app, '/v1/sessions/s1/interrupt'), 409, 'session_ended');
    expect((await getEvents(app, 's1')).filter((e) => e.type === 'session.ended')).toHaveLength(1);
  });

  it('ends a running turn before the session', async () => {
    await start();
    expect((await post(app, '/v1/sessions/s1/messages', { message: 'slow 20' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(app, 's1')).some((e) => e.type === 'item.delta'), 5000, 'first tick');
    expect((await post(app, '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    const tail = (await getEvents(app, 's1')).slice(-2);
    expect(tail.map((e) => e.type)).toEqual(['turn.ended', 'session.ended']);
    expect(tail[0]?.data).toMatchObject({ metadata: { reason: 'terminated' } });
  });
});

describe('GET /events', () => {
  it('raw is null by default and the native line with include_raw / includeRaw', async () => {
    await start();
    await runTurn(app, 's1', 'Reply with exactly the single word OK.');
    const plain = await getEvents(app, 's1');
    expect(plain.every((e) => 'raw' in e && e.raw === null)).toBe(true);

    for (const flag of ['include_raw', 'includeRaw']) {
      const res = await get(`/v1/sessions/s1/events?${flag}=true`);
      const events = res.json<{ events: UniversalEvent[] }>().events;
      expect(events.map((e) => e.sequence)).toEqual(plain.map((e) => e.sequence));
      const fromAgent = events.filter((e) => e.source === 'agent');
      expect(fromAgent.length).toBeGreaterThan(0);
      for (const e of fromAgent) expect(e.raw, `${flag} #${e.sequence} ${e.type}`).toMatchObject({ type: expect.any(String) });
      expect(fromAgent.find((e) => e.type === 'session.started')?.raw).toMatchObject({ type: 'ready', model: 'mock-1' });
      const delta = fromAgent.find((e) => e.type === 'item.delta');
      expect(delta?.raw).toEqual({ type: 'text', id: 'msg_1', chunk: 'OK' });
      // The daemon's turn.started keeps the request it was derived from.
      expect(events.find((e) => e.type === 'turn.started')?.raw).toEqual({ message: 'Reply with exactly the single word OK.' });
    }
  });

  it('pages with offset (exclusive) and limit, and says when there is more', async () => {
    await start();
    await runTurn(app, 's1', 'markdown');
    const total = (await info()).eventCount;
    expect(total).toBeGreaterThan(6);
    const page = async (query: string) => (await get(`/v1/sessions/s1/events?${query}`)).json<{ events: UniversalEvent[]; hasMore: boolean }>();
    const seqs = (p: { events: UniversalEvent[] }) => p.events.map((e) => e.sequence);

    const first = await page('limit=3');
    expect([seqs(first), first.hasMore]).toEqual([[1, 2, 3], true]);
    const second = await page('offset=3&limit=3');
    expect([seqs(second), second.hasMore]).toEqual([[4, 5, 6], true]);
    const last = await page(`offset=${total - 1}&limit=3`);
    expect([seqs(last), last.hasMore]).toEqual([[total], false]);
    const none = await page(`offset=${total}`);
    expect([seqs(none), none.hasMore]).toEqual([[], false]);
    const all = await page('');
    expect([seqs(all).length, all.hasMore]).toEqual([total, false]);

    expectProblem(await get('/v1/sessions/s1/events?limit=0'), 400, 'invalid_request');
    expectProblem(await get('/v1/sessions/s1/events?offset=-1'), 400, 'invalid_request');
  });

  it('answers 410 events_evicted for an offset the log no longer holds', async () => {
    await start({ config: { maxEventsPerSession: 10 } });
    expect((await post(app, '/v1/sessions/s1/messages', { message: 'flood 30' })).statusCode).toBe(204);
    await untilStatus('idle');
    const total = (await info()).eventCount;
    expect(total).toBeGreaterThan(30);

    const gone = await get('/v1/sessions/s1/events?offset=0');
    const oldest = total - 9;
    expect(expectProblem(gone, 410, 'events_evicted')).toMatchObject({ sessionId: 's1', offset: 0, oldestAvailable: oldest });
    expectProblem(await get('/v1/sessions/s1/events/sse?offset=0'), 410, 'events_evicted');

    const kept = (await get(`/v1/sessions/s1/events?offset=${oldest - 1}`)).json<{ events: UniversalEvent[]; hasMore: boolean }>();
    expect(kept.events.map((e) => e.sequence)).toEqual(Array.from({ length: 10 }, (_, i) => oldest + i));
    expect(kept.hasMore).toBe(false);
  });
});
