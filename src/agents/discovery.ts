// Agent discovery and installs behind GET /v1/agents and POST /v1/agents/{agent}/install.
// Per agent: the executable locator.ts finds (--<agent>-bin, the agents dir, PATH), its version,
// whether credentials are present, and installs (src/agents/install.ts). Agent specifics (bin names,
// version patterns, credential variables and files) come from discovery-facts.ts; nothing here branches on
// an agent id. The daemon's environment and HOME are injectable so tests never touch process.env.
import { access, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { agentProcessOptions, type AgentBoundary } from '../process/agent-env.js';
import { agentTempDir, type AgentUser } from '../process/agent-user.js';
import { BUILTIN_AGENTS, isBuiltinAgent, type AgentId } from '../schema/agents.js';
import type { AgentInfo, InstallAgentRequest } from '../schema/api.js';
import { DISCOVERY_FACTS, type DiscoveryFacts } from './discovery-facts.js';
import { defaultAgentsDir, InstallError, installAgent, installPackage, type InstallResult } from './install.js';
import { findAgentExecutable, type Found } from './locator.js';
import { lookupDriver, requireDriver, type AgentRegistry } from './registry.js';
import type { AgentDriver } from './types.js';
import { PINNED_AGENTS, type InstallableAgentId } from './versions.js';

export interface DiscoveryOptions {
  registry: AgentRegistry;
  config: Pick<Config, 'agentsDir' | DiscoveryFacts['binOption']> & Partial<Pick<Config, 'dataDir'>>;
  /** The daemon's environment: PATH and credential variables (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where credential files are looked for (default env.HOME, then the OS home). */
  home?: string;
  /** How long a listing is reused (default 5 s; an install through the API clears it). */
  cacheMs?: number;
  /** Longest `<bin> --version` run (default 5 s). */
  versionTimeoutMs?: number;
  /** Told how each install (API or autoInstall) ended: the daemon's metrics. */
  onInstall?: (agent: AgentId, outcome: 'installed' | 'reused' | 'failed') => void;
  /** The OS user agents run as (--agent-user): `--version` runs as it too. */
  user?: AgentUser | undefined;
}


export class AgentDiscovery {
  private readonly env: NodeJS.ProcessEnv;
  private readonly home: string;
  readonly agentsDir: string;
  private listing: { at: number; promise: Promise<AgentInfo[]> } | undefined;
  /** `--version` results by path + mtime: a replaced executable is asked again. */
  private readonly versions = new Map<string, Promise<string | undefined>>();

  constructor(private readonly options: DiscoveryOptions) {
    this.env = options.env ?? process.env;
    this.home = options.home ?? (this.env.HOME || homedir());
    this.agentsDir = resolve(options.config.agentsDir ?? (options.config.dataDir ? join(options.config.dataDir, 'agents') : defaultAgentsDir(this.env)));
  }

  /** The built-in agents in BUILTIN_AGENTS order, then the configured ones. Concurrent and recent
   *  calls share one look-around. */
  list(): Promise<AgentInfo[]> {
    const now = Date.now();
    if (this.listing && now - this.listing.at < (this.options.cacheMs ?? 5_000)) return this.listing.promise;
    const configured = Object.keys(this.options.registry).filter((id) => !isBuiltinAgent(id));
    const promise = Promise.all([...BUILTIN_AGENTS, ...configured].map((id) => this.describe(id)));
    const entry = { at: now, promise };
    this.listing = entry;
    promise.catch(() => void (this.listing === entry && (this.listing = undefined)));
    return promise;
  }

  invalidate(): void {
    this.listing = undefined;
  }

  /** Installs the pinned (or requested) version into the agents dir; catalogue errors on failure. */
  async install(agent: AgentId, request: InstallAgentRequest, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<InstallResult> {
    if (!isBuiltinAgent(agent)) return this.installConfigured(requireDriver(this.options.registry, agent, 'path.agent'), request, log);
    if (!Object.hasOwn(PINNED_AGENTS, agent)) {
      throw new ApiError('invalid_request', `Agent '${agent}' ships with the daemon; there is nothing to install.`, { agent });
    }
    const id = agent as InstallableAgentId;
    const version = request.version ?? PINNED_AGENTS[id].version;
    log.info({ agent, version, dir: this.agentsDir, reinstall: request.reinstall ?? false }, 'agent install requested');
    try {
      const result = await installAgent({
        agent: id,
        dir: this.agentsDir,
        reinstall: request.reinstall ?? false,
        version,
        user: this.options.user,
        onProgress: (p) => log[p.stage === 'aside' ? 'warn' : 'info']({ agent, stage: p.stage }, `agent install: ${p.message}`),
      });
      log.info({ agent, version, path: result.path, reused: result.reused, seconds: result.seconds }, 'agent install finished');
      this.options.onInstall?.(agent, result.reused ? 'reused' : 'installed');
      return result;
    } catch (err) {
      const stderrTail = err instanceof InstallError ? err.stderrTail : '';
      const message = ((err as Error).message ?? String(err)).split('\n')[0];
      log.warn({ agent, version, err: message }, 'agent install failed');
      this.options.onInstall?.(agent, 'failed');
      throw new ApiError('agent_install_failed', `Installing ${PINNED_AGENTS[id].package}@${version} failed: ${message}`, { agent, version, stderrTail });
    } finally {
      this.invalidate();
    }
  }

  /** A configured agent's npm package (AgentDriver.npmPackage) into the agents dir. */
  private async installConfigured(driver: AgentDriver, request: InstallAgentRequest, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<InstallResult> {
    const pkg = driver.npmPackage;
    if (!pkg) throw new ApiError('invalid_request', `Agent '${driver.id}' is configured with a command and no package; there is nothing to install.`, { agent: driver.id });
    const version = request.version ?? pkg.version;
    log.info({ agent: driver.id, package: pkg.package, version, dir: this.agentsDir }, 'agent install requested');
    const spec = { name: driver.id, package: pkg.package, version, executables: [`node_modules/.bin/${pkg.bin}`] };
    try {
      const result = await installPackage(spec, { dir: this.agentsDir, reinstall: request.reinstall ?? false, user: this.options.user });
      this.options.onInstall?.(driver.id, result.reused ? 'reused' : 'installed');
      return result;
    } catch (err) {
      const message = ((err as Error).message ?? String(err)).split('\n')[0];
      this.options.onInstall?.(driver.id, 'failed');
      throw new ApiError('agent_install_failed', `Installing ${pkg.package}@${version} failed: ${message}`, { agent: driver.id, version, stderrTail: err instanceof InstallError ? err.stderrTail : '' });
    } finally {
      this.invalidate();
    }
  }

  /**
   * autoInstall: installs the pinned version when the agent is found nowhere. An explicit
   * --<agent>-bin that does not exist is left for the driver to report (the user named it), and
   * agents without an adapter or bundled with the daemon need nothing.
   */
  async ensureInstalled(agent: AgentId, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<void> {
    const driver = lookupDriver(this.options.registry, agent);
    if (driver?.npmPackage && driver.findExecutable && !isBuiltinAgent(agent)) {
      if (await driver.findExecutable()) return;
      log.info({ agent, package: driver.npmPackage.package }, 'agent not installed; installing it for this session (autoInstall)');
      await this.install(agent, {}, log);
      return;
    }
    if (!driver || driver.bundled || !Object.hasOwn(PINNED_AGENTS, agent)) return;
    const id = agent as InstallableAgentId;
    if (await this.locate(id, DISCOVERY_FACTS[id])) return;
    log.info({ agent, version: PINNED_AGENTS[id].version }, 'agent not installed; installing it for this session (autoInstall)');
    await this.install(agent, {}, log);
  }

  private async describe(id: AgentId): Promise<AgentInfo> {
    const driver = lookupDriver(this.options.registry, id);
    const base = {
      id,
      capabilities: driver?.capabilities ?? null,
      adapterAvailable: driver !== undefined,
      pinnedVersion: Object.hasOwn(PINNED_AGENTS, id) ? PINNED_AGENTS[id as InstallableAgentId].version : null,
    };
    if (driver?.bundled) {
      return { ...base, installed: true, version: driver.bundled.version, path: driver.bundled.path, credentialsAvailable: true, source: null };
    }
    if (driver?.findExecutable) {
      // A configured agent: its command as given (or its package's bin). Its credentials are its
      // own business (not checked: reported available); its version is its package's.
      const path = await driver.findExecutable();
      const pinnedVersion = driver.npmPackage?.version ?? null;
      if (!path) return { ...base, pinnedVersion, installed: false, credentialsAvailable: true, source: null };
      return { ...base, pinnedVersion, installed: true, ...(pinnedVersion ? { version: pinnedVersion } : {}), path, credentialsAvailable: true, source: 'flag' };
    }
    const entry: DiscoveryFacts | undefined = Object.hasOwn(DISCOVERY_FACTS, id) ? DISCOVERY_FACTS[id as InstallableAgentId] : undefined;
    if (!entry) return { ...base, installed: false, credentialsAvailable: false, source: null };
    const [found, credentialsAvailable] = await Promise.all([this.locate(id as InstallableAgentId, entry), this.hasCredentials(entry)]);
    if (!found) return { ...base, installed: false, credentialsAvailable, source: null };
    if (found.missing) return { ...base, installed: false, path: found.path, credentialsAvailable, source: found.source };
    const version = found.version ?? (await this.version(found.path, entry.versionPattern));
    return { ...base, installed: true, ...(version ? { version } : {}), path: found.path, credentialsAvailable, source: found.source };
  }

  private locate(id: InstallableAgentId, entry: DiscoveryFacts): Promise<Found | undefined> {
    return findAgentExecutable(id, { config: this.options.config, agentsDir: this.agentsDir, env: this.env }, entry);
  }

  private async hasCredentials(entry: DiscoveryFacts): Promise<boolean> {
    if (entry.credentialEnv.some((name) => !!this.env[name])) return true;
    for (const file of entry.credentialFiles(this.home, this.env)) {
      if (await access(file).then(() => true, () => false)) return true;
    }
    return false;
  }

  /** `<path> --version` in a throwaway HOME (some CLIs write there), cached by path and mtime. */
  private async version(path: string, pattern: RegExp): Promise<string | undefined> {
    const info = await stat(path).catch(() => undefined);
    const key = `${path}\0${info?.mtimeMs ?? 0}\0${info?.size ?? 0}`;
    let cached = this.versions.get(key);
    if (!cached) {
      cached = runVersion(path, pattern, { env: { PATH: this.env.PATH ?? '' }, user: this.options.user }, this.options.versionTimeoutMs ?? 5_000);
      this.versions.set(key, cached);
      // Only answers are kept: a timeout under load is asked again next time.
      void cached.then((v) => v === undefined && this.versions.delete(key));
    }
    return cached;
  }
}

/** Runs the agent's code like a session would (its user, nothing of the daemon's configuration),
 *  but with only PATH of the daemon's environment, in a throwaway HOME. */
async function runVersion(path: string, pattern: RegExp, boundary: AgentBoundary, timeoutMs: number): Promise<string | undefined> {
  const home = await agentTempDir('agentwire-version-', boundary.user);
  try {
    const { execa } = await import('execa');
    const env = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_DATA_HOME: join(home, '.local/share'),
      XDG_STATE_HOME: join(home, '.local/state'),
    };
    const run = await execa(path, ['--version'], { ...agentProcessOptions(boundary, env), cwd: home, reject: false, stdin: 'ignore', timeout: timeoutMs, killSignal: 'SIGKILL', all: true, maxBuffer: 64 * 1024 });
    if (run.exitCode !== 0) return undefined;
    return pattern.exec(run.all ?? '')?.[0];
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
