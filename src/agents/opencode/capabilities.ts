// OpenCode's coverage row (opencode-ai 1.18.33, `opencode serve` over HTTP + SSE), and the normalizer
// flags its output needs. True only for what convert.ts really produces from what the server sends.
import type { Capabilities } from '../../schema/agents.js';

export const opencodeCapabilities: Capabilities = {
  textMessages: true, // assistant messages, their text parts
  toolCalls: true, // tool parts (pending/running) as tool_call items
  toolResults: true, // tool parts completed/error as `result:<part>` tool_result items
  questions: true, // question.asked / question.replied / question.rejected
  permissions: true, // permission.asked / permission.replied
  images: true, // image file parts and a tool's image attachments (a read of a picture) as image parts
  fileAttachments: true, // the driver sends attachments as file parts (data URLs)
  sessionLifecycle: true, // session.created starts the session (with the ses_ id)
  errorEvents: true, // session.error
  reasoning: true, // reasoning parts, streamed
  commandExecution: true, // the bash tool, its output streamed from metadata.output
  fileChanges: true, // write/edit/patch tools and patch parts as file_ref parts
  mcpTools: true, // the create request's MCP servers go into the config; their tools (<server>_<tool>) are tagged with server and tool
  streamingDeltas: true, // message.part.delta
  variants: true, // the session's variant goes with every prompt
  userMessages: false, // the user's message is ignored: the daemon synthesises it (summaries re-send it after the turn)
  nativeTurnStart: false, // session.status busy comes several times per turn: the daemon opens the turn
  nativeHitlResolution: true, // permission.replied, question.replied/rejected
  steer: false, // a prompt sent while busy joins the run between steps, but can be left unanswered (docs/opencode.md)
  fork: true, // POST /session/{id}/fork (fork.ts)
  forkAtTurn: true, // the same, cut at the message after the branch point's last assistant message
  budgetPause: 'turn', // usage comes with each step, but nothing holds the agent between them (docs/budgets.md)
};
