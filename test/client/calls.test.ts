// Every call of @agentwire/client against a real daemon process running the mock agent: agents,
// sessions, messages, events, HITL replies, interrupt, terminate, delete; and how failures come
// back: problem+json fields, 401, 404, network errors, timeouts and aborts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentwireError, type UniversalEvent } from '../../client/src/index.js';
import { killDaemons, removeInstall, setUpInstall } from '../daemon-process.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

beforeAll(setUpInstall, 180_000);
afterAll(removeInstall);
afterEach(killDaemons);

async function rejection(promise: Promise<unknown>): Promise<AgentwireError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(AgentwireError.is(error), String(error)).toBe(true);
  return error as AgentwireError;
}

describe('@agentwire/client calls against a real daemon', () => {
  it('health, agents.list, models and modes', async () => {
    const { client } = await startClientDaemon();
    expect((await client.health()).status).toBe('ok');
    const agents = await client.agents.list();
    expect(agents.find((a) => a.id === 'mock')?.installed).toBe(true);
    const models = await client.agents.models('mock');
    expect(models.models.length).toBeGreaterThan(0);
    const modes = await client.agents.modes('mock');
    expect(modes.modes.length).toBeGreaterThan(0);
  });

  it('agents.install of the mock is the daemon’s 400, as an AgentwireError', async () => {
    const { client } = await startClientDaemon();
    const error = await rejection(client.agents.install('mock'));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
  });

  it('sessions: create (both forms), get, list, send, events, delete', async () => {
    const { client } = await startClientDaemon();
    const generated = await client.sessions.create({ agent: 'mock' });
    expect(generated.id).toMatch(/^sess_/);
    const named = await client.sessions.create('named-1', { agent: 'mock', title: 'named' });
    expect(named.id).toBe('named-1');
    expect((await named.info()).title).toBe('named');
    expect((await client.sessions.get('named-1')).id).toBe('named-1');
    expect((await client.sessions.list()).map((s) => s.sessionId).sort()).toEqual([generated.id, 'named-1'].sort());

    await named.send('Reply with exactly the single word OK.');
    const events = await collect(named.events(), (e) => e.type === 'turn.ended');
    expectDense(events);
    expectNoUnparsed(events);
    const done = events.at(-1)!;
    expect(done.type === 'turn.ended' && done.data.metadata?.reason).toBe('completed');

    // A full MessageRequest works as well as a string; `after` skips what was already seen.
    await named.send({ message: 'echo second' });
    const second = await collect(named.events({ after: done.sequence }), (e) => e.type === 'turn.ended');
    expectDense(second, done.sequence + 1);

    await client.sessions.delete('named-1');
    const gone = await rejection(client.sessions.get('named-1'));
    expect(gone.status).toBe(404);
    expect(gone.code).toBe('session_not_found');
    expect(gone.fields.sessionId).toBe('named-1');
    await generated.delete();
    expect(await client.sessions.list()).toEqual([]);
  });

  it('replyPermission, replyQuestion, rejectQuestion through send + events', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const seen: UniversalEvent[] = [];
    let after = 0;
    const until = async (type: string) => {
      const got = await collect(session.events({ after }), (e) => e.type === type);
      after = got.at(-1)!.sequence;
      seen.push(...got);
      return got.at(-1)!;
    };

    await session.send('permission');
    const asked = await until('permission.requested');
    if (asked.type !== 'permission.requested') throw new Error('expected a permission');
    await session.replyPermission(asked.data.permission_id, 'once');
    await until('turn.ended');
    const again = await rejection(session.replyPermission(asked.data.permission_id, 'once'));
    expect(again.status).toBe(409);

    await session.send('question');
    const question = await until('question.requested');
    if (question.type !== 'question.requested') throw new Error('expected a question');
    await session.replyQuestion(question.data.question_id, [['green']]);
    await until('turn.ended');

    await session.send('question');
    const second = await until('question.requested');
    if (second.type !== 'question.requested') throw new Error('expected a question');
    await session.rejectQuestion(second.data.question_id);
    await until('turn.ended');

    const resolved = seen.filter((e) => e.type === 'permission.resolved' || e.type === 'question.resolved').map((e) => (e.data as { status: string }).status);
    expect(resolved).toEqual(['approved', 'answered', 'rejected']);
    expectDense(seen);
    expectNoUnparsed(seen);
  });
});
