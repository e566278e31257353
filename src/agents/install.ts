// Installs agent CLIs from npm into a cache directory, outside any project's node_modules.
// Layout: <dir>/<name>/<version>/ holds one complete install and its marker file. An install is
// built in a staging directory beside it and renamed into place only after npm succeeded and the
// executable answered `--version`, so a half-finished install is never used: a directory without
// the marker is not an install. Within one process, one install per name and dir runs at a time;
// identical concurrent requests share one promise. Across processes the rename decides: the
// first complete install wins and the other is discarded.
import { defaultDataDir } from '../config.js';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { agentProcessOptions, isDaemonVariable } from '../process/agent-env.js';
import type { AgentUser } from '../process/agent-user.js';
import { clearWayToInstall, untrustedExecutable, untrustedInstall, type Distrust } from './install-trust.js';
import { EXACT_VERSION } from '../schema/agents.js';
import { currentPlatform, PINNED_AGENTS, type InstallableAgentId } from './versions.js';

/** What to install: `package@version` under <dir>/<name>/<version>/. */
export interface PackageSpec {
  name: string;
  package: string;
  version: string;
  /** Executables relative to the install dir, best first (see PinnedAgent.executables). */
  executables: string[];
}

export interface InstallProgress {
  name: string;
  /** `aside`: an install another user could have planted was moved aside (install-trust.ts). */
  stage: 'reused' | 'aside' | 'npm' | 'verify' | 'done';
  message: string;
}

export interface InstallOptions {
  dir?: string;
  /** Install again even when a complete install is present (it is replaced atomically). */
  reinstall?: boolean;
  onProgress?: (progress: InstallProgress) => void;
  /** npm's cache directory (npm's default otherwise). */
  npmCache?: string;
  /** Longest time npm may take (default 15 minutes). */
  timeoutMs?: number;
  /** The OS user agents run as (--agent-user): the installed CLI's `--version` check runs as it,
   *  like every run of the agent's code; npm itself runs as the daemon (it writes the agents dir). */
  user?: AgentUser | undefined;
}

export interface Installed {
  /** Absolute path of the executable. */
  path: string;
  version: string;
  /** The install directory, <dir>/<name>/<version>. */
  dir: string;
  /** First line of the executable's `--version` output at install time. */
  versionOutput: string;
}

export interface InstallResult extends Installed {
  name: string;
  package: string;
  /** True when a complete install was already there and npm did not run. */
  reused: boolean;
  seconds: number;
}

export class InstallError extends Error {
  constructor(message: string, readonly stderrTail = '') {
    super(stderrTail ? `${message}\n${stderrTail}` : message);
    this.name = 'InstallError';
  }
}

const MARKER = '.agentwire-install.json';
const SAFE_NAME = /^[a-z0-9][a-z0-9._-]*$/i;
const TAIL_LINES = 30;
/** npm settings inherited from an outer `npm run` that would redirect or neuter the install. */
const NPM_ENV_DROP = /^npm_config_(prefix|global|local_prefix|dry_run|omit|include|only|production|workspaces?|save.*|ignore_scripts|location)$/i;

export function defaultAgentsDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENTWIRE_AGENTS_DIR || join(defaultDataDir(env), 'agents');
}

export function pinnedSpec(agent: InstallableAgentId, version?: string): PackageSpec {
  const pinned = PINNED_AGENTS[agent];
  if (!pinned) throw new InstallError(`unknown agent '${agent}'`);
  return { name: agent, package: pinned.package, version: version ?? pinned.version, executables: pinned.executables(currentPlatform()) };
}

export function installAgent(options: InstallOptions & { agent: InstallableAgentId; version?: string }): Promise<InstallResult> {
  return installPackage(pinnedSpec(options.agent, options.version), options);
}

/** The complete install of a pinned agent (the pinned version unless told), if there is one. */
export function resolveInstalled(options: { agent: InstallableAgentId; version?: string; dir?: string }): Promise<Installed | undefined> {
  return resolveInstalledPackage(pinnedSpec(options.agent, options.version), options.dir);
}

export function resolveInstalledPackage(spec: Pick<PackageSpec, 'name' | 'version'>, dir?: string): Promise<Installed | undefined> {
  return readInstall(join(resolve(dir ?? defaultAgentsDir()), spec.name, spec.version), spec.version);
}

/** Why the install of `spec` in `dir` is there but not believed (install-trust.ts), if it is. */
export function untrustedInstalledPackage(spec: Pick<PackageSpec, 'name' | 'version'>, dir: string): Distrust | undefined {
  const target = join(resolve(dir), spec.name, spec.version);
  return existsSync(target) ? untrustedInstall(resolve(dir), target, join(target, MARKER)) : undefined;
}

/**
 * A complete install at `target` (its marker names `version` and its executable exists), checked
 * each time it is read, since each read may be followed by running it: nothing another user could
 * have planted (install-trust.ts).
 */
async function readInstall(target: string, version: string): Promise<Installed | undefined> {
  try {
    const markerPath = join(target, MARKER);
    if (untrustedInstall(resolve(target, '../..'), target, markerPath)) return undefined;
    const marker = JSON.parse(await readFile(markerPath, 'utf8')) as { version?: string; executable?: string; versionOutput?: string };
    if (marker.version !== version || typeof marker.executable !== 'string') return undefined;
    const path = join(target, marker.executable);
    await access(path);
    if (untrustedExecutable(target, path)) return undefined;
    return { path, version, dir: target, versionOutput: marker.versionOutput ?? '' };
  } catch {
    return undefined;
  }
}

