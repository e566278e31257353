// The coverage row of an ACP agent: what every ACP agent gives through the protocol, then the
// definition's overrides, then what the agent itself announced in `initialize` (the last one seen,
// by a session or a models/modes query), so GET /v1/agents tells the truth per agent.
import type { Capabilities } from '../../schema/agents.js';
import type { InitializeResult } from './native.js';

export const acpBaseCapabilities: Capabilities = {
  textMessages: true, // agent_message_chunk
  toolCalls: true, // tool_call
  toolResults: true, // tool_call_update with status completed/failed
  questions: false, // ACP has no question request
  permissions: true, // session/request_permission
  images: false, // only when the agent announces promptCapabilities.image
  fileAttachments: true, // resource_link blocks, which every ACP agent must accept
  sessionLifecycle: true, // the session/new answer names the session
  errorEvents: true, // error answers, abnormal stop reasons
  reasoning: true, // agent_thought_chunk
  commandExecution: true, // tool calls of kind execute with their output
  fileChanges: true, // diff tool content as file_ref parts
  mcpTools: true, // session/new mcpServers (stdio is baseline; http/sse when announced)
  streamingDeltas: true, // chunks are deltas
  variants: false,
  userMessages: false, // user_message_chunk comes only with session/load's replay: the daemon echoes
  nativeTurnStart: false, // a turn starts with our session/prompt
  nativeHitlResolution: false, // the daemon resolves on the client's answer
  steer: false,
  fork: false,
  forkAtTurn: false,
  budgetPause: 'turn', // usage comes with the prompt result, at the end of the turn (docs/budgets.md)
};

/** The flags an initialize answer decides. */
export function announcedCapabilities(init: InitializeResult): Partial<Capabilities> {
  const prompt = init.agentCapabilities?.promptCapabilities;
  // ACP's session/fork (unstable) forks a whole session: after the last turn, not at an earlier
  // one (fork.ts). Only a `true` is announced: a definition's own fork method stays as it says.
  const fork = init.agentCapabilities?.sessionCapabilities?.fork != null;
  return { images: prompt?.image === true, ...(fork ? { fork: true } : {}) };
}
