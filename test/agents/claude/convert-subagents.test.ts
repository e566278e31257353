// Claude Code's sub-agents through the converter and the normalizer: native lines as 2.1.330 prints
// them for a foreground Agent call (trimmed to the fields read; recorded against the fake model by
// the e2e test in e2e-subagents.test.ts), then the events the log would get.
import { describe, expect, it } from 'vitest';
import { claudeCapabilities } from '../../../src/agents/claude/capabilities.js';
import { claudeConverter } from '../../../src/agents/claude/convert.js';
import type { PendingEvent } from '../../../src/schema/events.js';
import { Normalizer } from '../../../src/sessions/normalize.js';
import { counterIds } from '../../../src/util/deps.js';
import { convertLines } from '../../support/convert-lines.js';

const AGENT = 'toolu_agent';
const sys = (subtype: string, rest: Record<string, unknown>) => ({ type: 'system', subtype, session_id: 's', uuid: `u-${subtype}`, ...rest });
const assistant = (id: string, content: unknown[], parent: string | null) => ({ type: 'assistant', message: { id, content }, parent_tool_use_id: parent, uuid: `u-${id}` });
const toolResult = (id: string, output: string, parent: string | null) => ({
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output, is_error: false }] },
  parent_tool_use_id: parent,
});
const agentCall = { type: 'tool_use', id: AGENT, name: 'Agent', input: { description: 'Look around', prompt: 'List the files.', subagent_type: 'general-purpose', run_in_background: false } };

