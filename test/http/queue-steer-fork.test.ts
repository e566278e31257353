// Messages during a turn (delivery queue, steer, interrupt), the queue routes, and forks, over
// HTTP against the mock agent (docs/queue-steer-fork.md). Every real agent's own answer to each is
// in its e2e file; restarts are in test/daemon/daemon-restart.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { SessionInfo } from '../../src/schema/api.js';
import type { MessageAccepted, QueuedMessage } from '../../src/schema/delivery.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { expectProblem } from '../support/http-problems.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';

let app: App;

afterEach(async () => {
  await app?.app.close();
});

const get = (url: string) => app.app.inject({ method: 'GET', url });
const del = (url: string) => app.app.inject({ method: 'DELETE', url });
const info = async (id = 's1') => (await get(`/v1/sessions/${id}`)).json<SessionInfo>();
const send = async (message: string, delivery?: string, id = 's1') => post(app, `/v1/sessions/${id}/messages`, { message, ...(delivery ? { delivery } : {}) });
const accepted = async (message: string, delivery: string, id = 's1') => {
  const res = await send(message, delivery, id);
  expect(res.statusCode, res.body).toBe(202);
  return res.json<MessageAccepted>();
};
const of = <T extends UniversalEvent['type']>(events: UniversalEvent[], type: T) =>
  events.filter((e): e is Extract<UniversalEvent, { type: T }> => e.type === type);
const untilEvents = (check: (events: UniversalEvent[]) => boolean, id = 's1', what = 'events') =>
  waitFor(async () => {
    const events = await getEvents(app, id);
    return check(events) ? events : undefined;
  }, 10_000, what);
const turnsEnded = (n: number, id = 's1') => untilEvents((e) => of(e, 'turn.ended').length >= n && !e.some((x) => x === undefined), id, `${n} turns ended`);
const lastText = (events: UniversalEvent[]) =>
  of(events, 'item.completed')
    .filter((e) => e.data.item.role === 'assistant')
    .map((e) => e.data.item.content.map((p) => (p.type === 'text' ? p.text : '')).join(''))
    .at(-1) ?? '';

async function start(): Promise<void> {
  app = await makeApp();
  await createMock(app, 's1');
}

it("the mock's capabilities say it steers and forks at the end and at any turn", async () => {
  app = await makeApp();
  const agents = (await get('/v1/agents')).json<{ agents: { id: string; capabilities: Record<string, boolean> | null }[] }>().agents;
  expect(agents.find((a) => a.id === 'mock')?.capabilities).toMatchObject({ steer: true, fork: true, forkAtTurn: true });
});

