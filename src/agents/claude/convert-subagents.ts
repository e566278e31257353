// Claude Code's sub-agents (the Agent tool, called Task in its tool list) in the universal schema
// (docs/claude.md, "Sub-agents"). 2.1.337 says three things about one: a `system` line
// `task_started` (its task id, the tool_use id of the Agent call, description, prompt, agent type,
// backgrounded or not), `parent_tool_use_id` = that tool_use id on every stream_event, assistant
// and user line the sub-agent prints, and a `system` line `task_notification` when it ends (status
// and summary). `task_progress` lines become status items of the sub-agent; `task_updated`
// repeats what the notification says and is dropped. The sub-agent's key is the Agent call's
// tool_use id, which is also its tool_call item's key: its parent. Pure.
import type { SubagentOutcome } from '../../schema/events.js';
import type { Draft } from '../types.js';

/** The system subtypes read here, with the drafts of each (undefined: not a sub-agent line). */
export function subagentSystemLine(line: Record<string, unknown>): Draft[] | undefined {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const toolUseId = str(line.tool_use_id);
  const taskId = str(line.task_id);
  const key = toolUseId ?? taskId;
  switch (line.subtype) {
    case 'task_started': {
      if (key === undefined) return undefined;
      const description = str(line.description);
      const prompt = str(line.prompt);
      const agentType = str(line.subagent_type);
      const data = {
        ...(description !== undefined ? { description } : {}),
        ...(prompt !== undefined ? { prompt } : {}),
        ...(agentType !== undefined ? { agent_type: agentType } : {}),
        ...(typeof line.is_backgrounded === 'boolean' ? { background: line.is_backgrounded } : {}),
      };
      return [{ type: 'subagent.started', key, parent_key: toolUseId ?? null, native_subagent_id: taskId ?? null, data }];
    }
    case 'task_notification': {
      if (key === undefined) return undefined;
      const summary = str(line.summary);
      return [{ type: 'subagent.ended', key, data: { outcome: outcomeOf(str(line.status)), ...(summary !== undefined ? { summary } : {}) } }];
    }
    case 'task_updated':
      return [];
    default:
      return undefined;
  }
}

/** A task's end status as an outcome: anything but completed or failed was stopped. */
function outcomeOf(status: string | undefined): SubagentOutcome {
  if (status === 'completed') return 'completed';
  if (status === 'failed' || status === 'error') return 'failed';
  return 'interrupted';
}

/** The sub-agent a line was printed by (`parent_tool_use_id`), if any. */
export function subagentOf(line: Record<string, unknown>): string | undefined {
  return typeof line.parent_tool_use_id === 'string' ? line.parent_tool_use_id : undefined;
}

/** The drafts of a sub-agent's line, each marked as produced in it. */
export function inSubagent(key: string | undefined, events: Draft[]): Draft[] {
  if (key === undefined) return events;
  return events.map((d) => (d.type === 'subagent.started' || d.type === 'subagent.ended' || d.subagent_key !== undefined ? d : { ...d, subagent_key: key }));
}
