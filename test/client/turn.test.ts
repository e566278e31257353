// session.turn() against a real daemon running the mock: a turn start to end through the NDJSON
// turn stream, permissions and questions answered by (async) callbacks, the turn's text and
// reason, and what aborting, a timeout or a failing callback does to the turn (it is interrupted).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentwireError, type UniversalEvent } from '../../client/src/index.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

beforeAll(setUpInstall, 400_000);
afterAll(removeInstall);
afterEach(killDaemons);

const types = (events: UniversalEvent[]) => events.map((e) => e.type);

describe('session.turn()', () => {
  it('runs a turn and resolves with its events, final text and reason', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const seen: number[] = [];
    const result = await session.turn('Reply with exactly the single word OK.', { onEvent: (e) => seen.push(e.sequence) });
    expect(result.reason).toBe('completed');
    expect(result.text).toBe('OK');
    expect(result.turnId).toBe('turn_1');
    expect(result.usage).toBeUndefined(); // the mock reports no token counts
    expect(result.events[0]!.type).toBe('turn.started');
    expect(result.events.at(-1)).toBe(result.ended);
    expect(seen).toEqual(result.events.map((e) => e.sequence));
    expectDense(result.events, result.events[0]!.sequence);
    expectNoUnparsed(result.events);

    const demo = await session.turn({ message: 'demo' }, { includeRaw: true });
    expect(demo.turnId).toBe('turn_2');
    expect(demo.reason).toBe('completed');
    expect(demo.events.some((e) => e.raw !== null)).toBe(true);
    expectNoUnparsed(demo.events);
    // The whole log is the two turns after session.started: nothing outside a turn was missed.
    const all = await collect(session.events(), (e) => e.sequence === demo.ended!.sequence);
    expect(all.slice(1).map((e) => e.event_id)).toEqual([...result.events, ...demo.events].map((e) => e.event_id));
  });

  it('answers a permission through an async callback, and questions (answered and rejected)', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const asked: string[] = [];
    const granted = await session.turn('permission', {
      onPermission: async (request) => {
        asked.push(request.action);
        await new Promise((r) => setTimeout(r, 50));
        return 'once' as const;
      },
    });
    expect(asked).toEqual(['write_file']);
    expect(granted.text).toBe('Permission granted; wrote notes.txt.');
    expect(types(granted.events)).toEqual(expect.arrayContaining(['permission.requested', 'permission.resolved', 'turn.ended']));
    expectDense(granted.events, granted.events[0]!.sequence);

    const denied = await session.turn('permission', { onPermission: () => 'reject' });
    expect(denied.text).toBe('Permission denied; did not write notes.txt.');

    const answered = await session.turn('question', {
      onQuestion: (request) => {
        expect(request.options).toEqual(['red', 'green', 'blue']);
        return [['green']];
      },
    });
    expect(answered.text).toBe('You answered: green');
    const rejected = await session.turn('question', { onQuestion: async () => null });
    expect(rejected.text).toBe('Question rejected.');
    for (const r of [granted, denied, answered, rejected]) {
      expect(r.reason).toBe('completed');
      expectNoUnparsed(r.events);
    }
  });

  it('without a callback the request is left to someone else, and the turn waits for it', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const other = client.sessions.handle(session.id);
    const turn = session.turn('permission');
    const request = await waitFor(async () => {
      const events = await collect(other.events({ untilEnded: false, signal: AbortSignal.timeout(1000) }));
      return events.find((e) => e.type === 'permission.requested');
    }, 15_000, 'the permission request');
    if (request.type !== 'permission.requested') throw new Error('unreachable');
    await other.replyPermission(request.data.permission_id, 'once');
    const result = await turn;
    expect(result.text).toBe('Permission granted; wrote notes.txt.');
    expectNoUnparsed(result.events);
  });

  it('a second turn while one runs is refused with turn_in_progress, before any stream', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const first = session.turn('slow 20');
    await waitFor(async () => (await session.info()).status === 'running', 10_000, 'the first turn');
    const error = await session.turn('echo no').catch((e: unknown) => e);
    expect(AgentwireError.is(error) && [error.status, error.code]).toEqual([409, 'turn_in_progress']);
    const done = await first;
    expect(done.reason).toBe('completed');
    expectNoUnparsed(done.events);
  });

  it('aborting a turn interrupts it; so do a turn timeout and a callback that throws', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });

    const controller = new AbortController();
    const aborted = await session
      .turn('slow 200', { signal: controller.signal, onEvent: (e) => e.type === 'item.delta' && controller.abort() })
      .catch((e: unknown) => e);
    expect(AgentwireError.is(aborted) && aborted.code).toBe('aborted');
    const first = await endOfTurn(session, 0);
    expect(first.reason).toBe('interrupted');

    const timedOut = await session.turn('slow 200', { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(AgentwireError.is(timedOut) && timedOut.code).toBe('timeout');
    const second = await endOfTurn(session, first.sequence);
    expect(second.reason).toBe('interrupted');

    const boom = new Error('the reviewer is away');
    const failed = await session.turn('permission', { onPermission: () => Promise.reject(boom) }).catch((e: unknown) => e);
    expect(failed).toBe(boom);
    const third = await endOfTurn(session, second.sequence);
    expect(third.reason).toBe('interrupted');
    expect((await session.info()).status).toBe('idle');

    const all = await collect(session.events(), (e) => e.sequence === third.sequence);
    expectDense(all);
    expectNoUnparsed(all);
    // The session is still usable after three interrupted turns.
    expect((await session.turn('echo still here')).text).toBe('still here');
  });
});

/** The next turn.ended after `after`, with its reason. */
async function endOfTurn(session: { events: (o: { after: number }) => AsyncIterable<UniversalEvent> }, after: number): Promise<{ reason: unknown; sequence: number }> {
  const events = await collect(session.events({ after }), (e) => e.type === 'turn.ended');
  const ended = events.at(-1)!;
  if (ended.type !== 'turn.ended') throw new Error(`expected turn.ended, got ${ended.type}`);
  return { reason: ended.data.metadata?.reason, sequence: ended.sequence };
}
