import { guardedConverter } from '../../../src/agents/unparsed.js';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mockConverter, type MockState } from '../../../src/agents/mock/convert.js';
import { convertLines } from '../../support/convert-lines.js';

/** Feeds lines through the converter; every caller but the unparsed tests expects none. */
function convert(lines: unknown[], state?: MockState) {
  return convertLines(mockConverter, lines, state);
}

function convertClean(lines: unknown[], state?: MockState) {
  const out = convert(lines, state);
  expect(out.events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  return out;
}

const hash16 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The fields every item draft of the mock shares: its key is the mock's own id. */
const ids = (id: string) => ({ key: id, native_item_id: id });
const unparsedDraft = (error: string, raw: string) => ({
  type: 'agent.unparsed',
  source: 'daemon',
  synthetic: true,
  data: { error, location: 'mock.convert', raw_hash: hash16(raw) },
});

const NOTES_DIFF = '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n';

describe('mockConverter', () => {
  it('starts with no open messages', () => {
    expect(mockConverter.initial()).toEqual({ open: {} });
  });

  it('maps ready to session.started with the native session id', () => {
    const { events } = convertClean([{ type: 'ready', session: 'mock-abc', model: 'mock-1', cwd: '/w', pid: 7 }]);
    expect(events).toStrictEqual([
      { type: 'session.started', native_session_id: 'mock-abc', data: { metadata: { model: 'mock-1', cwd: '/w', pid: 7 } } },
    ]);
  });

  it('says in session.started metadata that a session was resumed, and after how many turns', () => {
    const { events } = convertClean([{ type: 'ready', session: 'mock-abc', model: 'mock-1', mode: 'plan', cwd: '/w', pid: 7, resumed: true, turns: 3 }]);
    expect(events).toStrictEqual([
      {
        type: 'session.started',
        native_session_id: 'mock-abc',
        data: { metadata: { model: 'mock-1', mode: 'plan', cwd: '/w', pid: 7, resumed: true, earlier_turns: 3 } },
      },
    ]);
  });

  it('maps a streamed assistant message to started, deltas and completed', () => {
    const { state, events } = convertClean([
      { type: 'message_start', id: 'msg_1', role: 'assistant' },
      { type: 'text', id: 'msg_1', chunk: 'Hel' },
      { type: 'text', id: 'msg_1', chunk: 'lo' },
      { type: 'message_end', id: 'msg_1', role: 'assistant', parts: [{ kind: 'text', value: 'Hello' }] },
    ]);
    const item = { ...ids('msg_1'), kind: 'message', role: 'assistant' };
    expect(events).toStrictEqual([
      { type: 'item.started', item: { ...item, content: [], status: 'in_progress' } },
      { type: 'item.delta', key: 'msg_1', native_item_id: 'msg_1', delta: 'Hel' },
      { type: 'item.delta', key: 'msg_1', native_item_id: 'msg_1', delta: 'lo' },
      { type: 'item.completed', item: { ...item, content: [{ type: 'text', text: 'Hello' }], status: 'completed' } },
    ]);
    expect(state).toEqual({ open: {} });
  });

  it('maps a system message to a system item, remembering it while open without mutating state', () => {
    const started = convertClean([{ type: 'message_start', id: 'msg_2', role: 'system' }]);
    expect(started.state).toStrictEqual({ open: { msg_2: 'system' } });
    const end = { type: 'message_end', id: 'msg_2', role: 'system', parts: [{ kind: 'text', value: 'hi' }] };
    const ended = convertClean([end], started.state);
    expect(started.state).toStrictEqual({ open: { msg_2: 'system' } });
    expect(ended.state).toStrictEqual({ open: {} });
    const item = { ...ids('msg_2'), kind: 'system', role: 'system' };
    expect([...started.events, ...ended.events]).toStrictEqual([
      { type: 'item.started', item: { ...item, content: [], status: 'in_progress' } },
      { type: 'item.completed', item: { ...item, content: [{ type: 'text', text: 'hi' }], status: 'completed' } },
    ]);
  });

  it('gives a text chunk without a start a stub, and converts an end without a start', () => {
    const { events } = convertClean([
      { type: 'text', id: 'msg_9', chunk: 'x' },
      { type: 'message_end', id: 'msg_9', role: 'assistant', parts: [{ kind: 'text', value: 'x' }], interrupted: true },
    ]);
    expect(events).toStrictEqual([
      { type: 'item.delta', key: 'msg_9', native_item_id: 'msg_9', delta: 'x', stub: { kind: 'message', role: 'assistant' } },
      {
        type: 'item.completed',
        item: { ...ids('msg_9'), kind: 'message', role: 'assistant', content: [{ type: 'text', text: 'x' }], status: 'completed' },
      },
    ]);
  });

  it('maps every message part kind', () => {
    const parts = [
      { kind: 'text', value: 't' },
      { kind: 'thinking', value: 'pub' },
      { kind: 'thinking', value: 'priv', private: true },
      { kind: 'data', value: { answer: 42 } },
      { kind: 'file', path: 'a.txt', op: 'read' },
      { kind: 'file', path: 'a.txt', op: 'write', diff: NOTES_DIFF },
      { kind: 'picture', path: '/w/p.png', mime: 'image/png' },
      { kind: 'picture', path: '/w/q.png' },
      { kind: 'progress', label: 'L', detail: 'D' },
      { kind: 'progress', label: 'L2' },
    ];
    const { events } = convertClean([{ type: 'message_end', id: 'msg_1', role: 'assistant', parts }]);
    expect(events).toStrictEqual([
      {
        type: 'item.completed',
        item: {
          ...ids('msg_1'),
          kind: 'message',
          role: 'assistant',
          content: [
            { type: 'text', text: 't' },
            { type: 'reasoning', text: 'pub', visibility: 'public' },
            { type: 'reasoning', text: 'priv', visibility: 'private' },
            { type: 'json', json: { answer: 42 } },
            { type: 'file_ref', path: 'a.txt', action: 'read' },
            { type: 'file_ref', path: 'a.txt', action: 'write', diff: NOTES_DIFF },
            { type: 'image', path: '/w/p.png', mime: 'image/png' },
            { type: 'image', path: '/w/q.png' },
            { type: 'status', label: 'L', detail: 'D' },
            { type: 'status', label: 'L2' },
          ],
          status: 'completed',
        },
      },
    ]);
  });

  it('maps tool_call and tool_result to tool items parented to the message', () => {
    const { events } = convertClean([
      { type: 'tool_call', id: 'call_1', parent: 'msg_1', tool: 'write_file', input: { path: 'notes.txt', content: 'hello\n' } },
      {
        type: 'tool_result',
        id: 'res_1',
        call: 'call_1',
        parent: 'msg_1',
        output: 'wrote 6 bytes to notes.txt',
        files: [{ kind: 'file', path: 'notes.txt', op: 'patch', diff: NOTES_DIFF }],
      },
      { type: 'tool_result', id: 'res_2', call: 'call_1', parent: 'msg_1', output: 'boom', failed: true },
    ]);
    expect(events).toStrictEqual([
      {
        type: 'item.completed',
        item: {
          ...ids('call_1'),
          parent_key: 'msg_1',
          kind: 'tool_call',
          role: 'assistant',
          content: [
            { type: 'tool_call', name: 'write_file', arguments: '{"path":"notes.txt","content":"hello\\n"}', call_id: 'call_1' },
          ],
          status: 'completed',
        },
      },
      {
        type: 'item.completed',
        item: {
          ...ids('res_1'),
          parent_key: 'msg_1',
          kind: 'tool_result',
          role: 'tool',
          content: [
            { type: 'tool_result', call_id: 'call_1', output: 'wrote 6 bytes to notes.txt' },
            { type: 'file_ref', path: 'notes.txt', action: 'patch', diff: NOTES_DIFF },
          ],
          status: 'completed',
        },
      },
      {
        type: 'item.completed',
        item: {
          ...ids('res_2'),
          parent_key: 'msg_1',
          kind: 'tool_result',
          role: 'tool',
          content: [{ type: 'tool_result', call_id: 'call_1', output: 'boom' }],
          status: 'failed',
        },
      },
    ]);
  });

  it('maps progress to a status item and artifact to an unknown item', () => {
    const { events } = convertClean([
      { type: 'progress', id: 'prog_1', label: 'Indexing', detail: '3 of 3 files' },
      { type: 'artifact', id: 'art_1', payload: { values: [1, 2] } },
    ]);
    expect(events).toStrictEqual([
      {
        type: 'item.completed',
        item: {
          ...ids('prog_1'),
          kind: 'status',
          role: null,
          content: [{ type: 'status', label: 'Indexing', detail: '3 of 3 files' }],
          status: 'completed',
        },
      },
      {
        type: 'item.completed',
        item: { ...ids('art_1'), kind: 'unknown', role: null, content: [{ type: 'json', json: { values: [1, 2] } }], status: 'completed' },
      },
    ]);
  });

  it('maps ask_permission and ask_question to requests', () => {
    const { events } = convertClean([
      { type: 'ask_permission', id: 'perm_1', action: 'write_file', input: { path: 'notes.txt' } },
      { type: 'ask_permission', id: 'perm_2', action: 'bash' },
      { type: 'ask_question', id: 'q_1', prompt: 'Which color do you prefer?', options: ['red', 'green', 'blue'] },
    ]);
    expect(events).toStrictEqual([
      {
        type: 'permission.requested',
        data: { permission_id: 'perm_1', action: 'write_file', status: 'requested', metadata: { input: { path: 'notes.txt' } } },
      },
      { type: 'permission.requested', data: { permission_id: 'perm_2', action: 'bash', status: 'requested' } },
      {
        type: 'question.requested',
        data: { question_id: 'q_1', prompt: 'Which color do you prefer?', options: ['red', 'green', 'blue'], status: 'requested' },
      },
    ]);
  });

  it('maps failure, done and bye', () => {
    const { events, state } = convertClean([
      { type: 'failure', message: 'mock error requested', code: 'mock_error' },
      { type: 'failure', message: 'plain' },
      { type: 'message_start', id: 'msg_1', role: 'assistant' },
      { type: 'done', reason: 'interrupted' },
      { type: 'done', reason: 'completed' },
      { type: 'bye' },
    ]);
    expect(events).toStrictEqual([
      { type: 'error', data: { message: 'mock error requested', code: 'mock_error' } },
      { type: 'error', data: { message: 'plain' } },
      { type: 'item.started', item: { ...ids('msg_1'), kind: 'message', role: 'assistant', content: [], status: 'in_progress' } },
      { type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } },
      { type: 'turn.ended', data: { metadata: { reason: 'completed' } } },
      { type: 'session.ended', data: { reason: 'completed', terminated_by: 'agent' } },
    ]);
    expect(state).toEqual({ open: {} });
  });

  it('turns a line that was not JSON into one agent.unparsed draft', () => {
    const raw = 'this line is not JSON {';
    const state = mockConverter.initial();
    expect(mockConverter.convert(state, raw)).toStrictEqual({
      state,
      events: [unparsedDraft('not JSON', raw)],
    });
  });

  it('turns JSON of an unknown or malformed type into one agent.unparsed draft', () => {
    const unknown = { type: 'telepathy', id: 'x' };
    const malformed = { type: 'text', id: 3 };
    const { events } = convert([unknown, malformed, 42]);
    expect(events).toStrictEqual([
      unparsedDraft('unknown type "telepathy"', JSON.stringify(unknown)),
      unparsedDraft(
        'id: Invalid input: expected string, received number; chunk: Invalid input: expected string, received undefined',
        JSON.stringify(malformed),
      ),
      unparsedDraft('(root): Invalid input: expected object, received number', '42'),
    ]);
  });

  it('never throws, even on values that cannot be serialised', () => {
    const cyclic: Record<string, unknown> = { type: 'nope' };
    cyclic.self = cyclic;
    const { events } = convert([cyclic, undefined, null, [1], 10n]);
    expect(events.map((e) => e.type)).toEqual(Array(5).fill('agent.unparsed'));
  });
});

describe('guardedConverter (every converter is built with it)', () => {
  it('turns a throwing step into one agent.unparsed and keeps the state from before', () => {
    const converter = guardedConverter('test.convert', () => ({ n: 1 }), (_state, native) => {
      if (native === 'boom') throw new Error('bug');
      return { state: { n: 2 }, events: [] };
    });
    const before = converter.initial();
    const out = converter.convert(before, 'boom');
    expect(out.state).toBe(before);
    expect(out.events).toEqual([
      { type: 'agent.unparsed', source: 'daemon', synthetic: true, data: { error: 'converter failure: Error: bug', location: 'test.convert', raw_hash: expect.stringMatching(/^[0-9a-f]{16}$/) } },
    ]);
    expect(converter.convert(before, 'fine')).toEqual({ state: { n: 2 }, events: [] });
  });
});
