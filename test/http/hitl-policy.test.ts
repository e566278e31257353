// Headless runs never hang on a prompt: the per-session (or daemon-wide) policy answers
// permissions and questions itself, and a timeout resolves whatever nobody answered, each with a
// resolution event that says why. Ended sessions are forgotten after their TTL.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';

let app: App | undefined;
afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

async function turnToEnd(a: App, id: string, message: string): Promise<UniversalEvent[]> {
  const before = (await getEvents(a, id)).length;
  expect((await post(a, `/v1/sessions/${id}/messages`, { message })).statusCode).toBe(204);
  return waitFor(async () => {
    const events = (await getEvents(a, id)).slice(before);
    return events.some((e) => e.type === 'turn.ended') ? events : undefined;
  }, 5000, `turn '${message}'`);
}

const resolved = (events: UniversalEvent[], type: 'permission.resolved' | 'question.resolved') => events.find((e) => e.type === type);
const lastText = (events: UniversalEvent[]) => {
  const done = events.filter((e) => e.type === 'item.completed' && e.data.item.role === 'assistant').at(-1);
  return done?.type === 'item.completed' ? done.data.item.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : '';
};

describe('permission policy', () => {
  it('allow: the daemon approves, the agent goes on, the resolution says it was the policy', async () => {
    app = await makeApp();
    await createMock(app, 's1', { permissionPolicy: 'allow' });
    const events = await turnToEnd(app, 's1', 'permission');
    expect(resolved(events, 'permission.resolved')).toMatchObject({
      source: 'daemon',
      data: { permission_id: 'perm_1', status: 'approved', metadata: { reply: 'once', reason: 'policy' } },
    });
    expect(lastText(events)).toBe('Permission granted; wrote notes.txt.');
    expectNoUnparsed(events);
  });

  it('deny, as the daemon default: the agent is told no', async () => {
    app = await makeApp({ config: { permissionPolicy: 'deny' } });
    await createMock(app, 's1');
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions/s1' })).json()).toMatchObject({ permissionPolicy: 'deny' });
    const events = await turnToEnd(app, 's1', 'permission');
    expect(resolved(events, 'permission.resolved')).toMatchObject({ data: { status: 'denied', metadata: { reply: 'reject', reason: 'policy' } } });
    expect(lastText(events)).toBe('Permission denied; did not write notes.txt.');
  });

  it('allow answers a question with its first option; deny rejects it', async () => {
    app = await makeApp();
    await createMock(app, 'yes', { permissionPolicy: 'allow' });
    const answered = await turnToEnd(app, 'yes', 'question');
    expect(resolved(answered, 'question.resolved')).toMatchObject({ data: { status: 'answered', response: 'red' } });
    expect(lastText(answered)).toBe('You answered: red');
    await createMock(app, 'no', { permissionPolicy: 'deny' });
    const rejected = await turnToEnd(app, 'no', 'question');
    expect(resolved(rejected, 'question.resolved')).toMatchObject({ data: { status: 'rejected' } });
  });
});

describe('HITL timeout', () => {
  it('denies a permission nobody answered, and the session goes on', async () => {
    app = await makeApp();
    await createMock(app, 's1', { hitlTimeoutMs: 150 });
    const started = Date.now();
    const events = await turnToEnd(app, 's1', 'permission');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(resolved(events, 'permission.resolved')).toMatchObject({ data: { status: 'denied', metadata: { reason: 'timeout' } } });
    expect(resolved(events, 'permission.resolved')!.raw).toBeNull();
    const raw = (await getEvents(app, 's1', 0, true)).find((e) => e.type === 'permission.resolved')!.raw;
    expect(raw).toEqual({ reply: 'reject', by: 'timeout' });
    expect((await runTurn(app, 's1', 'echo still here')).some((e) => e.type === 'turn.ended')).toBe(true);
  });

  it('rejects a question nobody answered', async () => {
    app = await makeApp({ config: { hitlTimeoutMs: 100 } });
    await createMock(app, 's1');
    const events = await turnToEnd(app, 's1', 'question');
    expect(resolved(events, 'question.resolved')).toMatchObject({ data: { status: 'rejected' } });
    expect(lastText(events)).toBe('Question rejected.');
  });

  it('does not fire after the client answered in time', async () => {
    app = await makeApp();
    await createMock(app, 's1', { hitlTimeoutMs: 300 });
    await post(app, '/v1/sessions/s1/messages', { message: 'permission' });
    await waitFor(async () => (await getEvents(app!, 's1')).some((e) => e.type === 'permission.requested'), 5000, 'the request');
    expect((await post(app, '/v1/sessions/s1/permissions/perm_1/reply', { reply: 'once' })).statusCode).toBe(204);
    await new Promise((r) => setTimeout(r, 450));
    const all = (await getEvents(app, 's1')).filter((e) => e.type === 'permission.resolved');
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ data: { status: 'approved', metadata: { reply: 'once' } } });
    expect((all[0]!.data as { metadata: Record<string, unknown> }).metadata.reason).toBeUndefined();
  });
});

describe('ended-session TTL', () => {
  it('forgets a session once it has been ended longer than the TTL, and only then', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    app = await makeApp({ clock: { now: () => new Date(now) }, config: { endedSessionTtlMs: 60_000 } });
    await createMock(app, 'old');
    await createMock(app, 'live');
    expect((await post(app, '/v1/sessions/old/terminate')).statusCode).toBe(204);
    now += 59_000;
    app.sessions.sweep();
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions/old' })).statusCode).toBe(200);
    now += 2_000;
    app.sessions.sweep();
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions/old' })).statusCode).toBe(404);
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions/live' })).statusCode).toBe(200);
  });
});
