// The Claude converter: every golden fixture of test/agents/claude/fixtures/ (made from the real
// recorded transcripts by from-recorded.mjs) replayed through the converter directly, here and only
// here (test/agents/golden.test.ts checks that the registry's driver has this converter and leaves
// the replay to this file), plus structural checks of what the replays must show, and unit tests of
// the cases the recordings do not cover.
// UPDATE_GOLDEN=1 rewrites the expected <scenario>.events.json (review the diff!).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { claudeCapabilities } from '../../../src/agents/claude/capabilities.js';
import { claudeConverter, type ClaudeState } from '../../../src/agents/claude/convert.js';
import { PINNED_AGENTS } from '../../../src/agents/versions.js';
import { UniversalEvent } from '../../../src/schema/events.js';
import { goldenFixtures } from '../../support/golden-replay.js';
import { convertLines } from '../../support/convert-lines.js';

const driver = { id: 'claude' as const, capabilities: claudeCapabilities, converter: claudeConverter };
const { replayCase, itReplaysEach } = goldenFixtures(driver, new URL('./fixtures/', import.meta.url).pathname);

describe('claude golden fixtures (converter + normalizer + log)', () => {
  itReplaysEach(checkShape);
});

/** What every Claude replay must look like, whatever the scenario. */
function checkShape(name: string, events: UniversalEvent[]): void {
  expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);
  // Recorded from the pinned CLI: a bumped pin without re-recorded fixtures fails here.
  expect(events[0]).toMatchObject({ type: 'session.started', source: 'agent', data: { metadata: { claude_code_version: PINNED_AGENTS.claude.version } } });
  // The native session id arrives with the first turn's system/init.
  expect(events.find((e) => e.type === 'turn.started')?.native_session_id).toBeNull();
  expect(events.at(-1)?.native_session_id).toBe('<session-1>');

  const started = new Map<string, UniversalEvent>();
  const completed = new Map<string, Extract<UniversalEvent, { type: 'item.completed' }>>();
  for (const e of events) {
    if (e.type === 'item.started') started.set(e.data.item.item_id, e);
    if (e.type === 'item.delta') {
      expect(started.has(e.data.item_id), `delta before start in ${name}`).toBe(true);
      expect(completed.has(e.data.item_id), `delta after completion in ${name}`).toBe(false);
    }
    if (e.type === 'item.completed') {
      expect(started.has(e.data.item.item_id), `completion without start in ${name}`).toBe(true);
      completed.set(e.data.item.item_id, e);
    }
  }
  expect([...started.keys()].sort()).toEqual([...completed.keys()].sort());
  const items = [...completed.values()].map((e) => e.data.item);
  for (const item of items) {
    expect(item.status).toBe('completed');
    if (item.kind === 'tool_call' || item.kind === 'tool_result') {
      const parent = items.find((i) => i.item_id === item.parent_id);
      expect(parent, `${item.kind} without a parent message in ${name}`).toMatchObject({ kind: 'message', role: 'assistant' });
    }
    if (item.kind === 'tool_result') {
      expect(item.content[0]).toMatchObject({ type: 'tool_result', output: expect.stringMatching(/.+/) });
    }
  }
  // Streamed assistant text: the deltas of a message add up to its text and reasoning.
  for (const item of items.filter((i) => i.role === 'assistant' && i.kind === 'message')) {
    const streamed = events
      .filter((e): e is Extract<UniversalEvent, { type: 'item.delta' }> => e.type === 'item.delta' && e.data.item_id === item.item_id)
      .map((e) => e.data.delta)
      .join('');
    const text = item.content.map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : '')).join('');
    expect(streamed).toBe(text);
  }
  const turns = events.filter((e) => e.type === 'turn.started').length;
  const ended = events.filter((e): e is Extract<UniversalEvent, { type: 'turn.ended' }> => e.type === 'turn.ended');
  expect(ended).toHaveLength(turns);
  // The recordings' input token counts are redacted ("<tokens>"), so no usage can be built from
  // them: the unit tests below map real counts.
  for (const e of ended) expect(e.data.metadata).toMatchObject({ reason: 'completed', subtype: 'success' });
  expect(events.filter((e) => e.type === 'error')).toEqual([]);
}

