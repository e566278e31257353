// The one map from agent id to driver. Sessions look drivers up here and never switch on ids.
import type { AgentId } from '../schema/agents.js';
import { createMockDriver } from './mock/driver.js';
import type { ProcessLimits } from './process-options.js';
import type { AgentDriver } from './types.js';

export type AgentRegistry = Partial<Record<AgentId, AgentDriver>>;

/** Adapters for claude, codex, opencode and amp arrive with their own issues. */
export function createRegistry(limits: ProcessLimits): AgentRegistry {
  return { mock: createMockDriver(limits) };
}
