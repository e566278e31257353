// The Codex converter: every golden fixture of test/agents/codex/fixtures/ (made from the real
// recorded app-server transcripts by from-recorded.mjs) replayed through the converter directly, here
// and only here (test/agents/golden.test.ts checks that the registry's driver has this converter and
// leaves the replay to this file), plus structural checks of what the replays must show, and unit
// tests of the cases the recordings do not cover.
// UPDATE_GOLDEN=1 rewrites the expected <scenario>.events.json (review the diff!).
import { describe, expect, it } from 'vitest';
import { codexCapabilities } from '../../../src/agents/codex/capabilities.js';
import { codexConverter, DROPPED, LOCATION, type CodexState } from '../../../src/agents/codex/convert.js';
import type { Draft } from '../../../src/agents/types.js';
import { UniversalEvent } from '../../../src/schema/events.js';
import { goldenFixtures } from '../../support/golden-replay.js';

const driver = { id: 'codex' as const, capabilities: codexCapabilities, converter: codexConverter };
const { replayCase, itReplaysEach } = goldenFixtures(driver, new URL('./fixtures/', import.meta.url).pathname);

type Completed = Extract<UniversalEvent, { type: 'item.completed' }>;
const completions = (events: UniversalEvent[]) => events.filter((e): e is Completed => e.type === 'item.completed');

describe('codex golden fixtures (converter + normalizer + log)', () => {
  itReplaysEach(checkShape);

  it('shell: the command, its output and exit code, parented to the message before it', () => {
    const events = completions(replayCase('shell'));
    const message = events.find((e) => e.data.item.kind === 'message' && e.data.item.role === 'assistant')!;
    const call = events.find((e) => e.data.item.kind === 'tool_call')!;
    const result = events.find((e) => e.data.item.kind === 'tool_result')!;
    expect(call.data.item.content[0]).toMatchObject({ name: 'command_execution', arguments: JSON.stringify({ command: "/bin/bash -lc 'echo hello-from-shell'", cwd: '<work>' }) });
    expect(call.data.item.parent_id).toBe(message.data.item.item_id);
    expect(result.data.item).toMatchObject({ parent_id: message.data.item.item_id, status: 'completed', role: 'tool' });
    expect(result.data.item.content).toEqual([
      { type: 'tool_result', call_id: '<item-3>', output: 'hello-from-shell\n' },
      { type: 'status', label: 'completed', detail: 'exit code 0' },
    ]);
  });

  it('write-file: a file_ref with the new file as a diff', () => {
    const call = completions(replayCase('write-file')).find((e) => e.data.item.kind === 'tool_call')!;
    expect(call.data.item.content[1]).toEqual({
      type: 'file_ref',
      path: '<work>/hello.txt',
      action: 'write',
      diff: '--- /dev/null\n+++ b/<work>/hello.txt\n@@ -0,0 +1 @@\n+hello file\n',
    });
  });

  it('permission: requested with the changes, resolved by the daemon once', () => {
    const events = replayCase('permission');
    const requested = events.filter((e) => e.type === 'permission.requested');
    const resolved = events.filter((e) => e.type === 'permission.resolved');
    expect(requested).toHaveLength(1);
    expect(requested[0]!.data).toMatchObject({ permission_id: '0', action: 'file_change', metadata: { itemId: '<item-2>', changes: [{ path: '<work>/notes.txt', kind: 'add', diff: 'notes\n' }] } });
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({ source: 'daemon', data: { permission_id: '0', status: 'approved', metadata: { reply: 'once' } } });
  });

  it('streamed-text: reasoning deltas land on the reasoning item, completed as public reasoning', () => {
    const events = replayCase('streamed-text');
    const reasoning = completions(events).find((e) => e.data.item.content.some((p) => p.type === 'reasoning'))!;
    expect(reasoning.data.item.content).toEqual([{ type: 'reasoning', text: 'A short answer will do.', visibility: 'public' }]);
    const deltas = events.filter((e) => e.type === 'item.delta' && e.data.item_id === reasoning.data.item.item_id);
    expect(deltas.map((d) => (d.type === 'item.delta' ? d.data.delta : '')).join('')).toBe('A short answer will do.');
  });

  it("turn.ended carries the reason, the native turn id, status and Codex's own last token usage", () => {
    const ended = replayCase('two-turns').filter((e) => e.type === 'turn.ended');
    expect(ended).toHaveLength(2);
    const metadata = { reason: 'completed', status: 'completed', native_turn_id: '<turn-2>', thread_token_usage: { last: { outputTokens: 51 } } };
    expect(ended[1]!.data).toMatchObject({ turn_id: 'turn_2', metadata });
    // The recordings' input token counts are redacted ("<tokens>"): no universal usage from them.
    expect(ended[1]!.data.metadata.usage).toBeUndefined();
  });
});

