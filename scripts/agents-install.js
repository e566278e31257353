// `npm run agents:install`: installs every pinned agent CLI (src/agents/versions.ts) into the agents
// cache ($AGENTWIRE_AGENTS_DIR, or ~/.local/share/agentwire/agents), reusing complete installs. Runs after
// `npm run build`, from dist/. Prints one line per agent and exits non-zero if any install failed.
//   node scripts/agents-install.js [--reinstall] [agent ...]
import { defaultAgentsDir, installAgent } from '../dist/agents/install.js';
import { INSTALLABLE_AGENTS, PINNED_AGENTS } from '../dist/agents/versions.js';

const args = process.argv.slice(2);
const reinstall = args.includes('--reinstall');
const named = args.filter((a) => !a.startsWith('--'));
const unknown = named.filter((a) => !INSTALLABLE_AGENTS.includes(/** @type {any} */ (a)));
if (unknown.length > 0) {
  console.error(`agents:install: unknown agent ${unknown.join(', ')} (known: ${INSTALLABLE_AGENTS.join(', ')})`);
  process.exit(2);
}
const agents = /** @type {import('../dist/agents/versions.js').InstallableAgentId[]} */ (named.length > 0 ? named : INSTALLABLE_AGENTS);
const dir = defaultAgentsDir();
console.log(`agents:install: ${agents.length} agent CLI(s) into ${dir}`);

const failed = [];
const started = Date.now();
// One after the other: four parallel npm installs of ~100–400 MB each only fight over two cores.
for (const agent of agents) {
  const { package: pkg, version } = PINNED_AGENTS[agent];
  try {
    const r = await installAgent({ agent, dir, reinstall });
    const how = r.reused ? 'reused   ' : 'installed';
    console.log(`  ${agent.padEnd(8)} ${how} ${pkg}@${version}  ${r.seconds.toFixed(1)}s  ${r.path}`);
  } catch (error) {
    failed.push(agent);
    const message = error instanceof Error ? error.message : String(error);
    console.log(`  ${agent.padEnd(8)} FAILED    ${pkg}@${version}`);
    console.error(message.replace(/^/gm, `    ${agent}: `));
  }
}

const total = ((Date.now() - started) / 1000).toFixed(1);
if (failed.length > 0) {
  console.error(`agents:install: FAILED for ${failed.join(', ')} (${total}s); tests that need these CLIs will fail`);
  process.exit(1);
}
console.log(`agents:install: all ${agents.length} ready (${total}s)`);