const LINES = [
  assistant('msg_main', [{ type: 'text', text: 'Delegating.' }, agentCall], null),
  sys('task_started', { task_id: 'a548', tool_use_id: AGENT, description: 'Look around', subagent_type: 'general-purpose', is_backgrounded: false, prompt: 'List the files.' }),
  { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'List the files.' }] }, parent_tool_use_id: AGENT, agent_id: 'a548' },
  assistant('msg_sub', [{ type: 'text', text: 'Listing.' }], AGENT),
  assistant('msg_sub', [{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo hi' } }], AGENT),
  sys('task_progress', { task_id: 'a548', tool_use_id: AGENT, description: 'Running echo hi', last_tool_name: 'Bash' }),
  toolResult('toolu_bash', 'hi', AGENT),
  sys('task_updated', { task_id: 'a548', patch: { status: 'completed' } }),
  sys('task_notification', { task_id: 'a548', tool_use_id: AGENT, status: 'completed', summary: 'Found nothing.' }),
  toolResult(AGENT, 'Found nothing.', null),
];

function normalized(lines: unknown[], then?: (n: Normalizer) => PendingEvent[]): PendingEvent[] {
  const n = new Normalizer(claudeCapabilities, counterIds());
  const out = n.turnStarted({ message: 'go', attachments: [] }, null).map((e) => e.event);
  let state = claudeConverter.initial();
  for (const line of lines) {
    const r = claudeConverter.convert(state, line);
    state = r.state;
    out.push(...n.agent(r.events, line).map((e) => e.event));
  }
  return [...out, ...(then?.(n) ?? [])];
}

const sub = (e: PendingEvent) => (e.data as { subagent_id?: string }).subagent_id;

describe('claude sub-agents', () => {
  it('converts task_started / task_notification and marks the sub-agent lines', () => {
    const { events } = convertLines(claudeConverter, LINES);
    expect(events.filter((d) => d.type === 'agent.unparsed')).toEqual([]);
    expect(events.find((d) => d.type === 'subagent.started')).toEqual({
      type: 'subagent.started', key: AGENT, parent_key: AGENT, native_subagent_id: 'a548',
      data: { description: 'Look around', prompt: 'List the files.', agent_type: 'general-purpose', background: false },
    });
    expect(events.find((d) => d.type === 'subagent.ended')).toEqual({ type: 'subagent.ended', key: AGENT, data: { outcome: 'completed', summary: 'Found nothing.' } });
    const bash = events.find((d) => d.type === 'item.completed' && d.item.key === 'toolu_bash');
    expect(bash?.subagent_key).toBe(AGENT);
    const agentResult = events.find((d) => d.type === 'item.completed' && d.item.key === `result:${AGENT}`);
    expect(agentResult?.subagent_key).toBeUndefined();
  });

  it('attributes the sub-agent work to the Agent tool call', () => {
    const events = normalized(LINES);
    const call = events.find((e) => e.type === 'item.completed' && e.data.item.native_item_id === AGENT);
    const started = events.find((e) => e.type === 'subagent.started');
    const ended = events.find((e) => e.type === 'subagent.ended');
    expect(call?.type === 'item.completed' && sub(call)).toBeUndefined();
    const callId = call?.type === 'item.completed' ? call.data.item.item_id : '';
    expect(started?.data).toEqual({ subagent_id: 'sub_1', parent_item_id: callId, native_subagent_id: 'a548', description: 'Look around', prompt: 'List the files.', agent_type: 'general-purpose', background: false });
    expect(ended?.data).toEqual({ subagent_id: 'sub_1', parent_item_id: callId, outcome: 'completed', summary: 'Found nothing.' });
    const between = events.slice(events.indexOf(started!) + 1, events.indexOf(ended!));
    const items = between.filter((e) => e.type.startsWith('item.'));
    expect(items.length).toBeGreaterThan(4);
    // Everything between the start and the end is the sub-agent's, deltas and status items included.
    expect(items.map(sub)).toEqual(items.map(() => 'sub_1'));
    expect(items.some((e) => e.type === 'item.completed' && e.data.item.kind === 'status')).toBe(true);
    const after = events.slice(events.indexOf(ended!) + 1).filter((e) => e.type.startsWith('item.'));
    expect(after.map(sub)).toEqual(after.map(() => undefined));
  });

  it('ends a sub-agent the turn leaves running as interrupted', () => {
    const cut = LINES.slice(0, 5);
    const events = normalized(cut, (n) => n.agent([{ type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } }], null).map((e) => e.event));
    const types = events.map((e) => e.type);
    expect(types.slice(-4)).toEqual(['item.completed', 'item.completed', 'subagent.ended', 'turn.ended']);
    // The open messages fail inside the sub-agent (the main one and the sub-agent's).
    expect(events.at(-3)).toMatchObject({ type: 'item.completed', data: { item: { native_item_id: 'msg_sub', status: 'failed' }, subagent_id: 'sub_1' } });
    expect(events.at(-2)).toMatchObject({ data: { subagent_id: 'sub_1', outcome: 'interrupted', reason: 'turn_ended' }, source: 'daemon' });
  });

  it('leaves a background sub-agent open at the turn end and ends it with the session', () => {
    const started = sys('task_started', { task_id: 'b1', tool_use_id: AGENT, description: 'bg', is_backgrounded: true });
    const events = normalized([assistant('msg_main', [agentCall], null), started, { type: 'result', subtype: 'success', is_error: false, result: 'ok' }], (n) =>
      n.processExited({ exitCode: 0, signal: null, stderr: { truncated: false }, requested: true }, undefined).map((e) => e.event),
    );
    const types = events.map((e) => e.type);
    expect(types.indexOf('turn.ended')).toBeLessThan(types.indexOf('subagent.ended'));
    expect(events.find((e) => e.type === 'subagent.ended')?.data).toMatchObject({ outcome: 'interrupted', reason: 'session_ended' });
    expect(types.at(-1)).toBe('session.ended');
  });

  it('says a permission request comes from the sub-agent that asked', () => {
    const ask = { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'echo hi' }, tool_use_id: 'toolu_bash' } };
    const events = normalized([...LINES.slice(0, 5), ask]);
    expect(events.find((e) => e.type === 'permission.requested')?.data).toMatchObject({ permission_id: 'r1', subagent_id: 'sub_1' });
  });
});