/** What every Codex replay must look like, whatever the scenario. */
function checkShape(name: string, events: UniversalEvent[]): void {
  expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'session.started', source: 'agent', native_session_id: '<thread-1>', data: { metadata: { model: 'gpt-5.5' } } });
  const turns = events.filter((e) => e.type === 'turn.started').length;
  expect(turns).toBeGreaterThan(0);
  expect(events.filter((e) => e.type === 'turn.ended')).toHaveLength(turns);
  expect(events.filter((e) => e.type === 'turn.started').every((e) => e.source === 'agent')).toBe(true);
  // Codex echoes the user's message: exactly one user message per turn, from the agent.
  const users = completions(events).filter((e) => e.data.item.role === 'user');
  expect(users).toHaveLength(turns);
  expect(users.every((e) => e.source === 'agent')).toBe(true);

  const started = new Set<string>();
  const done = new Set<string>();
  for (const e of events) {
    if (e.type === 'item.started') started.add(e.data.item.item_id);
    if (e.type === 'item.delta') {
      expect(started.has(e.data.item_id), `delta before start in ${name}`).toBe(true);
      expect(done.has(e.data.item_id), `delta after completion in ${name}`).toBe(false);
    }
    if (e.type === 'item.completed') {
      expect(started.has(e.data.item.item_id), `completion without start in ${name}`).toBe(true);
      expect(e.data.item.status, `${name}: ${JSON.stringify(e.data.item)}`).toBe('completed');
      done.add(e.data.item.item_id);
    }
  }
  expect([...started].filter((id) => !done.has(id)), `items left open in ${name}`).toEqual([]);
}

// ---- unit tests: exact drafts for what the recordings do not show ---------------------------------

function convert(native: unknown, state: CodexState = codexConverter.initial()): { state: CodexState; events: Draft[] } {
  return codexConverter.convert(state, native);
}
const note = (method: string, params: unknown) => ({ method, params });
const item = (method: 'item/started' | 'item/completed', it: Record<string, unknown>) => note(method, { threadId: 't', turnId: 'u', item: it });

