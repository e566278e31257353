// The ACP converter and its pure helpers, message by message: what is well-formed never becomes
// agent.unparsed; what is not JSON-RPC does. (The golden cases in test/agents/acp/fixtures/ cover whole
// recorded turns.)
import { describe, expect, it } from 'vitest';
import { acpConverter, type AcpState } from '../../../src/agents/acp/convert.js';
import { unifiedDiff } from '../../../src/agents/acp/diff.js';
import { acpMcpServers } from '../../../src/agents/acp/input.js';
import { CANCELLED, permissionOutcome } from '../../../src/agents/acp/permission.js';
import type { Draft } from '../../../src/agents/types.js';

function run(messages: unknown[]): Draft[] {
  let state: AcpState = acpConverter.initial();
  const out: Draft[] = [];
  for (const m of messages) {
    const r = acpConverter.convert(state, m);
    state = r.state;
    out.push(...r.events);
  }
  return out;
}
const update = (u: Record<string, unknown>) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: u } });

describe('acp converter', () => {
  it('streams chunks into one message, completed when the stream changes or the turn ends', () => {
    const events = run([
      update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hm' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } }),
      { jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } },
    ]);
    expect(events.map((e) => e.type)).toEqual(['item.delta', 'item.completed', 'item.delta', 'item.delta', 'item.completed', 'turn.ended']);
    expect(events[1]).toMatchObject({ item: { key: 'thought:1', content: [{ type: 'reasoning', text: 'hm', visibility: 'public' }] } });
    expect(events[4]).toMatchObject({ item: { key: 'msg:2', role: 'assistant', content: [{ type: 'text', text: 'Hello' }, { type: 'image', path: '(inline image)', mime: 'image/png' }] } });
  });

  it('a new messageId starts a new message', () => {
    const events = run([
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'a', content: { type: 'text', text: 'one' } }),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'b', content: { type: 'text', text: 'two' } }),
    ]);
    expect(events.filter((e) => e.type === 'item.completed')).toMatchObject([{ item: { native_item_id: 'a', content: [{ text: 'one' }] } }]);
  });

  it('reports abnormal stop reasons and error answers, and keeps usage for turn.ended', () => {
    const refusal = run([update({ sessionUpdate: 'usage_update', used: 10, size: 100 }), { jsonrpc: '2.0', id: 3, result: { stopReason: 'refusal' } }]);
    expect(refusal).toMatchObject([{ type: 'error', data: { code: 'acp_refusal' } }, { type: 'turn.ended', data: { metadata: { reason: 'error', stop_reason: 'refusal', context_usage: { used: 10, size: 100 } } } }]);
    const failed = run([{ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'boom' } }]);
    expect(failed).toMatchObject([{ type: 'error', data: { message: 'boom', code: 'acp_error', details: { code: -32603 } } }, { type: 'turn.ended' }]);
    // Qwen Code's failed model call: a bare "Internal error", the provider's message in data.details.
    const qwen = run([{ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error', data: { details: '400 the model refuses' } } }]);
    expect(qwen[0]).toMatchObject({ type: 'error', data: { message: 'Internal error: 400 the model refuses', details: { data: { details: '400 the model refuses' } } } });
  });

  it('turns new, unknown but well-formed updates and notifications into status items', () => {
    const events = run([update({ sessionUpdate: 'session_info_update', title: 'Fixing a bug' }), { jsonrpc: '2.0', method: '_vendor/hello', params: { x: 1 } }]);
    expect(events).toMatchObject([
      { type: 'item.completed', item: { kind: 'status', content: [{ type: 'status', label: 'session_info_update', detail: '{"title":"Fixing a bug"}' }] } },
      { type: 'item.completed', item: { kind: 'status', content: [{ type: 'status', label: '_vendor/hello' }] } },
    ]);
  });

  it("a refused request is an error when it is one of the protocol's methods, a status item when it is an extension", () => {
    const events = run([
      { jsonrpc: '2.0', id: 8, method: 'fs/read_text_file', params: { sessionId: 's', path: '/etc/hostname' } },
      { jsonrpc: '2.0', id: 9, method: 'vendor/drainQueue', params: { sessionId: 's' } },
      { jsonrpc: '2.0', id: 10, method: '_vendor/ping', params: {} },
    ]);
    expect(events).toMatchObject([
      { type: 'error', data: { code: 'acp_unsupported_request', details: { method: 'fs/read_text_file', request_id: '8' } } },
      { type: 'item.completed', item: { kind: 'status', content: [{ type: 'status', label: 'unsupported_request' }, { type: 'json', json: { method: 'vendor/drainQueue', request_id: '9' } }] } },
      { type: 'item.completed', item: { kind: 'status', content: [{ type: 'status', label: 'unsupported_request' }, { type: 'json', json: { method: '_vendor/ping', request_id: '10' } }] } },
    ]);
  });

  it('an error answer without an id (a parse error) is an error that ends no turn', () => {
    expect(run([{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }])).toEqual([
      { type: 'error', data: { message: 'Parse error', code: 'acp_error', details: { code: -32700 } } },
    ]);
  });

  it('is unparsed only for what is not JSON-RPC or malformed', () => {
    const events = run(['not json', [1, 2], { jsonrpc: '2.0' }, update({ sessionUpdate: 'tool_call', title: 'no id' }), { jsonrpc: '2.0', id: 1, method: 'session/request_permission', params: { options: 'x' } }]);
    expect(events.map((e) => e.type)).toEqual(['agent.unparsed', 'agent.unparsed', 'agent.unparsed', 'agent.unparsed', 'agent.unparsed']);
  });

  it('a permission withdrawn by $/cancel_request is resolved as denied', () => {
    const toolCall = { toolCallId: 't1', title: 'Write a.txt', kind: 'edit', content: [{ type: 'diff', path: '/w/a.txt', newText: 'x\n' }] };
    const options = [{ optionId: 'ok', name: 'OK', kind: 'allow_once' }];
    const events = run([
      { jsonrpc: '2.0', id: 7, method: 'session/request_permission', params: { sessionId: 's', toolCall, options } },
      { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 7 } },
    ]);
    expect(events[0]).toMatchObject({ type: 'permission.requested', data: { permission_id: '7', action: 'file_change', metadata: { changes: [{ path: '/w/a.txt' }] } } });
    expect(events[1]).toMatchObject({ type: 'permission.resolved', data: { permission_id: '7', status: 'denied', metadata: { reason: 'cancelled_by_agent' } } });
  });

  it('a pending call without input stays open until an update brings its input', () => {
    const events = run([
      update({ sessionUpdate: 'tool_call', toolCallId: 'c1', status: 'pending', title: 'Shell', kind: 'execute', rawInput: {} }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', title: 'Shell: echo hi', rawInput: { command: 'echo hi' }, locations: [{ path: '/w' }] }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'hi' } }] }),
    ]);
    expect(events.map((e) => e.type)).toEqual(['item.started', 'item.completed', 'item.started', 'item.completed']);
    expect(events[0]).toMatchObject({ item: { key: 'tool:c1', kind: 'tool_call', status: 'in_progress', content: [{ type: 'tool_call', name: 'execute', arguments: '{}' }, { type: 'text', text: 'Shell' }] } });
    expect(events[1]).toMatchObject({
      item: { key: 'tool:c1', status: 'completed', content: [{ type: 'tool_call', arguments: '{"command":"echo hi"}' }, { type: 'text', text: 'Shell: echo hi' }, { type: 'file_ref', path: '/w', action: 'read' }] },
    });
    expect(events[3]).toMatchObject({ item: { key: 'result:c1', content: [{ type: 'tool_result', call_id: 'c1', output: 'hi' }] } });
  });

  it('a permission request brings the input of a call still waiting for it', () => {
    const toolCall = { toolCallId: 'c2', status: 'pending', title: 'Writing to a.txt', kind: 'edit', rawInput: { file_path: '/w/a.txt' }, content: [{ type: 'diff', path: '/w/a.txt', oldText: null, newText: 'x\n' }] };
    const events = run([
      update({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'WriteFile', kind: 'edit' }),
      { jsonrpc: '2.0', id: 4, method: 'session/request_permission', params: { sessionId: 's', toolCall, options: [{ optionId: 'ok', name: 'OK', kind: 'allow_once' }] } },
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'completed', content: toolCall.content }),
    ]);
    expect(events.map((e) => e.type)).toEqual(['item.started', 'item.completed', 'item.started', 'permission.requested', 'item.completed']);
    expect(events[1]).toMatchObject({ item: { key: 'tool:c2', content: [{ arguments: '{"file_path":"/w/a.txt"}' }, { text: 'Writing to a.txt' }, { type: 'file_ref', action: 'write' }] } });
    // The diff is the call's: the result does not repeat it.
    expect(events[4]).toMatchObject({ item: { key: 'result:c2', content: [{ type: 'tool_result', call_id: 'c2' }] } });
    expect((events[4] as { item: { content: unknown[] } }).item.content).toHaveLength(1);
  });

  it('a call with its input, or already running, completes at once; one that never got it fails at the turn end', () => {
    const events = run([
      update({ sessionUpdate: 'tool_call', toolCallId: 'a', status: 'pending', kind: 'read', rawInput: { path: 'x' } }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'b', status: 'in_progress', title: 'echo hi', kind: 'execute' }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'c', kind: 'execute', rawInput: {} }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'd', status: 'pending', kind: 'fetch' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'd', status: 'failed' }),
      { jsonrpc: '2.0', id: 5, result: { stopReason: 'cancelled' } },
    ]);
    const calls = events.filter((e) => e.type === 'item.completed' && e.item.kind === 'tool_call').map((e) => e.type === 'item.completed' && [e.item.key, e.item.status]);
    expect(calls).toEqual([['tool:a', 'completed'], ['tool:b', 'completed'], ['tool:d', 'completed'], ['tool:c', 'failed']]);
    expect(events.filter((e) => e.type === 'item.started').map((e) => e.type === 'item.started' && e.item.key)).toEqual(['result:a', 'result:b', 'tool:c', 'tool:d', 'result:d']);
  });

  it('a tool update for a call never seen starts it', () => {
    const events = run([update({ sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'completed', rawOutput: { ok: true } })]);
    expect(events.map((e) => e.type)).toEqual(['item.completed', 'item.started', 'item.completed']);
    expect(events[2]).toMatchObject({ item: { kind: 'tool_result', content: [{ type: 'tool_result', call_id: 'x', output: '{"ok":true}' }] } });
  });
});

