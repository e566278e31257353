// The ACP server's pure parts on their own: universal events → session/update (src/acp-server/updates.ts),
// a frame's parsing (json-rpc.ts), turn.ended as a stop reason and prompt blocks as a message
// (requests.ts), and the bridge's URL (acp-command.ts).
import { describe, expect, it } from 'vitest';
import { acpUrl } from '../../../src/acp-command.js';
import { parseFrame } from '../../../src/acp-server/json-rpc.js';
import { messageRequest, promptOutcome } from '../../../src/acp-server/requests.js';
import { initialUpdateState, mapEvent, type Outgoing, type UpdateState } from '../../../src/acp-server/updates.js';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';

let seq = 0;
const ev = (type: string, data: unknown): UniversalEvent =>
  ({ event_id: `evt_${++seq}`, sequence: seq, time: '2026-01-01T00:00:00.000Z', session_id: 's', native_session_id: null, source: 'agent', synthetic: false, type, data, raw: null }) as UniversalEvent;
const item = (over: Partial<UniversalItem>): UniversalItem => ({ item_id: 'itm_1', native_item_id: null, parent_id: null, kind: 'message', role: 'assistant', content: [], status: 'in_progress', ...over });

function run(events: UniversalEvent[], state: UpdateState = initialUpdateState()): Outgoing[] {
  const out: Outgoing[] = [];
  for (const e of events) {
    const mapped = mapEvent(state, e);
    state = mapped.state;
    out.push(...mapped.out);
  }
  return out;
}
const updates = (out: Outgoing[]) => out.flatMap((o) => (o.kind === 'update' ? [o.update] : []));

