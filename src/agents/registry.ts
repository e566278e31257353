// The one map from agent id to driver. Sessions look drivers up here and never switch on ids.
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { isBuiltinAgent, type AgentId } from '../schema/agents.js';
import { claudeLocator, createClaudeDriver } from './claude/driver.js';
import { codexLocator, createCodexDriver } from './codex/driver.js';
import { ampLocator, createAmpDriver } from './amp/driver.js';
import { agentLocator } from './locator.js';
import { geminiDefinition } from './gemini/definition.js';
import { createMockDriver } from './mock/driver.js';
import { qwenDefinition } from './qwen/definition.js';
import { createOpencodeDriver, opencodeLocator } from './opencode/driver.js';
import { configuredDefinition, configuredLocator, findConfiguredCommand } from './acp/configured.js';
import { createAcpDriver } from './acp/driver.js';
import type { ProcessLimits } from './process-options.js';
import type { AgentDriver } from './types.js';

export type AgentRegistry = Partial<Record<AgentId, AgentDriver>>;

/** The driver of `agent`, if this registry has one (own keys only: an agent name may be any word). */
export function lookupDriver(registry: AgentRegistry, agent: string): AgentDriver | undefined {
  return Object.hasOwn(registry, agent) ? registry[agent] : undefined;
}

/**
 * The driver of `agent`, or the error a client gets: 501 for a built-in agent this build has no
 * adapter for, 400 naming `field` for a name that is no agent of this daemon (an agent id is a
 * free name so that configured ACP agents fit; the registry decides which names exist).
 */
export function requireDriver(registry: AgentRegistry, agent: string, field: 'body.agent' | 'path.agent'): AgentDriver {
  const driver = lookupDriver(registry, agent);
  if (driver) return driver;
  if (isBuiltinAgent(agent)) {
    throw new ApiError('agent_not_available', `Agent '${agent}' has no adapter in this build yet; 'mock' is available.`, { agent });
  }
  const message = `no agent '${agent}' in this daemon; agents: ${Object.keys(registry).join(', ')}`;
  throw new ApiError('invalid_request', `${field}: ${message}`, { errors: [{ path: field, message }] });
}

/** Where agent executables are looked up (a Config satisfies it). */
export type RegistryOptions = ProcessLimits & Partial<Pick<Config, 'agentsDir' | 'claudeBin' | 'codexBin' | 'opencodeBin' | 'opencodeServers' | 'ampBin' | 'geminiBin' | 'qwenBin' | 'acpAgents'>>;

/** Executables are located lazily, when a session starts, so the registry builds whether or not
 *  an agent is installed. `env` is the daemon's (PATH, credentials); agents get it through
 *  `options.boundary` (by default one over `env` with no agent user), less the daemon's own variables. */
export function createRegistry(input: RegistryOptions, env: NodeJS.ProcessEnv = process.env): AgentRegistry {
  const options = { ...input, boundary: input.boundary ?? { env } };
  // ACP agents given by configuration (--acp-agent, docs/acp.md), after the built-in ones.
  const configured = Object.fromEntries(
    (input.acpAgents ?? []).map((c) => {
      const find = () => findConfiguredCommand(c, options.agentsDir, env);
      return [c.name, createAcpDriver(configuredDefinition(c), options, configuredLocator(c, options.agentsDir, env), find)];
    }),
  );
  return {
    mock: createMockDriver(options),
    claude: createClaudeDriver(options, claudeLocator({ agentsDir: options.agentsDir, claudeBin: options.claudeBin }, env)),
    codex: createCodexDriver(options, codexLocator({ agentsDir: options.agentsDir, codexBin: options.codexBin }, env)),
    amp: createAmpDriver(options, ampLocator({ agentsDir: options.agentsDir, ampBin: options.ampBin }, env), env),
    opencode: createOpencodeDriver(options, opencodeLocator({ agentsDir: options.agentsDir, opencodeBin: options.opencodeBin }, env), options.opencodeServers !== 'per-session'),
    // Built-in ACP agents: a definition each (src/agents/<agent>/definition.ts) on the generic driver.
    gemini: createAcpDriver(geminiDefinition, options, agentLocator('gemini', 'Gemini CLI', { agentsDir: options.agentsDir, geminiBin: options.geminiBin }, env)),
    qwen: createAcpDriver(qwenDefinition, options, agentLocator('qwen', 'Qwen Code', { agentsDir: options.agentsDir, qwenBin: options.qwenBin }, env)),
    ...configured,
  };
}