describe('claude golden fixtures: scenario specifics', () => {
  const kinds = (events: UniversalEvent[]) =>
    events.flatMap((e) => (e.type === 'item.completed' ? [`${e.data.item.kind}:${e.data.item.role}`] : []));

  it('shell: text, a Bash call and its output, then the answer', () => {
    const events = replayCase('shell');
    expect(kinds(events)).toEqual(['message:user', 'tool_call:assistant', 'message:assistant', 'tool_result:tool', 'message:assistant']);
    const result = events.find((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_result');
    expect(result?.type === 'item.completed' && result.data.item.content).toEqual([
      { type: 'tool_result', call_id: '<toolu-1>', output: 'hello-from-shell' },
    ]);
  });

  it('write-file: the Write call and its result carry a file_ref', () => {
    const items = replayCase('write-file').flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
    expect(items.find((i) => i.kind === 'tool_call')?.content[1]).toEqual({
      type: 'file_ref',
      path: 'hello.txt',
      action: 'write',
      diff: '--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hello file\n',
    });
    expect(items.find((i) => i.kind === 'tool_result')?.content[1]).toEqual({ type: 'file_ref', path: 'hello.txt', action: 'write' });
  });

  it('permission: requested with the CLI’s request id, resolved by the daemon on our reply', () => {
    const hitl = replayCase('permission').filter((e) => e.type.startsWith('permission.'));
    expect(hitl.map((e) => [e.type, e.source, (e.data as { status: string }).status])).toEqual([
      ['permission.requested', 'agent', 'requested'],
      ['permission.resolved', 'daemon', 'approved'],
    ]);
    expect(hitl[0]?.data).toMatchObject({ permission_id: '<uuid-13>', action: 'Write', metadata: { tool_use_id: '<toolu-1>', description: 'notes.txt' } });
  });

  it('model-error: the retry is a status item', () => {
    const status = replayCase('model-error').find((e) => e.type === 'item.completed' && e.data.item.kind === 'status');
    expect(status?.type === 'item.completed' && status.data.item.content).toEqual([
      { type: 'status', label: 'api_retry', detail: 'attempt 1 of 2, retrying in <ms> ms: server_error (HTTP 500)' },
    ]);
  });

  it('streamed-text: one message with the reasoning and the text, thinking deltas included', () => {
    const message = replayCase('streamed-text').find((e) => e.type === 'item.completed' && e.data.item.role === 'assistant');
    expect(message?.type === 'item.completed' && message.data.item.content).toEqual([
      { type: 'reasoning', text: 'A short answer will do.', visibility: 'public' },
      { type: 'text', text: 'Here is a longer answer that arrives in several pieces, so the stream has many deltas to show.' },
    ]);
  });

  it('two-turns: two turns, each with its own user message and answer', () => {
    const events = replayCase('two-turns');
    expect(events.filter((e) => e.type === 'turn.ended').map((e) => e.data.turn_id)).toEqual(['turn_1', 'turn_2']);
    expect(kinds(events)).toEqual(['message:user', 'message:assistant', 'message:user', 'message:assistant']);
  });
});

// ---- unit tests: exact drafts --------------------------------------------------------------------

function convert(lines: unknown[], state?: ClaudeState) {
  return convertLines(claudeConverter, lines, state);
}

const canUseTool = (tool_name: string, input: Record<string, unknown>) => ({
  type: 'control_request',
  request_id: 'req-1',
  request: { subtype: 'can_use_tool', tool_name, display_name: tool_name, input, tool_use_id: 'toolu_9' },
});
const hash16 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

describe('claudeConverter', () => {
  it('AskUserQuestion → question.requested: every question a line, the first one’s options', () => {
    const input = {
      questions: [
        { question: 'Which colour?', header: 'Colour', multiSelect: false, options: [{ label: 'red', description: 'warm' }, { label: 'blue' }] },
        { question: 'Which size?', header: 'Size', multiSelect: false, options: [{ label: 'S' }, { label: 'L' }] },
      ],
    };
    expect(convert([canUseTool('AskUserQuestion', input)]).events).toEqual([
      { type: 'question.requested', data: { question_id: 'req-1', prompt: 'Which colour?\nWhich size?', options: ['red', 'blue'], status: 'requested' } },
    ]);
  });

  it('ExitPlanMode → question.requested with the plan', () => {
    expect(convert([canUseTool('ExitPlanMode', { plan: '1. do it\n2. test it' })]).events).toEqual([
      { type: 'question.requested', data: { question_id: 'req-1', prompt: '1. do it\n2. test it', options: ['approve', 'keep planning'], status: 'requested' } },
    ]);
  });

  it('any other tool → permission.requested with what the CLI said', () => {
    const line = canUseTool('Bash', { command: 'rm -rf build' });
    Object.assign(line.request, { blocked_path: '/etc', permission_suggestions: [{ type: 'addRules' }], description: 'delete' });
    expect(convert([line]).events).toEqual([
      {
        type: 'permission.requested',
        data: {
          permission_id: 'req-1',
          action: 'Bash',
          status: 'requested',
          metadata: { input: { command: 'rm -rf build' }, suggestions: [{ type: 'addRules' }], blocked_path: '/etc', tool_use_id: 'toolu_9', description: 'delete' },
        },
      },
    ]);
  });

  it('result is_error with subtype success → error, then turn.ended', () => {
    const usage = { input_tokens: 10, cache_creation_input_tokens: 2, cache_read_input_tokens: 5, output_tokens: 3, service_tier: 'standard', server_tool_use: { web_search_requests: 0 } };
    const line = { type: 'result', subtype: 'success', is_error: true, result: 'API Error: 401', usage, total_cost_usd: 0, duration_ms: 5, num_turns: 1, stop_reason: 'stop_sequence', permission_denials: [] };
    expect(convert([line]).events).toEqual([
      { type: 'error', data: { message: 'API Error: 401', code: 'claude_success' } },
      {
        type: 'turn.ended',
        data: {
          metadata: {
            reason: 'error',
            // Claude's input_tokens leaves the cache out; the universal one counts it (10 + 2 + 5).
            usage: { input_tokens: 17, output_tokens: 3, cache_read_input_tokens: 5, cache_creation_input_tokens: 2 },
            cost_usd: 0,
            subtype: 'success', total_cost_usd: 0, duration_ms: 5, num_turns: 1, permission_denials: [], stop_reason: 'stop_sequence',
          },
        },
      },
    ]);
  });

  it('each streamed API message is a usage step: its input from message_start, its output from message_delta', () => {
    const se = (event: object) => ({ type: 'stream_event', event });
    const usage = { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 };
    const { events } = convert([
      se({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage } }),
      se({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }),
      // A delta without its start (or a second one) is no step.
      se({ type: 'message_delta', delta: {}, usage: { output_tokens: 9 } }),
    ]);
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', usage: { input_tokens: 17, output_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 2 }, model: 'claude-x' },
    ]);
  });

  it("total_cost_usd is cumulative over the process: each turn's cost_usd is the difference (a smaller total is a new process's)", () => {
    const result = (total: number) => ({ type: 'result', subtype: 'success', is_error: false, result: 'ok', total_cost_usd: total });
    const costs = convert([result(0.5), result(0.75), result(0.25)])
      .events.filter((e) => e.type === 'turn.ended')
      .map((e) => (e.type === 'turn.ended' ? e.data.metadata.cost_usd : undefined));
    expect(costs).toEqual([0.5, 0.25, 0.25]);
  });

  it('error_* result without text → error named by its subtype; open messages fail', () => {
    const { events, state } = convert([
      { type: 'stream_event', event: { type: 'message_start', message: { id: 'msg_1' } } },
      { type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hal' } } },
      { type: 'result', subtype: 'error_during_execution', is_error: true },
    ]);
    expect(events.slice(2)).toEqual([
      { type: 'item.completed', item: { key: 'msg_1', native_item_id: 'msg_1', kind: 'message', role: 'assistant', content: [], status: 'failed' } },
      { type: 'error', data: { message: 'error_during_execution', code: 'claude_error_during_execution' } },
      { type: 'turn.ended', data: { metadata: { reason: 'error', subtype: 'error_during_execution', total_cost_usd: undefined, duration_ms: undefined, num_turns: undefined, permission_denials: undefined } } },
    ]);
    expect(state).toEqual(claudeConverter.initial());
  });

  it('an image in a tool result → an image part (the Read file’s path)', () => {
    const { events } = convert([
      { type: 'assistant', message: { id: 'msg_1', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/w/cat.png' } }] } },
      {
        type: 'user',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } }] }],
        },
      },
      {
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_x', is_error: true, content: [{ type: 'text', text: 'a' }, { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lG' } }] }] },
      },
    ]);
    expect(events.slice(2)).toEqual([
      {
        type: 'item.completed',
        item: {
          key: 'result:toolu_1',
          native_item_id: null,
          parent_key: 'msg_1',
          kind: 'tool_result',
          role: 'tool',
          content: [{ type: 'tool_result', call_id: 'toolu_1', output: '' }, { type: 'image', path: '/w/cat.png', mime: 'image/png' }],
          status: 'completed',
        },
      },
      {
        type: 'item.completed',
        item: {
          key: 'result:toolu_x',
          native_item_id: null,
          parent_key: null,
          kind: 'tool_result',
          role: 'tool',
          content: [{ type: 'tool_result', call_id: 'toolu_x', output: 'a' }, { type: 'image', path: 'data:image/gif;base64,R0lG', mime: 'image/gif' }],
          status: 'failed',
        },
      },
    ]);
  });

  it('an mcp__ tool keeps its name and is tagged with server and tool', () => {
    const { events } = convert([
      { type: 'assistant', message: { id: 'msg_1', content: [{ type: 'tool_use', id: 'toolu_2', name: 'mcp__github__create_issue', input: { title: 'x' } }] } },
    ]);
    expect(events).toEqual([
      { type: 'item.started', item: { key: 'msg_1', native_item_id: 'msg_1', kind: 'message', role: 'assistant', content: [], status: 'in_progress' } },
      {
        type: 'item.completed',
        item: {
          key: 'toolu_2',
          native_item_id: 'toolu_2',
          parent_key: 'msg_1',
          kind: 'tool_call',
          role: 'assistant',
          content: [
            { type: 'tool_call', name: 'mcp__github__create_issue', arguments: '{"title":"x"}', call_id: 'toolu_2' },
            { type: 'json', json: { mcp_server: 'github', tool: 'create_issue' } },
          ],
          status: 'completed',
        },
      },
    ]);
  });

  it('Edit and MultiEdit calls → patch file_refs with a diff', () => {
    const { events } = convert([
      {
        type: 'assistant',
        message: {
          id: 'msg_1',
          content: [
            { type: 'tool_use', id: 't1', name: 'Edit', input: { file_path: 'a.ts', old_string: 'x = 1', new_string: 'x = 2\ny = 3' } },
            { type: 'tool_use', id: 't2', name: 'MultiEdit', input: { file_path: 'b.ts', edits: [{ old_string: 'a', new_string: 'b' }, { old_string: 'c', new_string: '' }] } },
          ],
        },
      },
    ]);
    const refs = events.flatMap((e) => (e.type === 'item.completed' ? e.item.content.filter((p) => p.type === 'file_ref') : []));
    expect(refs).toEqual([
      { type: 'file_ref', path: 'a.ts', action: 'patch', diff: '--- a/a.ts\n+++ b/a.ts\n@@ @@\n-x = 1\n+x = 2\n+y = 3\n' },
      { type: 'file_ref', path: 'b.ts', action: 'patch', diff: '--- a/b.ts\n+++ b/b.ts\n@@ @@\n-a\n+b\n@@ @@\n-c\n' },
    ]);
  });

  it('redacted thinking → a private reasoning part', () => {
    const { events } = convert([
      { type: 'stream_event', event: { type: 'message_start', message: { id: 'm' } } },
      { type: 'assistant', message: { id: 'm', content: [{ type: 'redacted_thinking', data: 'enc' }] } },
      { type: 'stream_event', event: { type: 'message_stop' } },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'item.completed',
      item: { key: 'm', native_item_id: 'm', kind: 'message', role: 'assistant', content: [{ type: 'reasoning', text: '', visibility: 'private' }], status: 'completed' },
    });
  });

  it('unknown system subtypes → a status item; status and thinking_tokens → nothing', () => {
    const { events } = convert([
      { type: 'system', subtype: 'status', status: 'requesting', session_id: 's', uuid: 'u1' },
      { type: 'system', subtype: 'thinking_tokens', estimated_tokens: 3, session_id: 's' },
      { type: 'system', subtype: 'compact_boundary', session_id: 's', uuid: 'u2', compact_metadata: { trigger: 'auto' }, trigger: 'auto' },
    ]);
    expect(events).toEqual([
      { type: 'item.completed', item: { key: 'status:1', native_item_id: 'u2', kind: 'status', role: null, content: [{ type: 'status', label: 'compact_boundary', detail: 'trigger: auto' }], status: 'completed' } },
    ]);
  });

  it('garbage → agent.unparsed, and the state is unchanged', () => {
    const state = claudeConverter.initial();
    const cases: [unknown, string, string][] = [
      ['not json at all', 'not JSON', 'not json at all'],
      [{ type: 'telemetry', x: 1 }, 'unknown type "telemetry"', '{"type":"telemetry","x":1}'],
      [{ type: 'assistant', message: { content: [] } }, 'message.id: Invalid input: expected string, received undefined', '{"type":"assistant","message":{"content":[]}}'],
      [{ type: 'control_request', request_id: 'r', request: { subtype: 'hook_callback' } }, 'unknown control request "hook_callback"', '{"type":"control_request","request_id":"r","request":{"subtype":"hook_callback"}}'],
      [42, '(root): Invalid input: expected object, received number', '42'],
    ];
    for (const [native, error, raw] of cases) {
      const out = claudeConverter.convert(state, native);
      expect(out.state).toBe(state);
      expect(out.events).toEqual([{ type: 'agent.unparsed', source: 'daemon', synthetic: true, data: { error, location: 'claude.convert', raw_hash: hash16(raw) } }]);
    }
  });
});
