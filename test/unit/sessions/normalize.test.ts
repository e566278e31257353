import { describe, expect, it } from 'vitest';
import type { Draft, DraftItem } from '../../../src/agents/types.js';
import type { Capabilities } from '../../../src/schema/agents.js';
import type { Normalized } from '../../../src/sessions/event-batch.js';
import { Normalizer } from '../../../src/sessions/normalize.js';
import { counterIds } from '../../../src/util/deps.js';
import { mockCapabilities } from '../../../src/agents/mock/capabilities.js';

/** Capabilities of an agent that reports almost nothing itself (the worst case for gap filling). */
const bare: Capabilities = { ...mockCapabilities, sessionLifecycle: false, streamingDeltas: false, userMessages: false, nativeTurnStart: false, nativeHitlResolution: false };

const make = (caps: Partial<Capabilities> = {}) => new Normalizer({ ...bare, ...caps }, counterIds());
const brief = (out: Normalized[]) => out.map((n) => [n.event.type, n.event.source, n.event.synthetic]);
const assistant = (key: string, text: string, extra: Partial<DraftItem> = {}): DraftItem => ({
  key, native_item_id: key, kind: 'message', role: 'assistant', content: [{ type: 'text', text }], status: 'completed', ...extra,
});
const input = { message: 'hi', attachments: [] };