const locks = new Map<string, { version: string; promise: Promise<InstallResult> }>();

/** Installs `spec` (or reuses a complete install); one run per name+dir at a time. */
export function installPackage(spec: PackageSpec, options: InstallOptions = {}): Promise<InstallResult> {
  if (!EXACT_VERSION.test(spec.version) || !SAFE_NAME.test(spec.name)) {
    return Promise.reject(new InstallError(`refusing to install ${spec.name} ${spec.version}: an exact version (x.y.z) is required`));
  }
  const dir = resolve(options.dir ?? defaultAgentsDir());
  const key = `${dir}\0${spec.name}`;
  const running = locks.get(key);
  if (running?.version === spec.version) return running.promise;
  const promise = (running?.promise.catch(() => undefined) ?? Promise.resolve()).then(() => runInstall(spec, dir, options));
  const entry = { version: spec.version, promise };
  locks.set(key, entry);
  const release = () => void (locks.get(key) === entry && locks.delete(key));
  promise.then(release, release);
  return promise;
}

async function runInstall(spec: PackageSpec, dir: string, options: InstallOptions): Promise<InstallResult> {
  const started = Date.now();
  const progress = (stage: InstallProgress['stage'], message: string) => options.onProgress?.({ name: spec.name, stage, message });
  const result = (installed: Installed, reused: boolean): InstallResult => {
    progress(reused ? 'reused' : 'done', `${spec.package}@${spec.version} at ${installed.path}`);
    return { ...installed, name: spec.name, package: spec.package, reused, seconds: (Date.now() - started) / 1000 };
  };
  const parent = join(dir, spec.name);
  const target = join(parent, spec.version);
  const existing = await readInstall(target, spec.version);
  if (existing && !options.reinstall) return result(existing, true);

  await clearWayToInstall(dir, spec.name, spec.version, (moved) => progress('aside', `moved ${moved.path} aside to ${moved.to}: it is ${moved.why}`));
  await mkdir(parent, { recursive: true });
  await removeStale(parent, spec.version);
  const staging = join(parent, tmpName(spec.version));
  await mkdir(staging);
  try {
    const { execa } = await import('execa');
    const pkg = `${spec.package}@${spec.version}`;
    progress('npm', `npm install ${pkg}`);
    const args = ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--omit=dev', '--include=optional', '--ignore-scripts', '--no-update-notifier'];
    if (options.npmCache) args.push('--cache', options.npmCache);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !NPM_ENV_DROP.test(k) && !isDaemonVariable(k)));
    const npm = await execa('npm', [...args, pkg], { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: options.timeoutMs ?? 15 * 60_000, all: true });
    if (npm.exitCode !== 0) {
      const why = npm.timedOut ? 'timed out' : npm.exitCode === undefined ? `failed (${npm.signal ?? npm.shortMessage})` : `exited with ${npm.exitCode}`;
      throw new InstallError(`npm install ${pkg} ${why}`, tail(npm.stderr || npm.all || ''));
    }

    progress('verify', `${spec.name} --version`);
    const tried: string[] = [];
    let chosen: { executable: string; versionOutput: string } | undefined;
    for (const executable of spec.executables) {
      const path = join(staging, executable);
      if (!(await access(path).then(() => true, () => false))) continue;
      const run = await execa(path, ['--version'], { ...agentProcessOptions({ env: process.env, user: options.user }), reject: false, stdin: 'ignore', timeout: 60_000, all: true });
      const output = (run.all ?? '').trim();
      if (run.exitCode === 0 && output.includes(spec.version)) {
        chosen = { executable, versionOutput: output.split('\n')[0] ?? '' };
        break;
      }
      tried.push(`${executable}: ${run.exitCode === undefined ? run.shortMessage : `exit ${run.exitCode}`}: ${tail(output, 3)}`);
    }
    if (!chosen) {
      throw new InstallError(`${pkg} installed, but no executable answered --version with ${spec.version}`, tried.join('\n') || `none of ${spec.executables.join(', ')} exists`);
    }
    const marker = { name: spec.name, package: spec.package, version: spec.version, ...chosen, installedAt: new Date().toISOString() };
    await writeFile(join(staging, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
    return result(await commit(staging, target, spec.version, !!options.reinstall), false);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Renames the finished staging dir into place; an old or broken dir there is moved aside first. */
async function commit(staging: string, target: string, version: string, reinstall: boolean): Promise<Installed> {
  const aside = join(staging, '..', tmpName(version));
  const other = await readInstall(target, version);
  if (other && !reinstall) return other; // another process finished first
  await rename(target, aside).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
  // Losing a race to another process is fine as long as its install is complete.
  await rename(staging, target).catch(async (e: unknown) => ((await readInstall(target, version)) ? undefined : Promise.reject(e)));
  await rm(aside, { recursive: true, force: true });
  const installed = await readInstall(target, version);
  if (!installed) throw new InstallError(`install at ${target} vanished after it was committed`);
  return installed;
}

const tmpName = (version: string) => `.${version}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;

/** Removes staging/aside dirs left by a process that died mid-install (or by this one). */
async function removeStale(parent: string, version: string): Promise<void> {
  const prefix = `.${version}.tmp-`;
  for (const entry of await readdir(parent)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (pid !== process.pid && isAlive(pid)) continue;
    await rm(join(parent, entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const tail = (text: string, lines = TAIL_LINES) => text.trimEnd().split('\n').slice(-lines).join('\n');
