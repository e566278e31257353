// The mock's coverage row: it exercises every feature, and the gaps it leaves on purpose
// (no user-message echo, no turn-start line, no HITL resolution line) exercise the normalizer's
// synthetic paths the way Claude Code does.
import type { Capabilities } from '../../schema/agents.js';

export const mockCapabilities: Capabilities = {
  textMessages: true,
  toolCalls: true,
  toolResults: true,
  questions: true,
  permissions: true,
  images: true,
  fileAttachments: true,
  sessionLifecycle: true,
  errorEvents: true,
  reasoning: true,
  commandExecution: true,
  fileChanges: true,
  mcpTools: false,
  streamingDeltas: true,
  variants: false,
  userMessages: false,
  nativeTurnStart: false,
  nativeHitlResolution: false,
  steer: true, // {"type":"steer"} on stdin: the running turn takes it
  fork: true, // --fork <session> [--fork-turns <n>]: a copy of its transcript
  forkAtTurn: true,
  budgetPause: 'step', // the mock waits after each step it reports until the daemon says go on (docs/budgets.md)
};
