// Amp's coverage row (0.0.1790142911-g7618fb, `-x … --stream-json-thinking`, one process per turn,
// permissions through a `delegate` rule), and the normalizer flags its output needs. True only for
// what convert.ts really produces from what the CLI prints.
import type { Capabilities } from '../../schema/agents.js';

export const ampCapabilities: Capabilities = {
  textMessages: true,
  toolCalls: true,
  toolResults: true,
  questions: false, // Amp has no question tool in headless mode
  permissions: true, // the delegate program asks the daemon (src/agents/amp/delegate-server.ts)
  images: false, // tool results are strings; image blocks are dropped from the stream
  fileAttachments: true, // named by path in the prompt text (Amp reads them with its Read tool)
  sessionLifecycle: true, // system/init (the first turn's) starts the session and names the thread
  errorEvents: true, // result is_error (exit 0) and `Error: …` exits
  reasoning: true, // thinking blocks with --stream-json-thinking
  commandExecution: true, // the Bash tool, its output and exit code
  fileChanges: true, // create_file / edit_file / apply_patch as file_ref parts
  mcpTools: true, // mcp__<server>__<tool> calls, tagged with server and tool
  streamingDeltas: false, // one line per whole message: the daemon adds one full-text delta
  variants: false,
  userMessages: false, // the prompt echo is skipped: the daemon synthesises the user message
  nativeTurnStart: false,
  nativeHitlResolution: false,
  // One `-x` process per turn with stdin closed: nothing reaches a running turn (docs/amp.md).
  steer: false,
  // `amp threads fork` is deprecated (exits 1), and nothing else copies a thread.
  fork: false,
  forkAtTurn: false,
  budgetPause: 'turn', // one process per turn; usage with its messages (docs/budgets.md)
};
