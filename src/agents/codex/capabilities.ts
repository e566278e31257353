// Codex's coverage row (0.171.0 `codex app-server`, the v2 thread API), and the normalizer flags its
// output needs. True only for what convert.ts really produces from what app-server sends.
import type { Capabilities } from '../../schema/agents.js';

export const codexCapabilities: Capabilities = {
  textMessages: true, // agentMessage items
  toolCalls: true, // commandExecution, fileChange, mcpToolCall, webSearch as tool_call items
  toolResults: true, // their `result:<id>` tool_result items (output, exit code, status)
  questions: true, // item/tool/requestUserInput (agentMode plan) and MCP servers' form elicitations
  permissions: true, // item/commandExecution|fileChange|permissions/requestApproval, MCP tool approvals
  images: true, // imageView items, image inputs echoed in userMessage items
  fileAttachments: true, // images as localImage inputs, other files named by path in the text
  sessionLifecycle: true, // the thread/start answer (and thread/started) start the session
  errorEvents: true, // `error` notifications, failed turns
  reasoning: true, // reasoning items: summary public, raw content private
  commandExecution: true, // commandExecution items with aggregated output and exit code
  fileChanges: true, // fileChange items as file_ref parts with a diff
  mcpTools: true, // mcpToolCall items as mcp__<server>__<tool>
  streamingDeltas: true, // agentMessage / reasoning / command output deltas
  variants: true, // reasoning effort (the driver passes the variant as `effort`)
  userMessages: true, // Codex echoes the user's input as a userMessage item
  nativeTurnStart: true, // turn/started
  nativeHitlResolution: false, // serverRequest/resolved only confirms our answer: the daemon resolves
  steer: true, // turn/steer: the steered input is a userMessage item of the running turn
  fork: true, // thread/fork through the parent's last turn (forkPoint)
  forkAtTurn: true, // thread/fork with lastTurnId: an earlier turn's native id
  budgetPause: 'turn', // usage arrives per model call, but nothing holds the agent between them (docs/budgets.md)
};