describe('acp helpers', () => {
  it('maps replies onto the offered option kinds, nearest first', () => {
    const all = ['allow_once', 'allow_always', 'reject_once', 'reject_always'].map((kind) => ({ optionId: kind, name: kind, kind }));
    expect(permissionOutcome('once', all)).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(permissionOutcome('always', all)).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_always' } });
    expect(permissionOutcome('reject', all)).toEqual({ outcome: { outcome: 'selected', optionId: 'reject_once' } });
    expect(permissionOutcome('always', all.filter((o) => o.kind === 'allow_once'))).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(permissionOutcome('reject', all.slice(0, 2))).toBe(CANCELLED);
    expect(permissionOutcome('once', all.slice(2))).toBeUndefined();
  });

  it('makes unified diffs of whole texts', () => {
    expect(unifiedDiff('/w/new.txt', null, 'a\nb\n')).toBe('--- /dev/null\n+++ /w/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    expect(unifiedDiff('f.txt', '1\n2\n3\n4\n5\n', '1\n2\n3\nx\n5\n')).toBe('--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n 1\n 2\n 3\n-4\n+x\n 5\n');
  });

  it('writes MCP servers as ACP lists', () => {
    expect(acpMcpServers({ fs: { command: 'mcp-fs', args: ['/w'], env: { K: 'v' } }, web: { type: 'sse', url: 'http://x', headers: { A: 'b' } } })).toEqual([
      { name: 'fs', command: 'mcp-fs', args: ['/w'], env: [{ name: 'K', value: 'v' }] },
      { type: 'sse', name: 'web', url: 'http://x', headers: [{ name: 'A', value: 'b' }] },
    ]);
  });
});