describe('universal events → session/update', () => {
  it('streams a message as chunks, its start and completion as events, reasoning at completion as a thought', () => {
    const out = run([
      ev('item.started', { item: item({}) }),
      ev('item.delta', { item_id: 'itm_1', native_item_id: null, delta: 'Hel' }),
      ev('item.delta', { item_id: 'itm_1', native_item_id: null, delta: 'lo' }),
      ev('item.completed', { item: item({ status: 'completed', content: [{ type: 'reasoning', text: 'why', visibility: 'public' }, { type: 'text', text: 'Hello' }] }) }),
    ]);
    expect(updates(out)).toEqual([
      // Every chunk names its message (the item); the reasoning given at completion is a message of its own.
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' }, messageId: 'itm_1' },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'lo' }, messageId: 'itm_1' },
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'why' }, messageId: 'itm_1#reasoning' },
    ]);
    expect(out.filter((o) => o.kind === 'event').map((o) => (o as { event: UniversalEvent }).event.type)).toEqual(['item.started']);
  });

  it('maps a tool call and its result, the diff as text content', () => {
    const call = item({ item_id: 'itm_2', kind: 'tool_call', content: [{ type: 'tool_call', name: 'write_file', arguments: '{"path":"a.txt"}', call_id: 'c1' }] });
    const result = item({ item_id: 'itm_3', kind: 'tool_result', role: 'tool', status: 'completed', content: [{ type: 'tool_result', call_id: 'c1', output: 'ok' }, { type: 'file_ref', path: 'a.txt', action: 'write', diff: '+x' }] });
    const u = updates(run([ev('item.started', { item: call }), ev('item.completed', { item: { ...call, status: 'completed' } }), ev('item.started', { item: { ...result, content: [], status: 'in_progress' } }), ev('item.completed', { item: result })]));
    expect(u.map((x) => [x.sessionUpdate, x.status])).toEqual([['tool_call', 'pending'], ['tool_call_update', 'in_progress'], ['tool_call_update', 'completed']]);
    expect(u[0]).toMatchObject({ toolCallId: 'c1', kind: 'edit', rawInput: { path: 'a.txt' } });
    expect(u[2]!.content).toEqual([{ type: 'content', content: { type: 'text', text: 'ok' } }, expect.objectContaining({ type: 'content', content: { type: 'text', text: '+x' } })]);
  });

  it("leaves the client's own prompt unechoed during its turn, and shows other users' messages", () => {
    const user = item({ role: 'user', status: 'completed', content: [{ type: 'text', text: 'hi' }] });
    expect(updates(run([ev('item.completed', { item: user })], { ...initialUpdateState(), ownTurn: true }))).toEqual([]);
    expect(updates(run([ev('item.completed', { item: user })]))).toEqual([{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hi' }, messageId: 'itm_1' }]);
  });

  it('sends the title of a titled session with session.started, as a session_info_update', () => {
    const started = ev('session.started', {});
    expect(updates(run([started], initialUpdateState('Fix the build')))).toEqual([{ sessionUpdate: 'session_info_update', title: 'Fix the build', updatedAt: started.time }]);
    expect(updates(run([started]))).toEqual([]);
  });

  it('sends a plan, a mode and a context window as their updates, other status items as events', () => {
    const status = (label: string, detail: string, json?: unknown) => item({ kind: 'status', role: null, status: 'completed', content: [{ type: 'status', label, detail }, ...(json ? [{ type: 'json' as const, json }] : [])] });
    const entries = [{ content: 'a', priority: 'high', status: 'pending' }];
    const out = run([
      ev('item.completed', { item: status('plan', '[ ] a', entries) }),
      ev('item.completed', { item: status('mode', 'plan') }),
      ev('item.completed', { item: status('indexing', '3 files') }),
      ev('turn.ended', { metadata: { reason: 'completed', context_usage: { used: 10, size: 100 } } }),
    ]);
    expect(updates(out)).toEqual([{ sessionUpdate: 'plan', entries }, { sessionUpdate: 'current_mode_update', currentModeId: 'plan' }, { sessionUpdate: 'usage_update', used: 10, size: 100 }]);
    expect(out.filter((o) => o.kind === 'event')).toHaveLength(2);
  });
});

describe('requests and frames', () => {
  it('gives the stop reason from turn.ended', () => {
    expect(promptOutcome({ metadata: { reason: 'completed' } }, 5)).toMatchObject({ result: { stopReason: 'end_turn', _meta: { agentwire: { sequence: 5, reason: 'completed' } } } });
    expect(promptOutcome({ metadata: { reason: 'interrupted' } }, 5)).toMatchObject({ result: { stopReason: 'cancelled' } });
    expect(promptOutcome({ metadata: { reason: 'error', stop_reason: 'refusal' } }, 5)).toMatchObject({ result: { stopReason: 'refusal' } });
    // A turn that failed has no ACP stop reason: it is a JSON-RPC error, never end_turn.
    for (const reason of ['error', 'agent_exited', 'terminated', 'budget_exceeded'] as const) {
      const outcome = promptOutcome({ metadata: { reason } }, 5, 'boom');
      expect('error' in outcome && outcome.error.body(), reason).toMatchObject({ code: -32603, message: expect.stringContaining('boom'), data: { agentwire: { sequence: 5, reason, error: 'boom' } } });
    }
  });

  it('takes text, resources and local images from a prompt, and refuses inline data', () => {
    expect(messageRequest([{ type: 'text', text: 'look' }, { type: 'resource_link', uri: 'file:///a.ts', name: 'a.ts' }, { type: 'image', uri: 'file:///p%20q.png', mimeType: 'image/png', data: '' }])).toEqual({
      message: 'look\n\nfile:///a.ts',
      attachments: [{ path: '/p q.png', mime: 'image/png' }],
    });
    expect(() => messageRequest([{ type: 'image', data: 'iVBOR', mimeType: 'image/png' }])).toThrow(/cannot pass on/);
    expect(() => messageRequest([])).toThrow(/non-empty/);
  });

  it('parses frames: requests, responses, and errors for the rest', () => {
    expect(parseFrame('{"jsonrpc":"2.0","id":1,"method":"x"}')).toEqual({ message: { jsonrpc: '2.0', id: 1, method: 'x' } });
    expect(parseFrame('{"jsonrpc":"2.0","id":1,"result":{}}')).toEqual({ message: { jsonrpc: '2.0', id: 1, result: {} } });
    expect(parseFrame('nope')).toMatchObject({ error: { id: null, error: { code: -32700 } } });
    expect(parseFrame('[]')).toMatchObject({ error: { id: null, error: { code: -32600 } } });
    expect(parseFrame('{"jsonrpc":"2.0","id":{},"method":"x"}')).toMatchObject({ error: { error: { code: -32600 } } });
  });

  it("finds the bridge's URL: the local daemon by default, any scheme given", () => {
    expect(acpUrl(undefined, {}).toString()).toBe('ws://127.0.0.1:2468/v1/acp');
    expect(acpUrl(undefined, { AGENTWIRE_HOST: '0.0.0.0', AGENTWIRE_PORT: '9000' }).toString()).toBe('ws://127.0.0.1:9000/v1/acp');
    expect(acpUrl('https://box.example/agentwire/', {}).toString()).toBe('wss://box.example/agentwire/v1/acp');
    expect(acpUrl('ws://h:1/v1/acp', {}).toString()).toBe('ws://h:1/v1/acp');
    expect(() => acpUrl('ftp://h', {})).toThrow(/http/);
  });
});
