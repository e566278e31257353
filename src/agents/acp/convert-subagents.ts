// Sub-agents over ACP (docs/acp.md, "Sub-agents"). ACP itself has no sub-agent; Qwen Code (0.24.4)
// marks every session/update its sub-agent produces with `_meta.parentToolCallId` (the id of the
// tool call that launched it, its `task` tool) and `_meta.subagentType`. Any ACP agent that does
// the same gets the same: the first such update starts the sub-agent (parented to that call's
// item), its updates are its work, and the call's completion ends it. Gemini CLI (0.61.0) marks
// nothing: its sub-agent tools are one tool call each. Pure.
import type { Draft } from '../types.js';
import type { AcpState, Out } from './state.js';
import { isObject } from '../../util/is-object.js';

/** The launching call's id of an update a sub-agent produced, if it says. */
export function parentToolCallOf(update: Record<string, unknown>): string | undefined {
  const meta = update._meta;
  return isObject(meta) && typeof meta.parentToolCallId === 'string' ? meta.parentToolCallId : undefined;
}

/** An update's drafts inside sub-agent `parent`, started the first time it is heard of. */
export function inSubagent(before: AcpState, out: Out, parent: string, update: Record<string, unknown>): Out {
  const events: Draft[] = out.events.map((d) => (d.subagent_key !== undefined || d.type === 'subagent.started' || d.type === 'subagent.ended' ? d : { ...d, subagent_key: parent }));
  if (Object.hasOwn(before.subagents, parent)) return { state: out.state, events };
  const meta = update._meta as Record<string, unknown>;
  const input = before.tools[parent]?.call.rawInput;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const fields = isObject(input) ? input : {};
  const [description, prompt, agentType] = [str(fields.description), str(fields.prompt), str(meta.subagentType) ?? str(fields.subagent_type)];
  const data = {
    ...(description !== undefined ? { description } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    ...(agentType !== undefined ? { agent_type: agentType } : {}),
  };
  const parentKey = Object.hasOwn(before.tools, parent) ? `tool:${parent}` : null;
  const started: Draft = { type: 'subagent.started', key: parent, parent_key: parentKey, native_subagent_id: null, data };
  return { state: { ...out.state, subagents: { ...out.state.subagents, [parent]: true } }, events: [started, ...events] };
}

/** A tool call that launched a sub-agent finished: the sub-agent ends with it. */
export function endedWithCall(out: Out, toolCallId: string, status: unknown): Out {
  if (!Object.hasOwn(out.state.subagents, toolCallId) || (status !== 'completed' && status !== 'failed')) return out;
  const { [toolCallId]: _, ...subagents } = out.state.subagents;
  const ended: Draft = { type: 'subagent.ended', key: toolCallId, data: { outcome: status === 'completed' ? 'completed' : 'failed' } };
  return { state: { ...out.state, subagents }, events: [...out.events, ended] };
}
