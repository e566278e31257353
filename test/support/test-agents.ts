// The pinned agent CLIs (src/agents/versions.ts) for the suites that run real agents, installed on
// first use and only by those suites: a unit-test folder never downloads them. They go into a test
// cache outside the user's data dir (testAgentsDir below; test/global-setup.ts points
// AGENTWIRE_AGENTS_DIR at it for the whole run, so in-process apps and the harnesses find them
// there), and are reused by every later run.
//
// Vitest runs test files in several worker processes; two files needing the same agent must not
// both download it, and two installs at once (~100–400 MB each) only fight over two cores. So an
// install runs under a lock directory in the cache (mkdir is atomic), one at a time across the
// run, like the serial installs global setup made before. A lock left by a dead process is taken
// over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { beforeAll } from 'vitest';
import { defaultAgentsDir, installAgent, resolveInstalled } from '../../src/agents/install.js';
import { INSTALLABLE_AGENTS, PINNED_AGENTS, type InstallableAgentId } from '../../src/agents/versions.js';

/** Where the test run keeps agent CLIs unless AGENTWIRE_AGENTS_DIR says otherwise. */
export function testAgentsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agentwire-test', 'agents');
}

/** Long enough for every pinned CLI from a cold npm cache on a slow line. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** Registers a beforeAll (in the calling file or describe) that makes `agents` installed. */
export function needAgents(agents: readonly InstallableAgentId[] = INSTALLABLE_AGENTS): void {
  beforeAll(() => installTestAgents(agents), INSTALL_TIMEOUT_MS);
}

/** Makes each of `agents` installed in the agents dir (a no-op for one already there). Throws,
 *  naming the package, when an install fails: the suite that needs it fails with that reason. */
export async function installTestAgents(agents: readonly InstallableAgentId[]): Promise<void> {
  const dir = defaultAgentsDir();
  for (const agent of agents) {
    if (await resolveInstalled({ agent, dir })) continue;
    await withLock(dir, async () => {
      const { package: pkg, version } = PINNED_AGENTS[agent];
      try {
        const r = await installAgent({ agent, dir });
        if (!r.reused) announce(`[agents] installed ${pkg}@${version} for the real-agent tests in ${r.seconds.toFixed(1)}s → ${r.path} (reused by later runs)`);
      } catch (error) {
        throw new Error(`could not install ${pkg}@${version} into ${dir} for this suite: ${(error as Error).message}`);
      }
    });
  }
}

/** Straight to the terminal, not into the test's captured console. */
function announce(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, '.test-install.lock');
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holderGone(lock)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** True when the lock's holder is a process that no longer exists. */
function holderGone(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return false; // just made, its pid not written yet
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The path of the pinned `agent`'s executable, installed first if it is not there yet. */
export async function testAgentExecutable(agent: InstallableAgentId): Promise<string> {
  await installTestAgents([agent]);
  const installed = await resolveInstalled({ agent });
  if (!installed) throw new Error(`${agent} ${PINNED_AGENTS[agent].version} is not installed in ${defaultAgentsDir()} (its install was not believed)`);
  return installed.path;
}