describe('codex converter units', () => {
  it('error notification → error with willRetry', () => {
    const error = { message: 'stream disconnected', codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 502 } }, additionalDetails: null };
    expect(convert(note('error', { error, willRetry: true, threadId: 't', turnId: 'u' })).events).toEqual([
      {
        type: 'error',
        data: { message: 'stream disconnected', code: 'codex_error', details: { willRetry: true, codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 502 } }, additionalDetails: null } },
      },
    ]);
  });

  it('a failed turn → error, then turn.ended with status, error and usage', () => {
    let state = convert(note('turn/started', { threadId: 't', turn: { id: 'u1', status: 'inProgress', error: null } })).state;
    state = convert(note('thread/tokenUsage/updated', { threadId: 't', turnId: 'u1', tokenUsage: { total: { totalTokens: 9 } } }), state).state;
    const error = { message: 'usage limit', codexErrorInfo: 'usageLimitExceeded', additionalDetails: null };
    const out = convert(note('turn/completed', { threadId: 't', turn: { id: 'u1', status: 'failed', error, durationMs: 5 } }), state);
    expect(out.events).toEqual([
      { type: 'error', data: { message: 'usage limit', code: 'codex_turn_failed', details: { native_turn_id: 'u1', codexErrorInfo: 'usageLimitExceeded', additionalDetails: null } } },
      { type: 'turn.ended', data: { metadata: { reason: 'error', status: 'failed', native_turn_id: 'u1', error, thread_token_usage: { total: { totalTokens: 9 } }, duration_ms: 5 } } },
    ]);
    expect(out.state).toEqual(codexConverter.initial());
  });

  it("a turn's usage is its share of the thread's totals, summed over its model requests; each request is a usage step", () => {
    const counts = (input: number, cached: number, output: number, reasoning: number) => ({
      inputTokens: input, cachedInputTokens: cached, cacheWriteInputTokens: 0, outputTokens: output, reasoningOutputTokens: reasoning, totalTokens: input + output,
    });
    const update = (total: object, last: object) => note('thread/tokenUsage/updated', { threadId: 't', turnId: 'u2', tokenUsage: { total, last, modelContextWindow: 1000 } });
    // Earlier turns (or a session before a resume) used 100 in, 10 out; this turn makes two requests.
    let state = convert(note('turn/started', { threadId: 't', turn: { id: 'u2', status: 'inProgress', error: null } })).state;
    // Each update is a usage step (docs/budgets.md): what the totals grew by, the first from before the turn.
    const steps: Draft[] = [];
    for (const u of [update(counts(130, 20, 15, 2), counts(30, 20, 5, 2)), update(counts(130, 20, 15, 2), counts(30, 20, 5, 2)), update(counts(170, 50, 22, 3), counts(40, 30, 7, 1))]) {
      const r = convert(u, state);
      state = r.state;
      steps.push(...r.events);
    }
    // The repeated update added nothing, so it is no step.
    expect(steps).toEqual([
      { type: 'usage', usage: { input_tokens: 30, output_tokens: 5, cache_read_input_tokens: 20, cache_creation_input_tokens: 0, reasoning_output_tokens: 2 } },
      { type: 'usage', usage: { input_tokens: 40, output_tokens: 7, cache_read_input_tokens: 30, cache_creation_input_tokens: 0, reasoning_output_tokens: 1 } },
    ]);
    const out = convert(note('turn/completed', { threadId: 't', turn: { id: 'u2', status: 'interrupted', error: null } }), state);
    expect(out.events.at(-1)).toMatchObject({
      type: 'turn.ended',
      data: { metadata: { reason: 'interrupted', usage: { input_tokens: 70, output_tokens: 12, cache_read_input_tokens: 50, cache_creation_input_tokens: 0, reasoning_output_tokens: 3 } } },
    });
  });

  it('mcpToolCall → mcp__server__tool call and its result', () => {
    const base = { type: 'mcpToolCall', id: 'm1', server: 'docs', tool: 'search', arguments: { q: 'x' }, result: null, error: null };
    const started = convert(item('item/started', { ...base, status: 'inProgress' }));
    const call = {
      key: 'm1',
      native_item_id: 'm1',
      parent_key: null,
      kind: 'tool_call',
      role: 'assistant',
      content: [
        { type: 'tool_call', name: 'mcp__docs__search', arguments: '{"q":"x"}', call_id: 'm1' },
        { type: 'json', json: { mcp_server: 'docs', tool: 'search' } },
      ],
      status: 'completed',
    };
    const result = { key: 'result:m1', native_item_id: null, parent_key: null, kind: 'tool_result', role: 'tool' };
    expect(started.events).toEqual([
      { type: 'item.completed', item: call },
      { type: 'item.started', item: { ...result, content: [], status: 'in_progress' } },
    ]);
    const done = { ...base, status: 'completed', result: { content: [{ type: 'text', text: 'found' }], structuredContent: { n: 1 } } };
    expect(convert(item('item/completed', done), started.state).events).toEqual([
      { type: 'item.completed', item: call },
      { type: 'item.completed', item: { ...result, content: [{ type: 'tool_result', call_id: 'm1', output: 'found' }, { type: 'json', json: { n: 1 } }], status: 'completed' } },
    ]);
    const failed = { ...base, status: 'failed', error: { message: 'boom' } };
    expect(convert(item('item/completed', failed), started.state).events[1]).toMatchObject({ item: { content: [{ type: 'tool_result', output: 'boom' }], status: 'failed' } });
  });

  it('webSearch → web_search tool call with the query', () => {
    const ws = { type: 'webSearch', id: 'ws1', query: 'vitest 4', action: { type: 'search', query: 'vitest 4', queries: null }, results: null };
    expect(convert(item('item/completed', ws)).events).toEqual([
      {
        type: 'item.completed',
        item: {
          key: 'ws1',
          native_item_id: 'ws1',
          parent_key: null,
          kind: 'tool_call',
          role: 'assistant',
          content: [{ type: 'tool_call', name: 'web_search', arguments: JSON.stringify({ query: 'vitest 4', action: ws.action }), call_id: 'ws1' }],
          status: 'completed',
        },
      },
    ]);
  });

  it('a failed command → failed result with the exit code; output deltas stream into the result', () => {
    const cmd = { type: 'commandExecution', id: 'c1', command: 'false', cwd: '/w', status: 'inProgress', aggregatedOutput: null, exitCode: null };
    const started = convert(item('item/started', cmd));
    const delta = convert(note('item/commandExecution/outputDelta', { threadId: 't', turnId: 'u', itemId: 'c1', delta: 'oops\n' }), started.state);
    expect(delta.events).toEqual([{ type: 'item.delta', key: 'result:c1', native_item_id: null, delta: 'oops\n', stub: { kind: 'tool_result', role: 'tool', parent_key: null } }]);
    const done = convert(item('item/completed', { ...cmd, status: 'failed', aggregatedOutput: 'oops\n', exitCode: 1 }), started.state);
    expect(done.events[1]).toMatchObject({
      item: { key: 'result:c1', status: 'failed', content: [{ type: 'tool_result', output: 'oops\n' }, { type: 'status', label: 'failed', detail: 'exit code 1' }] },
    });
  });

  it('an unknown item type → kind unknown with the item as json (never unparsed)', () => {
    const plan = { type: 'plan', id: 'p1', text: '1. do it' };
    expect(convert(item('item/completed', plan)).events).toEqual([
      { type: 'item.completed', item: { key: 'p1', native_item_id: 'p1', kind: 'unknown', role: null, content: [{ type: 'json', json: plan }], status: 'completed' } },
    ]);
  });

  it('command approval → permission.requested with the command', () => {
    const params = { kind: 'command', threadId: 't', turnId: 'u', itemId: 'c1', startedAtMs: 1, command: 'touch x', cwd: '/w', reason: null, availableDecisions: ['accept', 'cancel'] };
    expect(convert({ id: 3, method: 'item/commandExecution/requestApproval', params }).events).toEqual([
      {
        type: 'permission.requested',
        data: { permission_id: '3', action: 'command_execution', status: 'requested', metadata: { command: 'touch x', cwd: '/w', reason: null, itemId: 'c1', availableDecisions: ['accept', 'cancel'] } },
      },
    ]);
  });

  it('requestUserInput → question.requested', () => {
    const params = {
      threadId: 't',
      turnId: 'u',
      itemId: 'q',
      isBlocking: true,
      questions: [
        { id: 'color', header: 'Color', question: 'Which colour?', isOther: false, isSecret: false, options: [{ label: 'red', description: '' }, { label: 'green', description: '' }] },
        { id: 'size', header: 'Size', question: 'Which size?', isOther: true, isSecret: false, options: null },
      ],
    };
    expect(convert({ id: 7, method: 'item/tool/requestUserInput', params }).events).toEqual([
      { type: 'question.requested', data: { question_id: '7', prompt: 'Which colour?\nWhich size?', options: ['red', 'green'], status: 'requested' } },
    ]);
  });

  it('configWarning → a status item', () => {
    expect(convert(note('configWarning', { summary: 'no bwrap', details: null })).events).toEqual([
      { type: 'item.completed', item: { key: 'status:1', native_item_id: null, kind: 'status', role: null, content: [{ type: 'status', label: 'configWarning', detail: 'no bwrap' }], status: 'completed' } },
    ]);
  });

  it('drops the documented notifications and answers to our other requests', () => {
    for (const method of Object.keys(DROPPED).filter((m) => m !== 'thread/tokenUsage/updated')) expect(convert(note(method, {})).events, method).toEqual([]);
    expect(convert({ id: 2, result: { turn: { id: 'u' } } }).events).toEqual([]);
    expect(convert({ id: 5, error: { code: -32600, message: 'bad' } }).events).toEqual([]);
  });

  it.each([
    ['not JSON', 'garbage {'],
    ['not a JSON-RPC object', [1, 2]],
    ['neither a request, a notification nor a response', { hello: 'world' }],
    ['item/completed: malformed params', { method: 'item/completed', params: { nope: true } }],
    ['item/commandExecution/requestApproval: malformed params', { id: 1, method: 'item/commandExecution/requestApproval', params: {} }],
  ])('garbage → agent.unparsed (%s)', (error, native) => {
    const [event] = convert(native).events;
    expect(event).toMatchObject({ type: 'agent.unparsed', source: 'daemon', synthetic: true, data: { location: LOCATION } });
    if (event?.type === 'agent.unparsed') expect(event.data.error).toContain(error);
  });

  it('a well-formed notification new to us → a status item labelled with its method, not unparsed', () => {
    expect(convert(note('brand/new', { x: 1 })).events).toEqual([
      { type: 'item.completed', item: { key: 'status:1', native_item_id: null, kind: 'status', role: null, content: [{ type: 'status', label: 'brand/new', detail: '{"x":1}' }], status: 'completed' } },
    ]);
  });
});
