// Which SQLite the store uses, by Node version:
// - Node 22.13 and later (23.4 and later on 23): Node's built-in `node:sqlite`, through the adapter
//   in node-sqlite.ts. Nothing to download or compile at install.
// - Node 20 (and 22 before 22.13, 23 before 23.4, where node:sqlite needs a flag): the
//   better-sqlite3 12 addon, an optional dependency compiled at install. npm drops an optional
//   dependency whose build fails without failing the install, so agentwire's own postinstall
//   (scripts/check-sqlite.js) fails it instead, with the fix below. (better-sqlite3 13, on
//   Node-API, segfaults on Node 20; 12 on Node 24.19+ aborts when a statement is garbage collected
//   outside a context: neither matters once node:sqlite serves Node 22.13+.)
// The store sees only the subset of better-sqlite3's API both give (Database, Statement below).
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { NodeSqliteDatabase } from './node-sqlite.js';

const require = createRequire(import.meta.url);

/** True where node:sqlite works without a flag. */
export function hasNodeSqlite(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major >= 24 || (major === 23 && minor >= 4) || (major === 22 && minor >= 13);
}

export const SQLITE_BINDING: 'node:sqlite' | 'better-sqlite3' = hasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3';

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** The statement API the store uses: better-sqlite3's, which node-sqlite.ts gives over node:sqlite. */
export interface Statement {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  pluck(on?: boolean): this;
}

export interface Database {
  readonly open: boolean;
  prepare(sql: string): Statement;
  exec(sql: string): this;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  close(): this;
}

export type DatabaseConstructor = new (path: string, options?: { readonly?: boolean; nativeBinding?: string }) => Database;

let loaded: DatabaseConstructor | undefined;

/** The store's native addon is missing or was built for another Node: the message says how to
 *  build it where only the npm registry is reachable, since the package manager's own error (a
 *  dozen paths `bindings` tried, or `Cannot find module`) says neither. */
export class SqliteAddonError extends Error {
  override name = 'SqliteAddonError';
}

/** The Database constructor for this Node, loaded on first use: a daemon without persistence
 *  (--persist off) never loads it. */
export function sqliteDatabase(): DatabaseConstructor {
  if (loaded) return loaded;
  if (SQLITE_BINDING === 'node:sqlite') return (loaded = NodeSqliteDatabase);
  try {
    return (loaded = require('better-sqlite3') as DatabaseConstructor);
  } catch (err) {
    throw addonError(err);
  }
}

/** Opens a database file; a failure to load the addon (better-sqlite3 loads it in the
 *  constructor) becomes a SqliteAddonError, anything else (a locked or unreadable file) is thrown
 *  as it is. */
export function openDatabase(path: string): Database {
  const Database = sqliteDatabase();
  try {
    return new Database(path, addonOption());
  } catch (err) {
    throw isAddonLoadFailure(err) ? addonError(err) : err;
  }
}

function isAddonLoadFailure(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /bindings file|\.node\b|NODE_MODULE_VERSION|invalid ELF|compiled against a different Node/i.test(message);
}

function addonError(err: unknown): SqliteAddonError {
  const message = err instanceof Error ? err.message : String(err);
  const cause = message.split(/(?<=\.)\s|\n/)[0]!.trim();
  return new SqliteAddonError(`the SQLite store could not load better-sqlite3 12, the addon it needs on Node ${process.versions.node} (${cause}); ${addonFix()}; or start with --persist off to keep sessions in memory only`, { cause: err });
}

/** The fix that works on a machine reaching only the npm registry: Node's headers from the `node`
 *  package's platform build (what the `node` package installs), then the addon compiled against
 *  them. The same text as scripts/check-sqlite.js prints when an install leaves the addon out. */
export function addonFix(version = process.versions.node, platform: string = process.platform, arch: string = process.arch): string {
  const pkg = `${platform === 'darwin' && arch === 'arm64' ? 'node-bin' : 'node'}-${platform === 'win32' ? 'win' : platform}-${arch}`;
  const dir = `${homedir()}/.cache/agentwire/node-v${version}`;
  return (
    `use Node 22.13 or later (its built-in SQLite needs no addon), or build the addon (needs python3, make and a C++ compiler; only the npm registry is used): ` +
    `\`npm install --prefix ${dir} --no-save --no-package-lock ${pkg}@${version}\`, then, where agentwire is installed, ` +
    `\`npm_config_nodedir=${dir}/node_modules/${pkg} npm_config_build_from_source=true npm install\``
  );
}

/** better-sqlite3 12 finds its compiled addon through the `bindings` package, which tries a dozen
 *  candidate paths (5–15 ms of a start here); naming the file its install builds (build/Release)
 *  skips the search. When that file is not there (a Debug build, say) the search runs as before. */
export function addonOption(): { nativeBinding?: string } {
  if (SQLITE_BINDING !== 'better-sqlite3') return {};
  try {
    return { nativeBinding: require.resolve('better-sqlite3/build/Release/better_sqlite3.node') };
  } catch {
    return {};
  }
}
