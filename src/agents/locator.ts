// Where an agent's executable is, for drivers (when a session starts) and for discovery (GET
// /v1/agents): an explicit --<agent>-bin, a complete install in the agents dir, or PATH. Kept apart
// from discovery.ts because every driver needs it and none needs discovery's installs and probes.
import { constants } from 'node:fs';
import { access, readdir, stat } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { AgentInfo } from '../schema/api.js';
import { DISCOVERY_FACTS, type DiscoveryFacts } from './discovery-facts.js';
import { defaultAgentsDir, resolveInstalled, untrustedInstalledPackage } from './install.js';
import { PINNED_AGENTS, type InstallableAgentId } from './versions.js';

export type Found = { path: string; source: NonNullable<AgentInfo['source']>; version?: string; missing?: boolean };

/**
 * Where an agent's executable is: an explicit --<agent>-bin (never fallen through: a wrong flag
 * shows as missing), the pinned (else the highest other) complete install in the agents dir, an
 * executable of the agent's name on PATH. Drivers call it when a session starts.
 */
export async function findAgentExecutable(
  id: InstallableAgentId,
  where: { config: Partial<Pick<Config, 'agentsDir' | DiscoveryFacts['binOption']>>; agentsDir?: string; env?: NodeJS.ProcessEnv },
  entry: DiscoveryFacts = DISCOVERY_FACTS[id],
): Promise<Found | undefined> {
  const explicit = where.config[entry.binOption];
  if (explicit) {
    const path = resolve(explicit);
    return (await isExecutable(path)) ? { path, source: 'flag' } : { path, source: 'flag', missing: true };
  }
  const env = where.env ?? process.env;
  const agentsDir = resolve(where.agentsDir ?? where.config.agentsDir ?? defaultAgentsDir(env));
  const installed = await fromAgentsDir(id, agentsDir);
  if (installed) return { path: installed.path, version: installed.version, source: 'install-dir' };
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = resolve(dir, entry.bin);
    if (await isExecutable(path)) return { path, source: 'path' };
  }
  return undefined;
}

/**
 * A driver's locator: resolves the agent's executable when a session starts (findAgentExecutable),
 * or throws `agent_not_available` saying what is wrong and how to install it. `title` is the
 * agent's name for people ("Claude Code").
 */
export function agentLocator(
  id: InstallableAgentId,
  title: string,
  config: Partial<Pick<Config, 'agentsDir' | DiscoveryFacts['binOption']>>,
  env: NodeJS.ProcessEnv,
): () => Promise<string> {
  return async () => {
    const found = await findAgentExecutable(id, { config, env });
    if (!found || found.missing) {
      const agentsDir = resolve(config.agentsDir ?? defaultAgentsDir(env));
      const planted = found ? undefined : untrustedInstalledPackage({ name: id, version: PINNED_AGENTS[id].version }, agentsDir);
      const skipped = planted ? `; the install there is not used: ${planted.path} is ${planted.why}, so another user could have put it there` : '';
      const where = found?.missing ? `--${id}-bin ${found.path} is not an executable file` : `no ${id} executable in the agents dir or on PATH${skipped}`;
      throw new ApiError('agent_not_available', `${title} is not installed (${where}). Run \`agentwire install-agent ${id}\`.`, { agent: id });
    }
    return found.path;
  };
}

/** The pinned version's install, else the highest other complete one. */
async function fromAgentsDir(id: InstallableAgentId, agentsDir: string) {
  const pinned = await resolveInstalled({ agent: id, dir: agentsDir });
  if (pinned) return pinned;
  const versions = await readdir(join(agentsDir, id)).catch(() => [] as string[]);
  const others = versions.filter((v) => !v.startsWith('.') && v !== PINNED_AGENTS[id].version);
  others.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  for (const version of others) {
    const other = await resolveInstalled({ agent: id, dir: agentsDir, version }).catch(() => undefined);
    if (other) return other;
  }
  return undefined;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    if (!s.isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
