// The data of turn.started and turn.ended, the two events of ours (the universal
// schema has no turns; docs/events.md). turn.ended's metadata is typed where every agent agrees (why the turn ended, what
// it cost in tokens) and open beyond that: each agent adds what it reports (Claude's subtype and
// total_cost_usd, Codex's status and native_turn_id, Amp's duration_ms …, see docs/events.md).
import { z } from './zod.js';

export const TurnStartedData = z
  .object({
    turn_id: z.string().optional(),
    message_id: z.string().optional().openapi({ description: 'The message this turn runs, when it was sent with a delivery (message.queued names it)' }),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('TurnStartedData');
export type TurnStartedData = z.infer<typeof TurnStartedData>;

/**
 * Why a turn ended. From the agent: `completed`, `interrupted` (after POST …/interrupt), `error`
 * (the agent reported a failed turn). From the daemon, when the agent went away mid-turn:
 * `terminated` (the session was terminated), `agent_exited` (the agent exited cleanly anyway),
 * `error` (it crashed, or the daemon restarted under the turn). From the daemon's budget:
 * `budget_exceeded` (the budget request was rejected; docs/budgets.md).
 */
export const TurnEndReason = z
  .enum(['completed', 'interrupted', 'error', 'terminated', 'agent_exited', 'budget_exceeded'])
  .openapi('TurnEndReason');
export type TurnEndReason = z.infer<typeof TurnEndReason>;

const tokens = z.number().int().min(0);

/**
 * Tokens the turn used, summed over every model request in it, when the agent reports them.
 * `input_tokens` counts every input token, cache reads and writes included (they are broken out
 * below); `output_tokens` counts every output token, reasoning included.
 */
export const TokenUsage = z
  .object({
    input_tokens: tokens,
    output_tokens: tokens,
    cache_read_input_tokens: tokens.optional().openapi({ description: 'Of input_tokens: read from the prompt cache' }),
    cache_creation_input_tokens: tokens.optional().openapi({ description: 'Of input_tokens: written to the prompt cache' }),
    reasoning_output_tokens: tokens.optional().openapi({ description: 'Of output_tokens: reasoning' }),
  })
  .openapi('TokenUsage');
export type TokenUsage = z.infer<typeof TokenUsage>;

export const TurnEndedMetadata = z
  .object({
    reason: TurnEndReason,
    usage: TokenUsage.optional().openapi({ description: 'Absent when the agent reports no token counts for the turn' }),
    cost_usd: z.number().min(0).optional().openapi({ description: "The turn's cost in USD, where the agent reports one (usage.updated adds it to the session's totals)" }),
  })
  .catchall(z.unknown())
  .openapi('TurnEndedMetadata', { description: 'reason and usage for every agent; the fields an agent adds of its own follow' });
export type TurnEndedMetadata = z.infer<typeof TurnEndedMetadata>;

export const TurnEndedData = z
  .object({ turn_id: z.string().optional(), metadata: TurnEndedMetadata })
  .openapi('TurnEndedData');
export type TurnEndedData = z.infer<typeof TurnEndedData>;
