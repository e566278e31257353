// Agent ids and capability flags. Capabilities are both the coverage-matrix row a client can read
// (GET /v1/agents) and the switches the normalizer uses instead of ever branching on agent ids.
import { z } from './zod.js';

export const AgentId = z.enum(['claude', 'codex', 'opencode', 'amp', 'gemini', 'qwen', 'mock']).openapi('AgentId');
export type AgentId = z.infer<typeof AgentId>;

export const Capabilities = z
  .object({
    textMessages: z.boolean(),
    toolCalls: z.boolean(),
    toolResults: z.boolean(),
    questions: z.boolean(),
    permissions: z.boolean(),
    images: z.boolean(),
    fileAttachments: z.boolean(),
    sessionLifecycle: z.boolean().openapi({ description: 'The agent reports its own session start' }),
    errorEvents: z.boolean(),
    reasoning: z.boolean(),
    commandExecution: z.boolean(),
    fileChanges: z.boolean(),
    mcpTools: z.boolean(),
    streamingDeltas: z.boolean().openapi({ description: 'The agent streams text deltas natively' }),
    variants: z.boolean(),
    userMessages: z
      .boolean()
      .openapi({ description: "The agent echoes the user's message as an item (otherwise the daemon synthesises it)" }),
    nativeTurnStart: z.boolean().openapi({ description: 'The agent reports turn starts (otherwise the daemon does)' }),
    nativeHitlResolution: z
      .boolean()
      .openapi({ description: 'The agent reports permission/question resolutions (otherwise the daemon does)' }),
  })
  .openapi('Capabilities');
export type Capabilities = z.infer<typeof Capabilities>;
