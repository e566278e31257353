// The one map from agent id to driver. Sessions look drivers up here and never switch on ids.
import type { Config } from '../config.js';
import type { AgentId } from '../schema/agents.js';
import { claudeLocator, createClaudeDriver } from './claude/driver.js';
import { codexLocator, createCodexDriver } from './codex/driver.js';
import { ampLocator, createAmpDriver } from './amp/driver.js';
import { createMockDriver } from './mock/driver.js';
import { createOpencodeDriver, opencodeLocator } from './opencode/driver.js';
import type { ProcessLimits } from './process-options.js';
import type { AgentDriver } from './types.js';

export type AgentRegistry = Partial<Record<AgentId, AgentDriver>>;

/** Where agent executables are looked up (a Config satisfies it). */
export type RegistryOptions = ProcessLimits & Partial<Pick<Config, 'agentsDir' | 'claudeBin' | 'codexBin' | 'opencodeBin' | 'ampBin'>>;

/** Executables are located lazily, when a session starts, so the registry builds whether or not
 *  an agent is installed. `env` is the daemon's (PATH, credentials); agents get it through
 *  `options.boundary` (by default one over `env` with no agent user), less the daemon's own variables. */
export function createRegistry(input: RegistryOptions, env: NodeJS.ProcessEnv = process.env): AgentRegistry {
  const options = { ...input, boundary: input.boundary ?? { env } };
  return {
    mock: createMockDriver(options),
    claude: createClaudeDriver(options, claudeLocator({ agentsDir: options.agentsDir, claudeBin: options.claudeBin }, env)),
    codex: createCodexDriver(options, codexLocator({ agentsDir: options.agentsDir, codexBin: options.codexBin }, env)),
    amp: createAmpDriver(options, ampLocator({ agentsDir: options.agentsDir, ampBin: options.ampBin }, env), env),
    opencode: createOpencodeDriver(options, opencodeLocator({ agentsDir: options.agentsDir, opencodeBin: options.opencodeBin }, env)),
  };
}