describe('Normalizer', () => {
  it('synthesises session.started only for agents without their own', () => {
    expect(brief(make().sessionCreated({ agent: 'x' }, null))).toEqual([['session.started', 'daemon', true]]);
    expect(make({ sessionLifecycle: true }).sessionCreated({}, null)).toEqual([]);
  });

  it('dedupes a repeated native session.started and stamps its native id', () => {
    const n = make({ sessionLifecycle: true });
    const start: Draft = { type: 'session.started', native_session_id: 'nat-1', data: { metadata: {} } };
    const out = n.agent([start, start], { line: 1 });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ nativeSessionId: 'nat-1', raw: { line: 1 }, event: { source: 'agent', synthetic: false } });
  });

  it('brackets a turn and synthesises the user message (started, full delta, completed)', () => {
    const n = make();
    const out = n.turnStarted({ message: 'hi', attachments: [{ path: '/a.png', mime: 'image/png' }, { path: '/b.txt' }] }, { message: 'hi' });
    expect(brief(out)).toEqual([
      ['turn.started', 'daemon', true],
      ['item.started', 'daemon', true],
      ['item.delta', 'daemon', true],
      ['item.completed', 'daemon', true],
    ]);
    expect(out[0]!.event.data).toEqual({ turn_id: 'turn_1' });
    expect(out[3]!.event.data).toEqual({
      item: {
        item_id: 'itm_1', native_item_id: null, parent_id: null, kind: 'message', role: 'user', status: 'completed',
        content: [{ type: 'text', text: 'hi' }, { type: 'image', path: '/a.png', mime: 'image/png' }, { type: 'file_ref', path: '/b.txt', action: 'read' }],
      },
    });
    expect(out.every((o) => (o.raw as { message: string }).message === 'hi')).toBe(true);
    expect(n.turnActive).toBe(true);
  });

  it('leaves turn starts and user messages to agents that report them', () => {
    const n = make({ nativeTurnStart: true, userMessages: true });
    expect(n.turnStarted(input, null)).toEqual([]);
    const out = n.agent([{ type: 'turn.started', data: {} }], null);
    expect(out.map((o) => o.event)).toEqual([{ type: 'turn.started', source: 'agent', synthetic: false, data: { turn_id: 'turn_1' } }]);
  });

  it('adds item.started and one full-text delta before a bare completion', () => {
    const n = make();
    n.turnStarted(input, null);
    const out = n.agent([{ type: 'item.completed', item: assistant('m1', 'Hello') }], 'native');
    expect(out.map((o) => [o.event.type, o.event.source, o.event.data])).toEqual([
      ['item.started', 'daemon', { item: { item_id: 'itm_2', native_item_id: 'm1', parent_id: null, kind: 'message', role: 'assistant', content: [], status: 'in_progress' } }],
      ['item.delta', 'daemon', { item_id: 'itm_2', native_item_id: 'm1', delta: 'Hello' }],
      ['item.completed', 'agent', { item: { item_id: 'itm_2', native_item_id: 'm1', parent_id: null, kind: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hello' }], status: 'completed' } }],
    ]);
    expect(out.every((o) => o.raw === 'native')).toBe(true);
  });

  it('forwards native deltas and adds no synthetic one', () => {
    const n = make({ streamingDeltas: true });
    const start: DraftItem = { ...assistant('m1', ''), content: [], status: 'in_progress' };
    const out = n.agent(
      [
        { type: 'item.started', item: start },
        { type: 'item.delta', key: 'm1', native_item_id: 'm1', delta: 'He' },
        { type: 'item.delta', key: 'm1', native_item_id: 'm1', delta: 'llo' },
        { type: 'item.completed', item: assistant('m1', 'Hello') },
      ],
      null,
    );
    expect(brief(out)).toEqual([
      ['item.started', 'agent', false],
      ['item.delta', 'agent', false],
      ['item.delta', 'agent', false],
      ['item.completed', 'agent', false],
    ]);
  });

  it('opens a stub item when a delta arrives before its item (OpenCode ordering rule)', () => {
    const n = make({ streamingDeltas: true });
    const out = n.agent([{ type: 'item.delta', key: 'p1', native_item_id: 'p1', delta: 'x' }], null);
    expect(brief(out)).toEqual([['item.started', 'daemon', true], ['item.delta', 'agent', false]]);
    expect(out[0]!.event.data).toMatchObject({ item: { kind: 'message', role: 'assistant', status: 'in_progress' } });
  });

  it('drops repeated starts and completions of one item and keeps one itm_ id per native key', () => {
    const n = make();
    const item = { ...assistant('m1', 'a'), kind: 'status' as const, role: null };
    const out = n.agent([{ type: 'item.started', item }, { type: 'item.started', item }, { type: 'item.completed', item }, { type: 'item.completed', item }], null);
    expect(brief(out)).toEqual([['item.started', 'agent', false], ['item.completed', 'agent', false]]);
    expect(out.map((o) => (o.event.data as { item: { item_id: string } }).item.item_id)).toEqual(['itm_1', 'itm_1']);
  });

  it('maps parent keys onto the parent item_id', () => {
    const n = make();
    const out = n.agent(
      [
        { type: 'item.completed', item: assistant('m1', 'calling') },
        { type: 'item.completed', item: { key: 'c1', native_item_id: 'c1', parent_key: 'm1', kind: 'tool_call', role: 'assistant', content: [{ type: 'tool_call', name: 't', arguments: '{}', call_id: 'c1' }], status: 'completed' } },
      ],
      null,
    );
    const tool = out.find((o) => o.event.type === 'item.completed' && (o.event.data as { item: { kind: string } }).item.kind === 'tool_call')!;
    // A tool item starts with its full content: there is no text to stream.
    expect(out[3]!.event).toMatchObject({ type: 'item.started', data: { item: { kind: 'tool_call', content: [{ type: 'tool_call' }] } } });
    expect(tool.event.data).toMatchObject({ item: { item_id: 'itm_2', parent_id: 'itm_1' } });
  });

  it("an agent's id that starts like the daemon's own is shown escaped, one to one; a reused id with other content is an error event", () => {
    const n = make();
    n.turnStarted(input, null);
    const ask = (permission_id: string, action = 'write'): Draft => ({ type: 'permission.requested', data: { permission_id, action, status: 'requested' } });
    const ids = (out: Normalized[]) => out.flatMap((o) => (o.event.type === 'permission.requested' ? [o.event.data.permission_id] : []));
    expect(ids(n.agent([ask('budget_1'), ask('agent~x'), ask('plain')], null))).toEqual(['agent~budget_1', 'agent~agent~x', 'plain']);
    // The daemon's own budget request is opened under its id, beside the agent's.
    const budget = n.budgetRequested({ permission_id: 'budget_1', action: 'budget', status: 'requested' });
    expect(budget.map((o) => o.event.type)).toEqual(['permission.requested']);
    expect(n.hitl.permissionState('budget_1')).toBe('pending');
    expect(n.hitl.permissionState('agent~budget_1')).toBe('pending');
    // Repeated as it was: a repeat. Under the same id with other content: said so, never silently.
    expect(n.agent([ask('plain')], null)).toEqual([]);
    const reused = n.agent([ask('plain', 'shell')], null);
    expect(reused.map((o) => [o.event.type, o.event.type === 'error' ? o.event.data.code : ''])).toEqual([['error', 'hitl_id_reused']]);
  });

  it("usage out of range is an agent.unparsed warning and is not counted; a held step still goes on", () => {
    const n = make();
    n.turnStarted(input, null);
    const out = n.agent([{ type: 'usage', usage: { input_tokens: 1e300, output_tokens: 1 }, held: true }], null);
    expect(out.map((o) => o.event.type)).toEqual(['agent.unparsed']);
    expect(out[0]!.event.data).toMatchObject({ location: 'normalizer.usage', error: expect.stringContaining('input_tokens 1e+300') });
    expect(n.takeHeldStep()).toBe(true);
    expect(n.usage.tokens).toBe(0);
    const ended = n.agent([{ type: 'turn.ended', data: { metadata: { reason: 'completed', usage: { input_tokens: 5, output_tokens: 1 }, cost_usd: -1 } } }], null);
    expect(ended.map((o) => o.event.type)).toEqual(['agent.unparsed', 'turn.ended']);
    expect(ended[1]!.event.data).not.toHaveProperty('metadata.usage');
    expect(n.usage.tokens).toBe(0);
  });

  it('tracks pending permissions and synthesises the resolution for agents that do not report it', () => {
    const n = make();
    n.turnStarted(input, null);
    const ask: Draft = { type: 'permission.requested', data: { permission_id: 'p1', action: 'write', status: 'requested' } };
    expect(n.agent([ask, ask], null)).toHaveLength(1);
    expect(n.hitl.permissionState('p1')).toBe('pending');
    const out = n.permissionReplied('p1', 'reject', { reply: 'reject' });
    expect(out.map((o) => o.event)).toEqual([
      { type: 'permission.resolved', source: 'daemon', synthetic: true, data: { permission_id: 'p1', action: 'write', status: 'denied', metadata: { reply: 'reject' } } },
    ]);
    expect(n.hitl.permissionState('p1')).toBe('resolved');
    expect(n.hitl.permissionState('nope')).toBe('unknown');
  });

  it('waits for the native resolution when the agent reports it', () => {
    const n = make({ nativeHitlResolution: true });
    n.agent([{ type: 'question.requested', data: { question_id: 'q1', prompt: 'Which?', options: ['a'], status: 'requested' } }], null);
    expect(n.questionReplied('q1', [['a']], null)).toEqual([]);
    expect(n.hitl.questionState('q1')).toBe('resolved');
  });

  it('answers a question with the joined answers and rejects with no response', () => {
    const n = make();
    const q = (id: string): Draft => ({ type: 'question.requested', data: { question_id: id, prompt: 'Which?', options: ['a', 'b'], status: 'requested' } });
    n.agent([q('q1'), q('q2')], null);
    expect(n.questionReplied('q1', [['a', 'b']], null)[0]!.event.data).toEqual({ question_id: 'q1', prompt: 'Which?', options: ['a', 'b'], status: 'answered', response: 'a, b' });
    expect(n.questionReplied('q2', null, null)[0]!.event.data).toEqual({ question_id: 'q2', prompt: 'Which?', options: ['a', 'b'], status: 'rejected' });
  });

  it('at turn end fails open items (keeping streamed text) and cancels open HITL requests', () => {
    const n = make({ streamingDeltas: true });
    n.turnStarted(input, null);
    n.agent([{ type: 'item.delta', key: 'm1', native_item_id: 'm1', delta: 'partial' }], null);
    n.agent([{ type: 'question.requested', data: { question_id: 'q1', prompt: 'Which?', options: [], status: 'requested' } }], null);
    const out = n.agent([{ type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } }], null);
    expect(out.map((o) => [o.event.type, o.event.data])).toEqual([
      ['item.completed', { item: { item_id: 'itm_2', native_item_id: 'm1', parent_id: null, kind: 'message', role: 'assistant', content: [{ type: 'text', text: 'partial' }], status: 'failed' } }],
      ['question.resolved', { question_id: 'q1', prompt: 'Which?', options: [], status: 'rejected' }],
      ['turn.ended', { turn_id: 'turn_1', metadata: { reason: 'interrupted' } }],
    ]);
    expect(n.turnActive).toBe(false);
    // A turn end with no turn running is noise and is dropped.
    expect(n.agent([{ type: 'turn.ended', data: { metadata: { reason: 'completed' } } }], null)).toEqual([]);
  });

  it('ends a turn the client interrupted as interrupted, even when the agent reports it failed', () => {
    const n = make();
    const ended = (reason: 'error' | 'completed') =>
      n.agent([{ type: 'turn.ended', data: { metadata: { reason, subtype: 'error_during_execution' } } }], null).map((o) => o.event.data);
    n.turnStarted(input, null);
    n.interruptRequested();
    expect(ended('error')).toEqual([{ turn_id: 'turn_1', metadata: { reason: 'interrupted', subtype: 'error_during_execution' } }]);
    // A turn that completed before the interrupt took effect did complete; the next one is not affected.
    n.turnStarted(input, null);
    n.interruptRequested();
    expect(ended('completed')).toEqual([{ turn_id: 'turn_2', metadata: { reason: 'completed', subtype: 'error_during_execution' } }]);
    n.turnStarted(input, null);
    expect(ended('error')).toEqual([{ turn_id: 'turn_3', metadata: { reason: 'error', subtype: 'error_during_execution' } }]);
  });

  it('reports a crash as error, turn end and session end with exit code and stderr', () => {
    const n = make();
    n.turnStarted(input, null);
    const stderr = { head: 'boom', truncated: false, total_lines: 1 };
    const out = n.processExited({ exitCode: 3, signal: null, stderr, requested: false });
    expect(out.map((o) => [o.event.type, o.event.source, o.event.data])).toEqual([
      ['error', 'daemon', { message: 'agent process exited with code 3', code: 'agent_exited', details: { exit_code: 3, signal: null } }],
      ['turn.ended', 'daemon', { turn_id: 'turn_1', metadata: { reason: 'error' } }],
      ['session.ended', 'daemon', { reason: 'error', terminated_by: 'agent', message: 'agent process exited with code 3', exit_code: 3, stderr }],
    ]);
    expect(n.ended).toBe(true);
  });

  it('reports a requested exit as terminated by the daemon, once', () => {
    const n = make();
    const exit = { exitCode: null, signal: 'SIGTERM', stderr: { truncated: false, total_lines: 0 }, requested: true };
    expect(n.processExited(exit).map((o) => o.event.data)).toEqual([{ reason: 'terminated', terminated_by: 'daemon', exit_code: null }]);
    expect(n.processExited(exit)).toEqual([]);
  });

  it('does not add a session end after the agent ended the session itself', () => {
    const n = make();
    expect(brief(n.agent([{ type: 'session.ended', data: { reason: 'completed', terminated_by: 'agent' } }], null))).toEqual([['session.ended', 'agent', false]]);
    expect(n.processExited({ exitCode: 0, signal: null, stderr: { truncated: false, total_lines: 0 }, requested: false })).toEqual([]);
  });

  it('marks agent.unparsed as a daemon event whatever the converter said', () => {
    const out = make().agent([{ type: 'agent.unparsed', data: { error: 'not JSON', location: 'x.convert' } }], 'garbage');
    expect(out.map((o) => [o.event.source, o.event.synthetic, o.raw])).toEqual([['daemon', true, 'garbage']]);
  });

  it('takes the native session id from a later, dropped start (agents that name it only with their first turn)', () => {
    const n = make({ sessionLifecycle: true });
    expect(n.agent([{ type: 'session.started', data: { metadata: { version: '1' } } }], null)[0]).not.toHaveProperty('nativeSessionId');
    expect(n.agent([{ type: 'session.started', native_session_id: 'nat-9', data: {} }], null)).toEqual([]);
    const next = n.agent([{ type: 'error', data: { message: 'x' } }], null);
    expect(next[0]).toMatchObject({ nativeSessionId: 'nat-9' });
    expect(n.agent([{ type: 'error', data: { message: 'y' } }], null)[0]).not.toHaveProperty('nativeSessionId');
  });

  it('closes a turn the agent never received, with an error saying so', () => {
    const n = make();
    n.turnStarted(input, null);
    expect(n.turnAborted('pipe closed').map((o) => [o.event.type, o.event.data])).toEqual([
      ['error', { message: 'pipe closed', code: 'turn_not_delivered' }],
      ['turn.ended', { turn_id: 'turn_1', metadata: { reason: 'error' } }],
    ]);
    expect(n.turnActive).toBe(false);
  });
  it('an agent that announces its own turns: a turn ended before it did still gets one turn.started, first', () => {
    const n = make({ nativeTurnStart: true, userMessages: true });
    expect(n.turnStarted(input, null)).toEqual([]);
    expect(brief(n.turnAborted('pipe closed'))).toEqual([
      ['turn.started', 'daemon', true],
      ['error', 'daemon', true],
      ['turn.ended', 'daemon', true],
    ]);
    // Announced by the agent: the daemon adds none, and a repeated native start is dropped.
    n.turnStarted(input, null);
    const started: Draft = { type: 'turn.started', data: { turn_id: 'native' } };
    expect(brief(n.agent([started, started], null))).toEqual([['turn.started', 'agent', false]]);
    expect(brief(n.resumeFailed('gone'))).toEqual([
      ['error', 'daemon', true],
      ['turn.ended', 'daemon', true],
      ['session.ended', 'daemon', true],
    ]);
  });

  it('restores a snapshot and closes what was open when the agent is gone (daemon restart)', () => {
    const first = make();
    first.turnStarted(input, null);
    first.agent([{ type: 'permission.requested', data: { permission_id: 'p1', action: 'write', status: 'requested' } }], null);
    const snapshot = first.snapshot();
    expect(snapshot).toMatchObject({ turnId: 'turn_1', turnAnnounced: true, turnCount: 1, permissions: [{ permission_id: 'p1' }] });
    const second = make();
    second.restore(snapshot, false);
    expect(second.turnActive).toBe(true);
    const out = second.agentGone('daemon_restarted');
    expect(out.map((o) => [o.event.type, o.event.type === 'error' ? o.event.data.code : o.event.type === 'turn.ended' ? o.event.data.metadata : o.event.type === 'permission.resolved' ? o.event.data.metadata : null])).toEqual([
      ['error', 'daemon_restarted'],
      ['permission.resolved', { reason: 'daemon_restarted' }],
      ['turn.ended', { reason: 'error' }],
    ]);
    expect(second.turnActive).toBe(false);
    expect(second.hitl.permissionState('p1')).toBe('resolved');
    // The next turn continues the numbering.
    expect(second.turnStarted(input, null)[0]?.event.data).toEqual({ turn_id: 'turn_2' });
  });

  describe('sub-agents', () => {
    const call: DraftItem = { key: 'call_1', native_item_id: 'call_1', kind: 'tool_call', role: 'assistant', content: [], status: 'completed' };
    const start: Draft = { type: 'subagent.started', key: 'a1', parent_key: 'call_1', native_subagent_id: 'a1', data: { description: 'd' } };

    it('maps keys to sub_ ids, parents to the call, tags the work, dedupes starts and ends', () => {
      const n = make();
      n.turnStarted(input, null);
      const out = n.agent([{ type: 'item.completed', item: call }, start, start, { type: 'item.completed', item: assistant('m1', 'hi'), subagent_key: 'a1' }, { type: 'subagent.ended', key: 'a1', data: { outcome: 'completed' } }, { type: 'subagent.ended', key: 'a1', data: { outcome: 'failed' } }], null);
      const callId = (out[1]!.event.data as { item: { item_id: string } }).item.item_id;
      const started = out.filter((o) => o.event.type === 'subagent.started');
      expect(started.map((o) => o.event.data)).toEqual([{ subagent_id: 'sub_1', parent_item_id: callId, native_subagent_id: 'a1', description: 'd' }]);
      const inside = out.filter((o) => o.event.type.startsWith('item.') && (o.event.data as { item?: { native_item_id: string } }).item?.native_item_id !== 'call_1');
      expect(inside.map((o) => o.event.type)).toEqual(['item.started', 'item.delta', 'item.completed']);
      expect(inside.every((o) => (o.event.data as { subagent_id?: string }).subagent_id === 'sub_1')).toBe(true);
      expect(out.filter((o) => o.event.type === 'subagent.ended').map((o) => o.event.data)).toEqual([{ subagent_id: 'sub_1', parent_item_id: callId, outcome: 'completed' }]);
    });

    it('starts a sub-agent it never heard of when work is attributed to it', () => {
      const n = make();
      n.turnStarted(input, null);
      const out = n.agent([{ type: 'error', data: { message: 'x' }, subagent_key: 'ghost' }], null);
      expect(out.map((o) => [o.event.type, o.event.data])).toEqual([
        ['subagent.started', { subagent_id: 'sub_1', parent_item_id: null, native_subagent_id: null }],
        ['error', { message: 'x', subagent_id: 'sub_1' }],
      ]);
    });

    it('a restarted daemon ends the sub-agents its snapshot had open', () => {
      const first = make();
      first.turnStarted(input, null);
      first.agent([{ type: 'item.completed', item: call }, start], null);
      const snapshot = first.snapshot();
      expect(snapshot.openSubagents).toEqual([{ subagent_id: 'sub_1', parent_item_id: 'itm_2' }]);
      const second = make();
      second.restore(snapshot, false);
      const out = second.agentGone('daemon_restarted');
      expect(out.find((o) => o.event.type === 'subagent.ended')?.event.data).toEqual({ subagent_id: 'sub_1', parent_item_id: 'itm_2', outcome: 'interrupted', reason: 'daemon_restarted' });
      expect(out.findIndex((o) => o.event.type === 'subagent.ended')).toBeLessThan(out.findIndex((o) => o.event.type === 'turn.ended'));
    });
  });
});
