// ACP agents given by configuration (docs/acp.md, "Any ACP agent"): a name and a command line,
// from `--acp-agent 'name=command args…'` (repeatable; AGENTWIRE_ACP_AGENT separates entries with
// `;` or newlines) or an --acp-agents-file JSON file, which can also name an npm package to install
// the agent from. Each becomes an ACP definition with nothing agent-specific: the agent's
// defaults, its announced capabilities, permissionMode `default` only.
import { access, constants, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { AGENT_NAME } from '../../schema/agents.js';
import { EXACT_VERSION, resolveInstalledPackage } from '../install.js';
import type { AcpAgentDefinition } from './definition.js';
import type { LocateAcp } from './driver.js';

const PACKAGE = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*@.+$/i;

export const AcpAgentConfig = z
  .object({
    name: z.string().regex(AGENT_NAME, 'an agent name: a lower-case letter, then letters, digits, _ or -, at most 40 characters'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    /** `name@exact-version`; the command is then the package's bin, installed into the agents dir. */
    package: z
      .string()
      .regex(PACKAGE, 'an npm package with an exact version: name@1.2.3')
      .refine((p) => EXACT_VERSION.test(p.slice(p.lastIndexOf('@') + 1)), 'an exact version (x.y.z), never a range or tag')
      .optional(),
  })
  .strict();
export type AcpAgentConfig = z.infer<typeof AcpAgentConfig>;

/** `name=command args…`, the arguments split like a shell does for plain words and quotes. */
export function parseAcpAgentSpec(spec: string): AcpAgentConfig | string {
  const eq = spec.indexOf('=');
  if (eq <= 0) return `'${spec}' is not name=command args…`;
  const words = splitWords(spec.slice(eq + 1));
  if (typeof words === 'string') return words;
  if (words.length === 0) return `'${spec}' names no command`;
  const parsed = AcpAgentConfig.safeParse({ name: spec.slice(0, eq).trim(), command: words[0], args: words.slice(1) });
  return parsed.success ? parsed.data : `'${spec}': ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`;
}

/** The entries of an --acp-agents-file: {"agents": {"<name>": {command, args?, env?, package?}}}. */
export const AcpAgentsFile = z.object({ agents: z.record(z.string(), AcpAgentConfig.omit({ name: true })) }).strict();

/** Words separated by blanks; '…' and "…" quote (no escapes inside single quotes, \ inside double). */
export function splitWords(text: string): string[] | string {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i]!;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '\\' && i + 1 < text.length) word = (word ?? '') + text[++i]!;
    else word = (word ?? '') + c;
  }
  if (quote) return `unterminated ${quote} quote in '${text}'`;
  if (word !== null) words.push(word);
  return words;
}

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
