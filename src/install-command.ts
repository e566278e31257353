// `agentwire install-agent <agent> [--version x.y.z] [--reinstall] [--agents-dir DIR]`: installs a
// pinned agent CLI (src/agents/versions.ts) from the npm registry with the same atomic installer
// the tests and the image use. Prints progress; exits 1 with npm's stderr tail on failure.
import { defaultAgentsDir, installAgent } from './agents/install.js';
import { INSTALLABLE_AGENTS, PINNED_AGENTS, type InstallableAgentId } from './agents/versions.js';

export const INSTALL_USAGE = `Usage: agentwire install-agent <${INSTALLABLE_AGENTS.join('|')}|all> [--version x.y.z] [--reinstall] [--agents-dir DIR]

Installs the pinned version (or --version) from the npm registry into --agents-dir
(default: $AGENTWIRE_AGENTS_DIR, else <data-dir>/agents: ~/.local/share/agentwire/agents). A complete install is reused.`;

export async function installCommand(argv: string[]): Promise<number> {
  const names: string[] = [];
  let version: string | undefined;
  let reinstall = false;
  let dir = defaultAgentsDir();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--reinstall') reinstall = true;
    else if (arg === '--version') version = argv[++i];
    else if (arg === '--agents-dir') dir = argv[++i] ?? dir;
    else if (arg === '--help' || arg === '-h') return (console.log(INSTALL_USAGE), 0);
    else if (arg.startsWith('--')) return fail(`unknown flag ${arg}`);
    else names.push(arg);
  }
  const agents = names.includes('all') ? INSTALLABLE_AGENTS : (names as InstallableAgentId[]);
  const unknown = agents.filter((a) => !INSTALLABLE_AGENTS.includes(a));
  if (agents.length === 0 || unknown.length > 0) return fail(unknown.length ? `unknown agent ${unknown.join(', ')}` : 'name an agent');
  if (version !== undefined && agents.length !== 1) return fail('--version needs exactly one agent');
  let failed = 0;
  for (const agent of agents) {
    const wanted = version ?? PINNED_AGENTS[agent].version;
    console.log(`agentwire: installing ${PINNED_AGENTS[agent].package}@${wanted} into ${dir}`);
    try {
      const r = await installAgent({
        agent,
        dir,
        reinstall,
        ...(version ? { version } : {}),
        onProgress: (p) => console.log(`  ${p.stage}: ${p.message}`),
      });
      console.log(`agentwire: ${agent} ${r.reused ? 'already installed' : `installed in ${r.seconds.toFixed(1)}s`}: ${r.path}`);
    } catch (err) {
      failed++;
      console.error(`agentwire: installing ${agent} failed: ${(err as Error).message}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

function fail(message: string): number {
  console.error(`agentwire install-agent: ${message}\n\n${INSTALL_USAGE}`);
  return 2;
}
