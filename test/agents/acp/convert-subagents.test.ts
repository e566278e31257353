// Sub-agents over ACP: session/update notifications marked with `_meta.parentToolCallId`, as Qwen
// Code 0.24.4 sends them for its `task` tool's sub-agent (shape taken from its ACP code; not
// recorded end to end), through the converter and the normalizer.
import { describe, expect, it } from 'vitest';
import { acpConverter } from '../../../src/agents/acp/convert.js';
import { mockCapabilities } from '../../../src/agents/mock/capabilities.js';
import type { PendingEvent } from '../../../src/schema/events.js';
import { Normalizer } from '../../../src/sessions/normalize.js';
import { counterIds } from '../../../src/util/deps.js';

const update = (u: Record<string, unknown>) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: u } });
const meta = { parentToolCallId: 'call_task', subagentType: 'general-purpose' };
const LINES = [
  update({ sessionUpdate: 'tool_call', toolCallId: 'call_task', title: 'task', kind: 'other', status: 'in_progress', rawInput: { description: 'Look around', prompt: 'List the files.', subagent_type: 'general-purpose' } }),
  update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Listing.' }, _meta: meta }),
  update({ sessionUpdate: 'tool_call', toolCallId: 'call_ls', title: 'ls', kind: 'execute', status: 'in_progress', rawInput: { command: 'ls' }, _meta: meta }),
  update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_ls', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'a.txt' } }], _meta: meta }),
  update({ sessionUpdate: 'tool_call_update', toolCallId: 'call_task', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'Found a.txt' } }] }),
  update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Done.' } }),
];

function run(lines: unknown[]): PendingEvent[] {
  const n = new Normalizer({ ...mockCapabilities, userMessages: false, nativeTurnStart: false }, counterIds());
  const out = n.turnStarted({ message: 'go', attachments: [] }, null).map((e) => e.event);
  let state = acpConverter.initial();
  for (const line of lines) {
    const r = acpConverter.convert(state, line);
    state = r.state;
    out.push(...n.agent(r.events, line).map((e) => e.event));
  }
  return out;
}
const sub = (e: PendingEvent) => (e.data as { subagent_id?: string }).subagent_id;

describe('acp sub-agents (_meta.parentToolCallId)', () => {
  it('starts the sub-agent under its task call, attributes its updates, ends it with the call', () => {
    const events = run(LINES);
    expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
    const call = events.find((e) => e.type === 'item.started' && e.data.item.native_item_id === 'call_task');
    const callId = call?.type === 'item.started' ? call.data.item.item_id : '';
    const started = events.find((e) => e.type === 'subagent.started');
    const ended = events.find((e) => e.type === 'subagent.ended');
    expect(started?.data).toEqual({ subagent_id: 'sub_1', parent_item_id: callId, native_subagent_id: null, description: 'Look around', prompt: 'List the files.', agent_type: 'general-purpose' });
    expect(ended?.data).toEqual({ subagent_id: 'sub_1', parent_item_id: callId, outcome: 'completed' });
    const ls = events.filter((e) => e.type.startsWith('item.') && JSON.stringify(e.data).includes('call_ls'));
    expect(ls.length).toBeGreaterThan(0);
    expect(new Set(ls.map(sub))).toEqual(new Set(['sub_1']));
    const listing = events.find((e) => e.type === 'item.delta' && e.data.delta === 'Listing.');
    expect(sub(listing!)).toBe('sub_1');
    const done = events.find((e) => e.type === 'item.delta' && e.data.delta === 'Done.');
    expect(sub(done!)).toBeUndefined();
    expect(events.indexOf(ended!)).toBeLessThan(events.indexOf(done!));
  });

  it('a turn that ends with the sub-agent running ends it as interrupted', () => {
    const norm = new Normalizer({ ...mockCapabilities, userMessages: false, nativeTurnStart: false }, counterIds());
    norm.turnStarted({ message: 'go', attachments: [] }, null);
    let state = acpConverter.initial();
    const before: PendingEvent[] = [];
    for (const line of LINES.slice(0, 3)) {
      const r = acpConverter.convert(state, line);
      state = r.state;
      before.push(...norm.agent(r.events, line).map((e) => e.event));
    }
    expect(before.some((e) => e.type === 'subagent.started')).toBe(true);
    const end = norm.agent([{ type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } }], null).map((e) => e.event);
    expect(end.find((e) => e.type === 'subagent.ended')?.data).toMatchObject({ subagent_id: 'sub_1', outcome: 'interrupted' });
  });
});
