// Claude Code's coverage row (2.1.337 in stream-json mode with --include-partial-messages and the
// stdio permission prompt), and the normalizer flags its output needs. True only for what
// convert.ts really produces from what the CLI prints.
import type { Capabilities } from '../../schema/agents.js';

export const claudeCapabilities: Capabilities = {
  textMessages: true,
  toolCalls: true,
  toolResults: true,
  questions: true, // AskUserQuestion and ExitPlanMode arrive as can_use_tool requests
  permissions: true, // can_use_tool
  images: true, // image blocks of tool results (e.g. Read of a picture)
  fileAttachments: true, // a turn's images go to Claude as base64 image blocks, other files as paths in the text
  sessionLifecycle: true, // the initialize answer starts the session; no native end (the process exit does)
  errorEvents: true, // result is_error / error_* subtypes, control errors
  reasoning: true, // thinking blocks (redacted_thinking as private)
  commandExecution: true, // the Bash tool: its call and its output as tool items
  fileChanges: true, // Write/Edit/MultiEdit/NotebookEdit as file_ref parts with a diff
  mcpTools: true, // mcp__<server>__<tool> calls, tagged with server and tool
  streamingDeltas: true, // text_delta / thinking_delta stream events
  variants: true, // effort levels (`--effort`), listed per model by the CLI
  userMessages: false, // our user lines are not echoed: the daemon synthesises them
  nativeTurnStart: false, // nothing marks a turn's start: the daemon does
  nativeHitlResolution: false, // nothing reports our own control_response: the daemon does
  steer: true, // a user line with a uuid during the turn (convert-steer.ts)
  fork: true, // --resume --fork-session
  forkAtTurn: true, // … --resume-session-at <the turn's last assistant uuid>
  budgetPause: 'turn', // usage comes per API message, but nothing holds the CLI between them (docs/budgets.md)
};
