// Sub-agents (issue 31): the data of subagent.started and subagent.ended, and the optional
// `subagent_id` every event produced inside a sub-agent carries. It sits in `data`, not in the
// envelope: the universal schema fixes the envelope's fields and leaves `data` open, so a reader
// that ignores the field sees the stream it saw before. See docs/events.md, "Sub-agents".
import { z } from './zod.js';

export const SubagentId = z.string().openapi({
  description: 'The sub-agent this event was produced in (its subagent.started names it); absent for the main agent',
  example: 'sub_4f9k2m0x7c1v8b3n',
});

/** Spread into the data schemas of the events a sub-agent can produce. */
export const inSubagent = { subagent_id: SubagentId.optional() };

export const SubagentOutcome = z.enum(['completed', 'failed', 'interrupted']).openapi('SubagentOutcome');
export type SubagentOutcome = z.infer<typeof SubagentOutcome>;

export const SubagentStartedData = z
  .object({
    subagent_id: z.string(),
    parent_item_id: z.string().nullable().openapi({ description: 'The item_id of the tool call that launched it; null when the agent does not say' }),
    native_subagent_id: z.string().nullable().openapi({ description: "The agent's own id for it (Claude's task id, OpenCode's child session id)" }),
    parent_subagent_id: z.string().optional().openapi({ description: 'Set when a sub-agent launched it' }),
    description: z.string().optional(),
    prompt: z.string().optional(),
    agent_type: z.string().optional().openapi({ description: "The kind of sub-agent, as the agent names it (Claude's subagent_type, OpenCode's agent)" }),
    background: z.boolean().optional().openapi({ description: 'It runs on after the tool call returns (and may outlive the turn)' }),
  })
  .openapi('SubagentStartedData');
export type SubagentStartedData = z.infer<typeof SubagentStartedData>;

export const SubagentEndedData = z
  .object({
    subagent_id: z.string(),
    parent_item_id: z.string().nullable(),
    outcome: SubagentOutcome,
    summary: z.string().optional().openapi({ description: 'What it reported back, when the agent says' }),
    reason: z.string().optional().openapi({ description: 'Why the daemon ended it (turn_ended, session_ended) when the agent did not' }),
  })
  .openapi('SubagentEndedData');
export type SubagentEndedData = z.infer<typeof SubagentEndedData>;
