// Agent ids and capability flags. Capabilities are both the coverage-matrix row a client can read
// (GET /v1/agents) and the switches the normalizer uses instead of ever branching on agent ids.
import { z } from './zod.js';

/** The agents this build knows by name, in listing order. Agents given by configuration
 *  (--acp-agent, docs/acp.md) come after them; an id is any name of the AGENT_NAME shape. */
export const BUILTIN_AGENTS = ['claude', 'codex', 'opencode', 'amp', 'gemini', 'qwen', 'mock'] as const;
export type BuiltinAgentId = (typeof BUILTIN_AGENTS)[number];

/** What a configured agent may be called: lower case, a letter first, usable in paths and URLs. */
export const AGENT_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** An agent package's version as installs accept it: exact only (no ranges or tags), safe as a directory name. */
export const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

// A name rather than a closed enum: configured ACP agents have names no build can list. Whether a
// name is an agent of THIS daemon is decided against its registry (400 when it is not).
export const AgentId = z
  .string()
  .regex(AGENT_NAME, 'an agent name: a lower-case letter, then letters, digits, _ or -, at most 40 characters')
  .openapi('AgentId', {
    description: `An agent: one of the built-in ones (${BUILTIN_AGENTS.join(', ')}) or an ACP agent the daemon was configured with (--acp-agent)`,
    example: 'claude',
  });
export type AgentId = z.infer<typeof AgentId>;

export const isBuiltinAgent = (id: string): id is BuiltinAgentId => (BUILTIN_AGENTS as readonly string[]).includes(id);

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
    steer: z.boolean().openapi({ description: 'A message sent with delivery steer goes into the running turn (otherwise 409 steer_unsupported)' }),
    fork: z.boolean().openapi({ description: 'POST …/fork at the end of the conversation (after its last turn)' }),
    forkAtTurn: z.boolean().openapi({ description: 'POST …/fork with `at` naming an earlier turn' }),
    budgetPause: z
      .enum(['step', 'turn'])
      .openapi({ description: "Where a crossed budget pauses the agent (docs/budgets.md): 'step', before its next model call or tool run; 'turn', before its next turn" }),
  })
  .openapi('Capabilities');
export type Capabilities = z.infer<typeof Capabilities>;
