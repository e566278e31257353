// Native resume through the daemon, with the mock as the agent: a session created with another
// session's `nativeSessionId` starts the mock on that native session (`--resume`), and the model
// (the mock) sees the earlier conversation. This is the path a restored session takes, tested
// without credentials; a resume that fails is a failed start, as for any agent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { assistantMessages, textOf } from '../../support/e2e-turns.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn } from '../../support/helpers.js';
import { expectProblem, sessionStarted } from '../../support/http-problems.js';

let app: App;
let home: string;
/** The agent's own store, per test: nothing lands in the real HOME. */
let env: Record<string, string>;

beforeEach(async () => {
  app = await makeApp();
  home = mkdtempSync(join(tmpdir(), 'mock-resume-'));
  env = { MOCK_AGENT_HOME: home };
});

afterEach(async () => {
  await app.app.close();
  rmSync(home, { recursive: true, force: true });
});

const replies = (events: UniversalEvent[]) => assistantMessages(events).map(textOf);

describe('mock: native resume through the daemon', () => {
  it('continues the native session of an earlier session, which the mock remembers', async () => {
    const a = await createMock(app, 'a', { env });
    const nativeId = a.nativeSessionId;
    expect(nativeId).toMatch(/^mock-[a-z0-9]{12}$/);
    expect(replies(await runTurn(app, 'a', 'Reply with exactly the single word ONE.'))).toEqual(['ONE']);
    expect(replies(await runTurn(app, 'a', 'echo two'))).toEqual(['two']);
    // The earlier agent is gone, as it is when the daemon restarts.
    expect((await post(app, '/v1/sessions/a/terminate')).statusCode).toBe(204);

    const b = await createMock(app, 'b', { env, nativeSessionId: nativeId });
    expect(b.nativeSessionId).toBe(nativeId);
    const turn = await runTurn(app, 'b', 'history');
    expect(replies(turn)).toEqual(['Earlier prompts in this session (2):\n1. "Reply with exactly the single word ONE."\n2. "echo two"']);

    const events = await getEvents(app, 'b');
    expect(sessionStarted(events).metadata).toMatchObject({ resumed: true, earlier_turns: 2 });
    expect(new Set(events.map((e) => e.native_session_id))).toEqual(new Set([nativeId]));
    expectNoUnparsed(events);
    expectNoUnparsed(await getEvents(app, 'a'));
  });

  it('starts an unresumed session without resume metadata', async () => {
    await createMock(app, 'fresh', { env });
    const events = await getEvents(app, 'fresh');
    expect(sessionStarted(events).metadata).not.toHaveProperty('resumed');
    expect(replies(await runTurn(app, 'fresh', 'history'))).toEqual(['No earlier prompts in this session.']);
    expectNoUnparsed(await getEvents(app, 'fresh'));
  });

  it('fails the create with a problem naming the session the mock does not have', async () => {
    const res = await post(app, '/v1/sessions/lost', { agent: 'mock', env, nativeSessionId: 'mock-gone0000000' });
    const problem = expectProblem(res, 502, 'agent_start_failed');
    expect(problem).toMatchObject({ agent: 'mock', nativeSessionId: 'mock-gone0000000' });
    expect(problem.detail).toContain('resuming its session mock-gone0000000');
    expect(problem.detail).toContain('mock: no session mock-gone0000000 to resume: no transcript at');
    // Nothing half-made is left behind.
    expect((await app.app.inject({ method: 'GET', url: '/v1/sessions/lost' })).statusCode).toBe(404);
  });
});
