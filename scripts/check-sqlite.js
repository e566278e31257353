// agentwire's postinstall: an install that leaves the store without SQLite fails, loudly, instead
// of `agentwire server` refusing to start later.
//
// On Node 22.13 and later the store uses Node's built-in node:sqlite: nothing to check. On Node 20
// it needs the better-sqlite3 addon, an optional dependency, and npm drops an optional dependency
// whose install script fails without failing the install ("added 199 packages"). Its install
// downloads a prebuilt binary from GitHub, else compiles against Node's headers from nodejs.org:
// on a machine that reaches only the npm registry both fail. So here the addon is loaded and
// used once; when that fails the install fails with the fix that works there (Node's headers from
// the npm registry's `node` package, then the addon compiled against them: the same text as
// src/store/sqlite-binding.ts's addonFix(), which the daemon prints when it finds no addon).
// AGENTWIRE_SQLITE_CHECK=off skips the check (for a daemon only ever run with --persist off); so
// does `npm ci --dry-run`, which runs this script too but installs nothing to check.
import { createRequire } from 'node:module';
import { homedir } from 'node:os';

const require = createRequire(import.meta.url);

/** The same rule as hasNodeSqlite() in src/store/sqlite-binding.ts. */
function hasNodeSqlite(version) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major >= 24 || (major === 23 && minor >= 4) || (major === 22 && minor >= 13);
}

/** Why better-sqlite3 does not work here, or undefined when it does. */
function addonProblem() {
  try {
    const Database = require('better-sqlite3');
    const db = new Database(':memory:');
    db.prepare('SELECT 1').get();
    db.close();
    return undefined;
  } catch (err) {
    return String(err instanceof Error ? err.message : err).split('\n')[0];
  }
}

function fix(version, platform, arch) {
  const pkg = `${platform === 'darwin' && arch === 'arm64' ? 'node-bin' : 'node'}-${platform === 'win32' ? 'win' : platform}-${arch}`;
  const dir = `${homedir()}/.cache/agentwire/node-v${version}`;
  return [
    'Use Node 22.13 or later (its built-in SQLite needs no addon), or build the addon (needs python3,',
    'make and a C++ compiler; only the npm registry is used):',
    '',
    `  npm install --prefix ${dir} --no-save --no-package-lock ${pkg}@${version}`,
    `  npm_config_nodedir=${dir}/node_modules/${pkg} npm_config_build_from_source=true npm install`,
    '',
    '(the second command where agentwire is installed: in its clone, or in the project that depends',
    'on it). To install without the store and run with --persist off only: AGENTWIRE_SQLITE_CHECK=off.',
  ].join('\n');
}

const version = process.versions.node;
const skip = process.env.AGENTWIRE_SQLITE_CHECK === 'off' || process.env.npm_config_dry_run === 'true';
if (!skip && !hasNodeSqlite(version)) {
  const problem = addonProblem();
  if (problem) {
    console.error(
      [
        `agentwire: on Node ${version} the SQLite store needs the better-sqlite3 addon, and this install has none that works`,
        `(${problem}). npm leaves it out silently when its install can neither download a prebuilt binary (from`,
        'GitHub) nor compile one (it fetches Node\'s headers from nodejs.org).',
        '',
        fix(version, process.platform, process.arch),
      ].join('\n'),
    );
    process.exit(1);
  }
}
