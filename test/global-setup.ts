// Before any test: the pinned agent CLIs (src/agents/versions.ts) must be in the agents cache, so
// `npm test` on a fresh clone installs them (about 35 s and 1.5 GB the first time, reused after).
// A failed install does not stop the run: the tests that need that CLI fail and name it.
//
// The mock agent keeps a transcript of every session it runs (docs/mock-agent.md): every mock the
// suite starts writes into one temporary home, removed afterwards, never into the real
// ~/.local/state. Workers inherit the variable, and so do the agents and daemons they spawn.
// Likewise one daemon install (build and bundle) for the whole run, made by the first test file
// that starts a daemon process.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultAgentsDir, installAgent } from '../src/agents/install.js';
import { INSTALLABLE_AGENTS, PINNED_AGENTS } from '../src/agents/versions.js';
import { SHARED_INSTALL_ENV } from './support/daemon-process.js';

export default async function setup(): Promise<() => void> {
  const mockHome = mkdtempSync(join(tmpdir(), 'agentwire-test-mock-home-'));
  process.env.MOCK_AGENT_HOME = mockHome;
  // The daemon install test files share (test/support/daemon-process.ts): built by the first file that
  // needs it, readable by every user (agent-user tests run agents as nobody).
  const install = mkdtempSync(join(tmpdir(), 'agentwire-test-install-'));
  chmodSync(install, 0o755);
  process.env[SHARED_INSTALL_ENV] = install;
  await installAgents();
  return () => {
    rmSync(mockHome, { recursive: true, force: true });
    rmSync(install, { recursive: true, force: true });
  };
}

async function installAgents(): Promise<void> {
  const dir = defaultAgentsDir();
  // One after the other: parallel installs of ~100–400 MB each only fight over two cores.
  for (const agent of INSTALLABLE_AGENTS) {
    const { package: pkg, version } = PINNED_AGENTS[agent];
    try {
      const r = await installAgent({ agent, dir });
      if (!r.reused) console.log(`[agents] installed ${pkg}@${version} in ${r.seconds.toFixed(1)}s → ${r.path}`);
    } catch (error) {
      console.error(`[agents] FAILED to install ${pkg}@${version} into ${dir}: ${(error as Error).message}`);
    }
  }
}
