// Which better-sqlite3 the store loads, by Node version. The same API comes in two builds:
// - 12.x wraps its objects with node::ObjectWrap. On Node 24 (from 24.19) that class registers an
//   environment cleanup hook its destructor removes, and a statement garbage collected while no
//   context is entered aborts the process (`Assertion failed: (env) != nullptr` in
//   RemoveEnvironmentCleanupHook): seen here at daemon start on Node 24.21. Upstream will not fix
//   12.x.
// - 13.x is built on Node-API and ships prebuilt binaries (nothing to compile), but declares Node
//   >= 22 and segfaults on Node 20.
// So Node 22 and later load 13 (installed under the alias `better-sqlite3-napi`), Node 20 loads 12.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const major = Number(process.versions.node.split('.')[0]);

export const SQLITE_PACKAGE = major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

let loaded: typeof BetterSqlite3 | undefined;

/** The store's native addon is missing or was built for another Node: the message says which
 *  build this Node needs and how to get it, since the package manager's own error (a dozen paths
 *  `bindings` tried, or `Cannot find module`) says neither. */
export class SqliteAddonError extends Error {
  override name = 'SqliteAddonError';
}

/** The better-sqlite3 Database constructor for this Node, loaded on first use: a daemon without
 *  persistence (--persist off) never loads it. */
export function sqliteDatabase(): typeof BetterSqlite3 {
  try {
    return (loaded ??= require(SQLITE_PACKAGE) as typeof BetterSqlite3);
  } catch (err) {
    throw addonError(err);
  }
}

/** Opens a database file with this Node's build; a failure to load the addon (12 loads it in the
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
  const build = SQLITE_PACKAGE === 'better-sqlite3' ? 'better-sqlite3 12, the build for Node 20' : 'better-sqlite3 13 (the package alias better-sqlite3-napi), the build for Node 22 and later';
  const fix =
    SQLITE_PACKAGE === 'better-sqlite3'
      ? 'npm builds it when it installs agentwire: run `npm rebuild better-sqlite3` where agentwire is installed (where no prebuilt binary can be downloaded this compiles it, which needs python3, make and a C++ compiler)'
      : 'npm installs it only under Node 22 and later: run `npm install` (or reinstall agentwire) under this Node; it ships prebuilt binaries, nothing is compiled';
  return new SqliteAddonError(`the SQLite store could not load ${build} (${cause}); ${fix}; or start with --persist off to keep sessions in memory only`, { cause: err });
}

/** better-sqlite3 12 finds its compiled addon through the `bindings` package, which tries a dozen
 *  candidate paths (5–15 ms of a start here); naming the file its install builds (build/Release)
 *  skips the search. When that file is not there (a Debug build, say) the search runs as before.
 *  13 loads its prebuilt file directly and takes no such option. */
export function addonOption(): { nativeBinding?: string } {
  if (SQLITE_PACKAGE !== 'better-sqlite3') return {};
  try {
    return { nativeBinding: require.resolve('better-sqlite3/build/Release/better_sqlite3.node') };
  } catch {
    return {};
  }
}

export type Database = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement;
