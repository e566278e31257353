// OpenCode's sub-agents (docs/opencode.md, "Sub-agents"). The `task` tool runs a child session:
// its tool part names the child in `state.metadata.sessionId` once running, and the router
// (route.ts) passes the child's events to the parent's converter. Here: the task part as the
// sub-agent's start and end, and a child's events as the sub-agent's work. A child's session.idle
// ends the sub-agent, never the parent's turn; its status and abort are its own. Pure.
import type { SubagentOutcome } from '../../schema/events.js';
import type { Draft } from '../types.js';
import type { ToolPart } from './native.js';

/** subagent.started / subagent.ended for a `task` tool part that names its child session. */
export function taskPartDrafts(part: ToolPart): Draft[] {
  if (part.tool !== 'task') return [];
  const child = part.state.metadata?.sessionId;
  if (typeof child !== 'string') return [];
  const input = part.state.input;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const [description, prompt, agentType] = [str(input.description), str(input.prompt), str(input.subagent_type)];
  const data = {
    ...(description !== undefined ? { description } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    ...(agentType !== undefined ? { agent_type: agentType } : {}),
  };
  const started: Draft = { type: 'subagent.started', key: child, parent_key: part.id, native_subagent_id: child, data };
  const status = part.state.status;
  if (status !== 'completed' && status !== 'error') return [started];
  const outcome: SubagentOutcome = status === 'completed' ? 'completed' : /abort/i.test(part.state.error ?? '') ? 'interrupted' : 'failed';
  return [started, { type: 'subagent.ended', key: child, data: { outcome } }];
}

/** What a child session's own lifecycle events mean for its sub-agent; undefined for the rest. */
export function childLifecycle(type: string, child: string, properties: Record<string, unknown>): Draft[] | undefined {
  switch (type) {
    case 'session.idle':
      return [{ type: 'subagent.ended', key: child, data: { outcome: 'completed' } }];
    case 'session.status':
      return []; // the child's busy and idle are not the session's
    case 'session.error': {
      const error = properties.error as { name?: unknown; data?: { message?: unknown } } | undefined;
      if (error?.name === 'MessageAbortedError') return [{ type: 'subagent.ended', key: child, data: { outcome: 'interrupted' } }];
      const message = typeof error?.data?.message === 'string' ? error.data.message : typeof error?.name === 'string' ? error.name : 'unknown error';
      return [{ type: 'error', data: { message, code: `opencode_${typeof error?.name === 'string' ? error.name : 'error'}` }, subagent_key: child }];
    }
    default:
      return undefined;
  }
}

/** A child's drafts marked as its sub-agent's (a task it starts names it as its parent). */
export function inChild(child: string, events: Draft[]): Draft[] {
  return events.map((d) => (d.subagent_key !== undefined || d.type === 'subagent.ended' ? d : { ...d, subagent_key: child }));
}