describe('delivery queue', () => {
  it('queues while a turn runs, lists and cancels, then starts each as its own turn in order', async () => {
    await start();
    expect((await send('slow 10')).statusCode).toBe(204);
    const a = await accepted('echo first', 'queue');
    const b = await accepted('echo second', 'queue');
    const c = await accepted('echo third', 'queue');
    expect([a, b, c].map((m) => [m.status, m.position])).toEqual([['queued', 0], ['queued', 1], ['queued', 2]]);
    expect((await info()).queued).toBe(3);
    const listed = (await get('/v1/sessions/s1/queue')).json<{ messages: QueuedMessage[] }>().messages;
    expect(listed.map((m) => [m.messageId, m.message, m.delivery])).toEqual([
      [a.messageId, 'echo first', 'queue'],
      [b.messageId, 'echo second', 'queue'],
      [c.messageId, 'echo third', 'queue'],
    ]);
    expect((await del(`/v1/sessions/s1/queue/${b.messageId}`)).statusCode).toBe(204);
    expectProblem(await del(`/v1/sessions/s1/queue/${b.messageId}`), 404, 'queued_message_not_found');
    // Without a delivery, a message is still refused while a turn runs or messages wait.
    expectProblem(await send('echo plain'), 409, 'turn_in_progress');

    const events = await turnsEnded(3);
    const started = of(events, 'turn.started');
    expect(started.map((e) => e.data.message_id)).toEqual([undefined, a.messageId, c.messageId]);
    expect(of(events, 'message.queued').map((e) => [e.data.message_id, e.data.position])).toEqual([[a.messageId, 0], [b.messageId, 1], [c.messageId, 2]]);
    expect(of(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([
      [b.messageId, 'cancelled'],
      [a.messageId, 'started'],
      [c.messageId, 'started'],
    ]);
    // Each dequeued-as-started is followed by its own turn.started, after the previous turn.ended.
    const order = events.filter((e) => e.type === 'turn.ended' || e.type === 'turn.started' || (e.type === 'message.dequeued' && e.data.reason === 'started')).map((e) => e.type);
    expect(order).toEqual(['turn.started', 'turn.ended', 'message.dequeued', 'turn.started', 'turn.ended', 'message.dequeued', 'turn.started', 'turn.ended']);
    expect(lastText(events)).toBe('third');
    expect((await info()).queued).toBe(0);
    expect((await get('/v1/sessions/s1/queue')).json()).toEqual({ messages: [] });
    expectNoUnparsed(events);
  });

  it('starts a queued message at once when no turn runs', async () => {
    await start();
    const m = await accepted('echo now', 'queue');
    expect(m).toMatchObject({ delivery: 'queue', status: 'started' });
    const events = await turnsEnded(1);
    expect(of(events, 'turn.started')[0]!.data.message_id).toBe(m.messageId);
    expect(of(events, 'message.queued')).toEqual([]);
    expectNoUnparsed(events);
  });

  it('drops what is queued when the session ends, saying so', async () => {
    await start();
    expect((await send('slow 50')).statusCode).toBe(204);
    const m = await accepted('echo never', 'queue');
    expect((await post(app, '/v1/sessions/s1/terminate')).statusCode).toBe(204);
    const events = await untilEvents((e) => e.some((x) => x.type === 'message.dequeued'));
    expect(of(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([[m.messageId, 'session_ended']]);
    expect(of(events, 'turn.started')).toHaveLength(1);
    expectProblem(await send('echo late', 'queue'), 409, 'session_ended');
  });

  it("streams a queued message's turn: the running turn first, closed at the end of its own", async () => {
    await start();
    expect((await send('slow 5')).statusCode).toBe(204);
    const res = await app.app.inject({
      method: 'POST',
      url: '/v1/sessions/s1/messages/stream',
      payload: { message: 'echo streamed', delivery: 'queue' },
      headers: { accept: 'application/x-ndjson' },
    });
    expect(res.statusCode).toBe(200);
    const streamed = res.body.trim().split('\n').map((l) => JSON.parse(l) as UniversalEvent);
    const queued = of(streamed, 'message.queued')[0]!;
    expect(streamed[0]).toEqual(queued);
    expect(of(streamed, 'turn.ended').map((e) => e.data.turn_id)).toEqual(['turn_1', 'turn_2']);
    expect(of(streamed, 'turn.started').map((e) => e.data.message_id)).toEqual([queued.data.message_id]);
    expect(streamed.at(-1)!.type).toBe('turn.ended');
    expect(lastText(streamed)).toBe('streamed');
  });

  it('refuses an unknown delivery', async () => {
    await start();
    expectProblem(await send('echo x', 'later'), 400, 'invalid_request');
  });
});

describe('delivery steer', () => {
  it('gives the message to the running turn, where the agent shows it', async () => {
    await start();
    expect((await send('slow 15')).statusCode).toBe(204);
    await untilEvents((e) => of(e, 'item.delta').length >= 2, 's1', 'the slow turn to stream');
    const m = await accepted('use tabs', 'steer');
    expect(m).toMatchObject({ delivery: 'steer', status: 'steered' });
    const events = await turnsEnded(1);
    const steered = of(events, 'message.steered');
    expect(steered.map((e) => [e.data.message_id, e.data.turn_id, e.data.message])).toEqual([[m.messageId, 'turn_1', 'use tabs']]);
    // The mock does not echo user messages: the daemon adds the steered one as a user item of the turn.
    const users = of(events, 'item.completed').filter((e) => e.data.item.role === 'user');
    expect(users.map((e) => e.data.item.content[0])).toEqual([{ type: 'text', text: 'slow 15' }, { type: 'text', text: 'use tabs' }]);
    expect(lastText(events)).toContain('[steered: use tabs]');
    expect(of(events, 'turn.started')).toHaveLength(1);
    expectNoUnparsed(events);
  });

  it('starts a turn when none runs', async () => {
    await start();
    expect(await accepted('echo hi', 'steer')).toMatchObject({ status: 'started' });
    expect(lastText(await turnsEnded(1))).toBe('hi');
  });
});

describe('delivery interrupt', () => {
  it('interrupts the running turn and starts the message next, ahead of the queue', async () => {
    await start();
    expect((await send('slow 100')).statusCode).toBe(204);
    const queued = await accepted('echo later', 'queue');
    const m = await accepted('echo instead', 'interrupt');
    expect(m).toMatchObject({ status: 'queued', position: 0 });
    const events = await turnsEnded(3);
    expect(of(events, 'turn.ended').map((e) => e.data.metadata.reason)).toEqual(['interrupted', 'completed', 'completed']);
    expect(of(events, 'turn.started').map((e) => e.data.message_id)).toEqual([undefined, m.messageId, queued.messageId]);
    expect(of(events, 'message.queued').find((e) => e.data.message_id === m.messageId)?.data.delivery).toBe('interrupt');
    expectNoUnparsed(events);
  });
});

describe('fork', () => {
  async function twoTurns(): Promise<UniversalEvent[]> {
    await start();
    await runTurn(app, 's1', 'echo one');
    await runTurn(app, 's1', 'echo two');
    return getEvents(app, 's1');
  }

  it('forks at the end: the parent events, then session.forked, and an agent that remembers them', async () => {
    const parent = await twoTurns();
    const res = await post(app, '/v1/sessions/s1/fork', { id: 'f1' });
    expect(res.statusCode, res.body).toBe(201);
    const forked = res.json<SessionInfo>();
    expect(forked).toMatchObject({ sessionId: 'f1', agent: 'mock', forkedFrom: { sessionId: 's1', sequence: parent.at(-1)!.sequence }, status: 'idle', restored: false });

    const copy = await getEvents(app, 'f1', 0, true);
    const strip = (e: UniversalEvent) => ({ sequence: e.sequence, type: e.type, data: e.data, time: e.time, source: e.source });
    expect(copy.slice(0, parent.length).map(strip)).toEqual(parent.map(strip));
    expect(copy.slice(0, parent.length).every((e) => e.session_id === 'f1')).toBe(true);
    const mark = copy[parent.length]!;
    expect(mark).toMatchObject({ type: 'session.forked', sequence: parent.length + 1, data: { forked_from: { session_id: 's1', sequence: parent.length }, at_turn: 'turn_2' } });

    const history = await runTurn(app, 'f1', 'history');
    expect(lastText(history)).toContain('"echo one"');
    expect(lastText(history)).toContain('"echo two"');
    expect(of(history, 'turn.started')[0]!.data.turn_id).toBe('turn_3');
    // The parent did not change.
    expect(await getEvents(app, 's1')).toEqual(parent);
    expectNoUnparsed(await getEvents(app, 'f1'));
  });

  it('forks at an earlier turn: only that much of the conversation', async () => {
    const parent = await twoTurns();
    const first = of(parent, 'turn.ended')[0]!;
    const res = await post(app, '/v1/sessions/s1/fork', { at: first.sequence });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<SessionInfo>().sessionId;
    const copy = await getEvents(app, id);
    expect(copy.slice(0, first.sequence).map((e) => e.type)).toEqual(parent.slice(0, first.sequence).map((e) => e.type));
    expect(copy[first.sequence]).toMatchObject({ type: 'session.forked', data: { at_turn: 'turn_1' } });
    const history = lastText(await runTurn(app, id, 'history'));
    expect(history).toContain('"echo one"');
    expect(history).not.toContain('echo two');
  });

  it('refuses a point that is not a turn.ended, a running parent without `at`, and a taken id', async () => {
    const parent = await twoTurns();
    const notEnd = parent.find((e) => e.type === 'turn.started')!;
    expectProblem(await post(app, '/v1/sessions/s1/fork', { at: notEnd.sequence }), 400, 'invalid_fork_point');
    expectProblem(await post(app, '/v1/sessions/s1/fork', { at: 9999 }), 400, 'invalid_fork_point');
    expectProblem(await post(app, '/v1/sessions/s1/fork', { id: 's1' }), 409, 'session_exists');
    expectProblem(await post(app, '/v1/sessions/s1/fork', { what: 1 }), 400, 'invalid_request');
    expectProblem(await post(app, '/v1/sessions/nope/fork', {}), 404, 'session_not_found');
    expect((await send('slow 50')).statusCode).toBe(204);
    expectProblem(await post(app, '/v1/sessions/s1/fork', {}), 409, 'turn_in_progress');
    // While it runs, an earlier turn can still be forked.
    expect((await post(app, '/v1/sessions/s1/fork', { at: of(parent, 'turn.ended')[1]!.sequence })).statusCode).toBe(201);
  });

  it('a fork can be read as soon as its first event is in the feed, before the fork answers', async () => {
    await twoTurns();
    const seen: number[] = [];
    // The feed tells its listeners synchronously at each commit (the memory store commits at once),
    // while the fork's agent has not started yet: its info and events must be readable then.
    const stop = app.sessions.feed.listen(() => {
      try {
        seen.push(app.sessions.read('early').log.lastSequence);
      } catch {
        seen.push(-1);
      }
    });
    const res = await post(app, '/v1/sessions/s1/fork', { id: 'early' });
    stop();
    expect(res.statusCode, res.body).toBe(201);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((n) => n < 0)).toEqual([]);
    // Commands wait for the fork's answer; reads do not.
    expect((await get('/v1/sessions')).json<{ sessions: SessionInfo[] }>().sessions[0]!.sessionId).toBe('early');
  });

  it('forks a session with no turn yet as a fresh one', async () => {
    await start();
    const res = await post(app, '/v1/sessions/s1/fork', { id: 'f0' });
    expect(res.statusCode, res.body).toBe(201);
    const events = await getEvents(app, 'f0');
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['session.started', 'session.forked']);
    expect(lastText(await runTurn(app, 'f0', 'history'))).toContain('No earlier prompts');
    // The body is optional: no body forks after the last turn, under an id the daemon picks.
    const bare = await post(app, '/v1/sessions/s1/fork');
    expect(bare.statusCode, bare.body).toBe(201);
    expect(bare.json<SessionInfo>()).toMatchObject({ sessionId: expect.stringMatching(/^sess_/), forkedFrom: { sessionId: 's1' } });
  });
});
