// Codex's fork point (forkPoint: the native turn id to fork through) and which thread request a
// session starts with (thread/start, thread/resume, thread/fork). Pure; the real thing is in
// e2e-queue-steer-fork.test.ts.
import { describe, expect, it } from 'vitest';
import { codexForkPoint } from '../../../src/agents/codex/fork.js';
import { threadRequest } from '../../../src/agents/codex/session.js';
import type { UniversalEvent } from '../../../src/schema/events.js';

let sequence = 0;
const event = (type: 'turn.started' | 'turn.ended', turn: number, nativeTurnId?: string): UniversalEvent =>
  ({
    type,
    sequence: ++sequence,
    event_id: `evt_${sequence}`,
    time: '2026-01-01T00:00:00.000Z',
    session_id: 's',
    native_session_id: 'thread',
    source: 'agent',
    synthetic: false,
    raw: null,
    data: { turn_id: `turn_${turn}`, metadata: { ...(type === 'turn.ended' ? { reason: 'completed' } : {}), ...(nativeTurnId ? { native_turn_id: nativeTurnId } : {}) } },
  }) as UniversalEvent;

describe('codexForkPoint', () => {
  const events = [event('turn.started', 1, 'a'), event('turn.ended', 1, 'a'), event('turn.started', 2, 'b'), event('turn.ended', 2, 'b')];

  it("is the native id of the daemon turn it forks after", () => {
    expect(codexForkPoint(events, 2)).toBe('b');
    expect(codexForkPoint(events, 1)).toBe('a');
  });

  it('a turn that never reached Codex forks after the one before; none at all is no point', () => {
    const undelivered = [...events.slice(0, 2), event('turn.ended', 2)];
    expect(codexForkPoint(undelivered, 2)).toBe('a');
    expect(codexForkPoint([event('turn.ended', 1)], 1)).toBeUndefined();
  });

  it("a turn ended by the daemon (no id on turn.ended) has its turn.started's", () => {
    expect(codexForkPoint([event('turn.started', 1, 'a'), event('turn.ended', 1)], 1)).toBe('a');
  });
});

describe('threadRequest', () => {
  const launch = { thread: { cwd: '/w', approvalPolicy: 'never', sandbox: 'danger-full-access' } };

  it('starts, resumes, or forks through the fork point, with the session settings', () => {
    expect(threadRequest({}, launch)).toEqual(['thread/start', launch.thread]);
    expect(threadRequest({ nativeSessionId: 't1' }, launch)).toEqual(['thread/resume', { threadId: 't1', excludeTurns: true, ...launch.thread }]);
    const fork = { nativeSessionId: 't1', turns: 1, parentTurns: 2, point: 'turn-a' };
    expect(threadRequest({ fork }, launch)).toEqual(['thread/fork', { threadId: 't1', lastTurnId: 'turn-a', excludeTurns: true, ...launch.thread }]);
  });
});
