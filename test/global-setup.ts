// No agent CLI is installed here: the suites that run real agents install the pinned ones they need
// on first use (test/support/test-agents.ts), so a unit-test folder downloads nothing. They go into
// a test cache outside the user's data dir (~/.cache/agentwire-test/agents, or $XDG_CACHE_HOME's),
// set here as AGENTWIRE_AGENTS_DIR for the whole run unless the caller chose a dir already.
//
// The mock agent keeps a transcript of every session it runs (docs/mock-agent.md): every mock the
// suite starts writes into one temporary home, removed afterwards, never into the real
// ~/.local/state. Workers inherit the variable, and so do the agents and daemons they spawn.
// Likewise one daemon install (build and bundle) for the whole run, made by the first test file
// that starts a daemon process.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_INSTALL_ENV } from './support/daemon-process.js';
import { testAgentsDir } from './support/test-agents.js';

export default async function setup(): Promise<() => void> {
  const mockHome = mkdtempSync(join(tmpdir(), 'agentwire-test-mock-home-'));
  process.env.MOCK_AGENT_HOME = mockHome;
  // The daemon install test files share (test/support/daemon-process.ts): built by the first file that
  // needs it, readable by every user (agent-user tests run agents as nobody).
  const install = mkdtempSync(join(tmpdir(), 'agentwire-test-install-'));
  chmodSync(install, 0o755);
  process.env[SHARED_INSTALL_ENV] = install;
  process.env.AGENTWIRE_AGENTS_DIR ||= testAgentsDir();
  return () => {
    rmSync(mockHome, { recursive: true, force: true });
    rmSync(install, { recursive: true, force: true });
  };
}
