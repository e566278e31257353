// `npm run agents:outdated`: the pinned agent CLIs (src/agents/versions.ts) beside the newest
// versions on the npm registry, asked with `npm view <package> version`. Reports only and exits 0,
// even when a lookup fails (the table says which). Runs after `npm run build`, from dist/.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { formatOutdated, outdatedRows } from '../dist/agents/outdated.js';

const run = promisify(execFile);
/** @param {string} pkg */
const lookup = async (pkg) => (await run('npm', ['view', pkg, 'version'], { timeout: 60_000 })).stdout;

process.stdout.write(formatOutdated(await outdatedRows(lookup)));
