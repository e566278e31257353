// Qwen Code's fork, the pure parts (src/agents/qwen/fork.ts): where the branch point is in the
// parent's events, the request, and the answer naming the new session, which the driver's
// converter reports as session.started. The real CLI forks in test/agents/acp/builtin-e2e-delivery.ts.
import { describe, expect, it } from 'vitest';
import { createAcpConverter } from '../../../src/agents/acp/convert.js';
import { QWEN_BRANCH, qwenFork } from '../../../src/agents/qwen/fork.js';
import type { UniversalEvent } from '../../../src/schema/events.js';

const answer = (checkpointUuid?: string) => ({
  jsonrpc: '2.0',
  id: 7,
  result: { stopReason: checkpointUuid ? 'end_turn' : 'cancelled', ...(checkpointUuid ? { _meta: { 'qwen.branchPoint': { assistantRecordUuid: 'a', checkpointUuid } } } : {}) },
});
const ended = (turn: number, raw: unknown) => ({ type: 'turn.ended', data: { turn_id: `turn_${turn}`, metadata: { reason: 'completed' } }, raw }) as unknown as UniversalEvent;

describe('qwen fork', () => {
  it("finds turn N's checkpoint in the session/prompt answer its turn.ended came from", () => {
    const events = [ended(1, answer('cp-1')), ended(2, answer()), ended(3, answer('cp-3'))];
    expect(qwenFork.point!(events, 1)).toBe('cp-1');
    expect(qwenFork.point!(events, 3)).toBe('cp-3');
    // An interrupted turn has no branch point: refused, never branched at another turn.
    expect(qwenFork.point!(events, 2)).toBeUndefined();
    expect(qwenFork.point!(events, 4)).toBeUndefined();
    expect(qwenFork.point!([ended(1, null)], 1)).toBeUndefined();
  });

  it('asks for a branch at the point, and reads the new session from the answer', () => {
    expect(qwenFork.request({ nativeSessionId: 'parent', turns: 1, parentTurns: 2, point: 'cp-1' })).toEqual({ method: QWEN_BRANCH, params: { sessionId: 'parent', atRecordId: 'cp-1' } });
    expect(qwenFork.sessionId({ newSessionId: 'new', title: 'Q1(1)', displayName: 'Q1(1)' })).toBe('new');
    expect(qwenFork.sessionId({ stopReason: 'end_turn' })).toBeUndefined();
    expect(qwenFork.sessionId({ sessionId: 'x' })).toBeUndefined();
  });

  it("the driver's converter names the new session with the branch answer", () => {
    const converter = createAcpConverter({ forkedSessionId: qwenFork.sessionId });
    const { events } = converter.convert(converter.initial(), { jsonrpc: '2.0', id: 2, result: { newSessionId: 'new', title: 't', displayName: 't' } });
    expect(events).toEqual([{ type: 'session.started', native_session_id: 'new', data: { metadata: {} } }]);
    // The generic converter reads no such answer.
    const plain = createAcpConverter();
    expect(plain.convert(plain.initial(), { jsonrpc: '2.0', id: 2, result: { newSessionId: 'new', title: 't', displayName: 't' } }).events).toEqual([]);
  });
});
