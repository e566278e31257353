// Amp's `--stream-json[-thinking]` stdout lines (docs/amp.md, "Amp's headless format"), plus the
// two messages the driver itself feeds to the converter (`agentwire.*`, never printed by Amp): a
// permission asked by the delegate program, and the exit of a turn's process that printed no
// `result`. LOOSE on purpose: unknown fields are kept and ignored; only what is read is required.
import { z } from 'zod';

export const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
export const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
export const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking') });
export const ToolUseBlock = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) });
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export const AssistantBlock = z.discriminatedUnion('type', [TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock]);

/** Amp always writes `content` as a string (JSON of the tool's result when it is not a string). */
export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.string(),
  is_error: z.boolean().optional(),
});

const Block = z.looseObject({ type: z.string() });

export const AmpOut = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('system'),
    subtype: z.string(),
    session_id: z.string().optional(),
    cwd: z.unknown().optional(),
    tools: z.unknown().optional(),
    mcp_servers: z.unknown().optional(),
    agent_mode: z.unknown().optional(),
  }),
  z.looseObject({
    type: z.literal('assistant'),
    message: z.looseObject({ content: z.array(Block), stop_reason: z.string().nullable().optional(), usage: z.unknown().optional() }),
  }),
  /** The echo of our prompt (text blocks) or tool results. */
  z.looseObject({ type: z.literal('user'), message: z.looseObject({ content: z.union([z.string(), z.array(Block)]) }) }),
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().optional(),
    error: z.string().optional(),
    duration_ms: z.unknown().optional(),
    num_turns: z.unknown().optional(),
  }),
  /** The delegate program asks (driver → converter). `decided: 'always'`: answered by a remembered rule. */
  z.looseObject({
    type: z.literal('agentwire.permission'),
    id: z.string(),
    tool: z.string(),
    input: z.unknown(),
    thread_id: z.string().nullable().optional(),
    decided: z.literal('always').optional(),
  }),
  /** A turn's process ended without a `result` line (driver → converter). */
  z.looseObject({
    type: z.literal('agentwire.exit'),
    exit_code: z.number().nullable(),
    signal: z.string().nullable(),
    message: z.string(),
    /** Set when the daemon interrupted the turn and had to kill the process: the session goes on. */
    interrupted: z.boolean().optional(),
    /** Set when the process said the thread it was to continue does not exist. */
    resume_failed: z.boolean().optional(),
    stderr: z.looseObject({ truncated: z.boolean() }).optional(),
  }),
]);
export type AmpOut = z.infer<typeof AmpOut>;
