// Claude Code's stdout in the mode the driver runs it (`-p --input-format stream-json
// --output-format stream-json --verbose --include-partial-messages --permission-prompt-tool stdio`),
// as recorded from 2.1.337 in test/agents/claude/fixtures/recorded/. LOOSE on purpose: every object keeps
// the fields it does not list (z.looseObject), and only what the converter reads is required.
// Numbers the converter only passes through (usage, durations, costs) are z.unknown(): the CLI
// changes them often and the recordings replace some with placeholders.
import { z } from 'zod';

// ---- content blocks (Anthropic Messages API) --------------------------------------------------

export const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
export const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
export const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking') });
export const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export const AssistantBlock = z.union([TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock]);
export type AssistantBlock = z.infer<typeof AssistantBlock>;

export const ImageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.string(), media_type: z.string().optional(), data: z.string().optional(), url: z.string().optional() }),
});
export type ImageBlock = z.infer<typeof ImageBlock>;
export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

// ---- stream_event: the Anthropic SSE event verbatim -------------------------------------------

export const StreamDelta = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
  z.looseObject({ type: z.literal('thinking_delta'), thinking: z.string() }),
  z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  z.looseObject({ type: z.literal('signature_delta') }),
  z.looseObject({ type: z.literal('citations_delta') }),
]);

export const StreamEvent = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('message_start'), message: z.looseObject({ id: z.string() }) }),
  z.looseObject({ type: z.literal('content_block_start'), index: z.number() }),
  z.looseObject({ type: z.literal('content_block_delta'), index: z.number(), delta: StreamDelta }),
  z.looseObject({ type: z.literal('content_block_stop'), index: z.number() }),
  z.looseObject({ type: z.literal('message_delta') }),
  z.looseObject({ type: z.literal('message_stop') }),
  z.looseObject({ type: z.literal('ping') }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

// ---- stdout lines ------------------------------------------------------------------------------

/** `system` lines: init, status, api_retry, thinking_tokens and others; subtypes read in convert. */
export const SystemLine = z.looseObject({ type: z.literal('system'), subtype: z.string() });
export const SystemInit = z.looseObject({
  subtype: z.literal('init'),
  session_id: z.string(),
  model: z.unknown().optional(),
  tools: z.unknown().optional(),
  cwd: z.unknown().optional(),
  permissionMode: z.unknown().optional(),
});

export const ClaudeOut = z.discriminatedUnion('type', [
  SystemLine,
  z.looseObject({
    type: z.literal('stream_event'),
    event: z.looseObject({ type: z.string() }),
    api_message_id: z.string().optional(),
  }),
  /** One line per content block (2.1.337), all blocks of a response sharing `message.id`. */
  z.looseObject({
    type: z.literal('assistant'),
    /** The transcript entry's id: what `--resume-session-at` branches after. */
    uuid: z.string().optional(),
    message: z.looseObject({ id: z.string(), content: z.array(z.looseObject({ type: z.string() })) }),
  }),
  /** Tool results (and, with --replay-user-messages, which the driver does not pass, user echoes). */
  z.looseObject({
    type: z.literal('user'),
    message: z.looseObject({ content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }),
    tool_use_result: z.unknown().optional(),
  }),
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    usage: z.unknown().optional(),
    total_cost_usd: z.unknown().optional(),
    duration_ms: z.unknown().optional(),
    num_turns: z.unknown().optional(),
    stop_reason: z.unknown().optional(),
    permission_denials: z.unknown().optional(),
  }),
  z.looseObject({ type: z.literal('control_request'), request_id: z.string(), request: z.looseObject({ subtype: z.string() }) }),
  z.looseObject({
    type: z.literal('control_response'),
    response: z.looseObject({
      subtype: z.string(),
      request_id: z.string().optional(),
      response: z.record(z.string(), z.unknown()).optional(),
      error: z.string().optional(),
    }),
  }),
  /** Printed by the stdio control protocol while idle; carries nothing. */
  z.looseObject({ type: z.literal('keep_alive') }),
  /** Where a user line that carried a `uuid` (the driver's steered messages) is in the CLI's queue:
   *  queued (a turn runs), started (given to the model), completed, or cancelled. */
  z.looseObject({ type: z.literal('command_lifecycle'), command_uuid: z.string(), state: z.string() }),
]);
export type ClaudeOut = z.infer<typeof ClaudeOut>;

/** The CLI asks whether a tool may run (only without bypass; answered over stdin). */
export const CanUseTool = z.looseObject({
  subtype: z.literal('can_use_tool'),
  tool_name: z.string(),
  input: z.record(z.string(), z.unknown()),
  permission_suggestions: z.unknown().optional(),
  blocked_path: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  description: z.unknown().optional(),
});
export type CanUseTool = z.infer<typeof CanUseTool>;

/** AskUserQuestion's input: up to a few questions, each with labelled options. */
export const AskUserQuestionInput = z.looseObject({
  questions: z.array(
    z.looseObject({
      question: z.string(),
      options: z.array(z.looseObject({ label: z.string() })).optional(),
    }),
  ),
});
export const ExitPlanModeInput = z.looseObject({ plan: z.string() });
