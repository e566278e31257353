// Messages during a turn and forks through agentwire-client (docs/client.md, queue-steer-fork.md),
// against one real daemon process running the mock: send with a delivery, the queue and cancelling
// from it, steering, turn() with a delivery (the result is the message's own turn, and aborting it
// while queued cancels the message, not the running turn), and fork at the end and at turn 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentwireError, type AgentwireClient, type EventOf, type Session, type UniversalEvent } from '../../client/src/index.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

let client: AgentwireClient;

beforeAll(async () => {
  await setUpInstall();
  ({ client } = await startClientDaemon());
}, 400_000);
afterAll(() => {
  killDaemons();
  removeInstall();
});

const of = <T extends UniversalEvent['type']>(events: UniversalEvent[], type: T): EventOf<T>[] =>
  events.filter((e): e is EventOf<T> => e.type === type);

/** Every event of the session until its `n`th turn.ended. */
async function untilTurnsEnded(session: Session, n: number): Promise<UniversalEvent[]> {
  let ended = 0;
  return collect(session.events(), (e) => e.type === 'turn.ended' && ++ended === n);
}

const running = (session: Session) => waitFor(async () => (await session.info()).status === 'running', 10_000, 'the turn to run');

describe('messages during a turn', { timeout: 60_000 }, () => {
  it('queues two messages during a turn, lists them, cancels one; the other runs next', async () => {
    const session = await client.sessions.create({ agent: 'mock' });
    // Without a delivery, send keeps its old answer: nothing.
    expect(await session.send('slow 10')).toBeUndefined();
    await running(session);
    const first = await session.send('echo first', { delivery: 'queue' });
    const second = await session.send({ message: 'echo second', delivery: 'queue' });
    expect(first).toMatchObject({ delivery: 'queue', status: 'queued', position: 0 });
    expect(second).toMatchObject({ delivery: 'queue', status: 'queued', position: 1 });
    expect(first.messageId).toMatch(/^msg_/);
    const queued = await session.queue();
    expect(queued.map((m) => [m.messageId, m.message, m.delivery])).toEqual([
      [first.messageId, 'echo first', 'queue'],
      [second.messageId, 'echo second', 'queue'],
    ]);
    expect((await session.info()).queued).toBe(2);
    await session.cancelQueued(first.messageId);
    const again = await session.cancelQueued(first.messageId).catch((e: unknown) => e);
    expect(AgentwireError.is(again) && [again.status, again.code]).toEqual([404, 'queued_message_not_found']);
    // A plain message is still refused while a turn runs.
    const plain = await session.send('echo plain').catch((e: unknown) => e);
    expect(AgentwireError.is(plain) && plain.code).toBe('turn_in_progress');

    const events = await untilTurnsEnded(session, 2);
    expectDense(events);
    expectNoUnparsed(events);
    expect(of(events, 'message.queued').map((e) => e.data.message_id)).toEqual([first.messageId, second.messageId]);
    expect(of(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([
      [first.messageId, 'cancelled'],
      [second.messageId, 'started'],
    ]);
    expect(of(events, 'turn.started').map((e) => e.data.message_id)).toEqual([undefined, second.messageId]);
    expect(await session.queue()).toEqual([]);
  });

  it('steers a message into the running turn', async () => {
    const session = await client.sessions.create({ agent: 'mock' });
    await session.send('slow 10');
    await running(session);
    const steered = await session.send('use tabs', { delivery: 'steer' });
    expect(steered).toMatchObject({ delivery: 'steer', status: 'steered' });
    expect(steered.position).toBeUndefined();
    const events = await untilTurnsEnded(session, 1);
    expect(of(events, 'message.steered').map((e) => [e.data.message_id, e.data.turn_id, e.data.message])).toEqual([[steered.messageId, 'turn_1', 'use tabs']]);
    expectNoUnparsed(events);
    // With no turn running, a delivery starts the turn.
    expect(await session.send('echo now', { delivery: 'steer' })).toMatchObject({ status: 'started' });
  });

  it('turn() with a delivery resolves with the message’s own turn: queued, steered, and cancelled when aborted', async () => {
    const session = await client.sessions.create({ agent: 'mock' });
    await session.send('slow 10');
    await running(session);
    const seen: string[] = [];
    const queued = await session.turn('echo after you', { delivery: 'queue', onEvent: (e) => seen.push(e.type) });
    expect(queued).toMatchObject({ turnId: 'turn_2', text: 'after you', reason: 'completed' });
    expect(queued.messageId).toMatch(/^msg_/);
    // The result is the message's turn only; onEvent also saw the end of the turn it waited for.
    expect(queued.events[0]).toMatchObject({ type: 'turn.started', data: { turn_id: 'turn_2', message_id: queued.messageId } });
    expect(seen.slice(0, 1)).toEqual(['message.queued']);
    expect(seen.filter((t) => t === 'turn.ended')).toHaveLength(2);
    expectDense(queued.events, queued.events[0]!.sequence);

    const slow = session.turn('slow 10');
    await running(session);
    const steered = await session.turn('use spaces', { delivery: 'steer' });
    expect(steered).toMatchObject({ turnId: 'turn_3', reason: 'completed' });
    expect(steered.events[0]).toMatchObject({ type: 'message.steered', data: { message_id: steered.messageId } });
    expect(steered.text).toContain('[steered: use spaces]');
    expect((await slow).text).toBe(steered.text);

    // Aborted while queued: the message leaves the queue and the running turn goes on.
    await session.send('slow 10');
    await running(session);
    const controller = new AbortController();
    const aborted = await session
      .turn('echo never', { delivery: 'queue', signal: controller.signal, onEvent: (e) => e.type === 'message.queued' && controller.abort() })
      .catch((e: unknown) => e);
    expect(AgentwireError.is(aborted) && aborted.code).toBe('aborted');
    expect(await session.queue()).toEqual([]);
    const rest = await collect(session.events({ after: steered.ended!.sequence }), (e) => e.type === 'turn.ended');
    expect(of(rest, 'turn.ended')[0]!.data.metadata.reason).toBe('completed');
    expect(of(rest, 'message.dequeued').map((e) => e.data.reason)).toEqual(['cancelled']);
  });
});

describe('session.fork()', { timeout: 60_000 }, () => {
  it('forks at the end and at turn 1; each fork remembers that much of the conversation', async () => {
    const parent = await client.sessions.create({ agent: 'mock' });
    const one = await parent.turn('echo one');
    await parent.turn('echo two');

    const whole = await parent.fork({ id: 'fork-end' });
    expect(whole.session.id).toBe('fork-end');
    expect(whole.info).toMatchObject({ sessionId: 'fork-end', agent: 'mock', status: 'idle', forkedFrom: { sessionId: parent.id } });
    const copied = await collect(whole.session.events(), (e) => e.type === 'session.forked');
    const forked = of(copied, 'session.forked')[0]!;
    expect(forked.data).toMatchObject({ forked_from: { session_id: parent.id, sequence: whole.info.forkedFrom!.sequence }, at_turn: 'turn_2' });
    const history = await whole.session.turn('history');
    expect(history.turnId).toBe('turn_3');
    expect(history.text).toContain('"echo one"');
    expect(history.text).toContain('"echo two"');
    expectNoUnparsed(history.events);

    const early = await parent.fork({ at: one.ended!.sequence });
    expect(early.session.id).toMatch(/^sess_/);
    expect(early.info.forkedFrom).toEqual({ sessionId: parent.id, sequence: one.ended!.sequence });
    const earlier = await early.session.turn('history');
    expect(earlier.turnId).toBe('turn_2');
    expect(earlier.text).toContain('"echo one"');
    expect(earlier.text).not.toContain('echo two');

    const bad = await parent.fork({ at: one.events[0]!.sequence }).catch((e: unknown) => e);
    expect(AgentwireError.is(bad) && [bad.status, bad.code]).toEqual([400, 'invalid_fork_point']);
  });
});
