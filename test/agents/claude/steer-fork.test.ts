// Claude Code's steered messages in its stdout (src/agents/claude/convert-steer.ts) and its fork
// arguments and branch point (src/agents/claude/fork.ts), line by line. The lines are shaped like
// 2.1.337's (checked against the real CLI in the e2e file, which cannot hit the rare orderings here).
import { describe, expect, it } from 'vitest';
import { claudeConverter, type ClaudeState } from '../../../src/agents/claude/convert.js';
import { claudeArgs } from '../../../src/agents/claude/driver.js';
import { claudeForkPoint } from '../../../src/agents/claude/fork.js';
import type { Draft } from '../../../src/agents/types.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { convertLines } from '../../support/convert-lines.js';

function convert(lines: unknown[], state?: ClaudeState) {
  return convertLines(claudeConverter, lines, state);
}

const U = '22222222-2222-4222-8222-222222222222';
const init = { type: 'system', subtype: 'init', session_id: 'sess-1' };
const lifecycle = (state: string, uuid = U) => ({ type: 'command_lifecycle', command_uuid: uuid, state, uuid: `lc-${state}`, session_id: 'sess-1' });
const assistant = (id: string, text: string, uuid: string) => ({ type: 'assistant', uuid, message: { id, content: [{ type: 'text', text }] } });
const result = (text: string, subtype = 'success') => ({ type: 'result', subtype, is_error: subtype !== 'success', result: text });
const types = (events: Draft[]) => events.map((e) => (e.type === 'item.completed' ? `${e.type}:${e.item.key}` : e.type));

describe('claude steered messages (command_lifecycle)', () => {
  it('started before the result (injected beside a tool result): the turn ends at its result, as usual', () => {
    const { events } = convert([init, assistant('m1', 'running', 'a1'), lifecycle('queued'), lifecycle('started'), assistant('m2', 'saw it', 'a2'), lifecycle('completed'), result('saw it')]);
    expect(types(events)).toEqual(['session.started', 'item.started', 'item.started', 'item.completed:m1', 'item.completed:m2', 'turn.ended']);
    expect(events.at(-1)).toMatchObject({ data: { metadata: { assistant_uuid: 'a2' } } });
  });

  it('still queued at the result: that result is held back and the turn ends with the steered message’s answer', () => {
    const lines = [init, assistant('m1', 'part one', 'a1'), lifecycle('queued'), result('part one'), lifecycle('started'), init, assistant('m2', 'steer answer', 'a2'), result('steer answer'), lifecycle('completed')];
    const { events, state } = convert(lines);
    expect(types(events)).toEqual(['session.started', 'item.started', 'item.completed:m1', 'session.started', 'item.started', 'item.completed:m2', 'turn.ended']);
    expect(events.at(-1)).toMatchObject({ data: { metadata: { reason: 'completed', assistant_uuid: 'a2' } } });
    expect(state.steer).toEqual({ busy: false, queued: [], late: [], orphan: false });
  });

  it('cancelled (our interrupt cancels what is queued): an error says it was not delivered, the turn ends at its result', () => {
    const { events } = convert([init, assistant('m1', 'part one', 'a1'), lifecycle('queued'), lifecycle('cancelled'), result('', 'error_during_execution')]);
    expect(types(events)).toEqual(['session.started', 'item.started', 'error', 'item.completed:m1', 'error', 'turn.ended']);
    expect(events[2]).toMatchObject({ type: 'error', data: { code: 'claude_steer_cancelled' } });
  });

  it('first heard of after the result (the steer crossed the turn’s end): its own turn is dropped, an error carries its answer', () => {
    const before = convert([init, assistant('m1', 'done', 'a1'), result('done')]);
    const late = convert([lifecycle('queued'), lifecycle('started'), init, assistant('m2', 'late answer', 'a2'), result('late answer'), lifecycle('completed')], before.state);
    expect(late.events).toEqual([{ type: 'error', data: { code: 'claude_steer_late', message: expect.stringContaining('Its answer: late answer') } }]);
    // The next turn (the daemon's) converts normally again.
    const next = convert([init, assistant('m3', 'next', 'a3'), result('next')], late.state);
    expect(types(next.events)).toEqual(['session.started', 'item.started', 'item.completed:m3', 'turn.ended']);
  });

  it('lifecycle lines of messages it never saw queued during a turn, or repeated ones, add nothing', () => {
    const { events } = convert([init, lifecycle('completed', 'other'), lifecycle('started', 'other'), lifecycle('cancelled', 'x'), assistant('m1', 'ok', 'a1'), result('ok')]);
    expect(types(events)).toEqual(['session.started', 'item.started', 'item.completed:m1', 'turn.ended']);
  });
});

describe('claude fork', () => {
  const ended = (sequence: number, turn: string, uuid?: string) =>
    ({ type: 'turn.ended', sequence, data: { turn_id: turn, metadata: { reason: 'completed', ...(uuid ? { assistant_uuid: uuid } : {}) } } }) as unknown as UniversalEvent;

  it('forkPoint: the assistant uuid of the turn to branch after; none when that turn printed no assistant line', () => {
    const events = [ended(5, 'turn_1', 'a1'), ended(9, 'turn_2', 'a2'), ended(12, 'turn_3')];
    expect(claudeForkPoint(events, 1)).toBe('a1');
    expect(claudeForkPoint(events, 2)).toBe('a2');
    expect(claudeForkPoint(events, 3)).toBeUndefined();
    expect(claudeForkPoint(events, 4)).toBeUndefined();
  });

  it('args: --resume with --fork-session, a new --session-id and the cut; a resume never forks', () => {
    const base = { agentMode: 'default', permissionMode: 'default' };
    const args = claudeArgs({ ...base, fork: { nativeSessionId: 'parent', turns: 1, parentTurns: 2, point: 'a1' } });
    expect(args.slice(-7)).toEqual(['--resume', 'parent', '--fork-session', '--session-id', expect.stringMatching(/^[0-9a-f-]{36}$/), '--resume-session-at', 'a1']);
    expect(claudeArgs({ ...base, nativeSessionId: 'own' }).slice(-2)).toEqual(['--resume', 'own']);
  });
});
