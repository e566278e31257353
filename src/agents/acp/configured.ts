// ACP agents given by configuration (docs/acp.md, "Any ACP agent"): a name and a command line, as
// validated by src/schema/acp-agents.ts, possibly with an npm package to install the agent from.
// Each becomes an ACP definition with nothing agent-specific: the agent's defaults, its announced
// capabilities, permissionMode `default` only.
import { access, constants, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, resolve } from 'node:path';
import { ApiError } from '../../errors.js';
import type { AcpAgentConfig } from '../../schema/acp-agents.js';
import { resolveInstalledPackage } from '../install.js';
import type { AcpAgentDefinition } from './definition.js';
import type { LocateAcp } from './driver.js';

function packageOf(config: AcpAgentConfig): { package: string; version: string; bin: string } | undefined {
  if (!config.package) return undefined;
  const at = config.package.lastIndexOf('@');
  return { package: config.package.slice(0, at), version: config.package.slice(at + 1), bin: config.command };
}

export function configuredDefinition(config: AcpAgentConfig): AcpAgentDefinition {
  const install = packageOf(config);
  return {
    id: config.name,
    title: `ACP agent '${config.name}'`,
    args: config.args,
    ...(config.env ? { session: () => ({ env: { ...config.env } }) } : {}),
    ...(install ? { install } : {}),
  };
}

/**
 * Where a configured agent's command is: a path (absolute, or relative to the daemon's cwd) as
 * given; with a package, its installed bin in the agents dir; else the command on PATH.
 */
export function configuredLocator(config: AcpAgentConfig, agentsDir: string | undefined, env: NodeJS.ProcessEnv): LocateAcp {
  const install = packageOf(config);
  const missing = (where: string) =>
    new ApiError('agent_not_available', `ACP agent '${config.name}' is not available: ${where}.`, { agent: config.name });
  return async () => {
    const path = await findConfiguredCommand(config, agentsDir, env);
    if (path) return path;
    if (install) throw missing(`${install.package}@${install.version} is not installed; POST /v1/agents/${config.name}/install installs it`);
    throw missing(`no executable '${config.command}'${config.command.includes('/') ? '' : ' on PATH'}`);
  };
}

export async function findConfiguredCommand(config: AcpAgentConfig, agentsDir: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const install = packageOf(config);
  if (install && agentsDir) {
    const installed = await resolveInstalledPackage({ name: config.name, version: install.version }, agentsDir);
    if (installed) return installed.path;
  }
  if (config.command.includes('/')) {
    const path = isAbsolute(config.command) ? config.command : resolve(config.command);
    return (await isExecutable(path)) ? path : undefined;
  }
  if (install) return undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = resolve(dir, config.command);
    if (await isExecutable(path)) return path;
  }
  return undefined;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
