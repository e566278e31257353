// The data dir is private: it holds every transcript and every session's saved env and MCP headers
// (docs/persistence.md), so it must belong to the daemon's user and be closed to everyone else,
// whoever made it (a Docker VOLUME is made 0755 before the daemon ever runs). prepareDataDir runs
// at start-up, before the store opens: it creates what is missing, then holds the directory to
// the rule ssh holds ~/.ssh to: the daemon's own directory is made 0700, anyone else's is refused
// with a line naming the fix. Files the daemon keeps there are created 0600 (privateFile).
//
// The process umask is left alone on purpose: agents are children of the daemon, inherit it, and
// would write 0600 files into the user's workspace.
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../config-error.js';
import { untrustedFileStat, untrustedWayTo } from '../util/trusted-path.js';

/** What preparing changed, for the start-up log. */
export interface PreparedDir {
  dir: string;
  /** The directories created, outermost first. */
  created: string[];
  /** Paths whose group or other bits were taken away, with their old mode. */
  narrowed: { path: string; mode: string }[];
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;
const code = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;
const euid = () => process.geteuid?.() ?? 0;

/**
 * Makes `dir` the daemon's private data dir, or throws a ConfigError (exit 2) that says how to fix
 * it: created 0700 if missing, refused if it is not a directory or belongs to another user, made
 * 0700 if it is ours but open to others. `files` (names inside it) that exist are narrowed to 0600.
 */
export function prepareDataDir(dir: string, files: readonly string[] = []): PreparedDir {
  const where = `--data-dir ${dir}`;
  const path = resolve(dir);
  const created = createMissing(path, where);
  // Whoever may write a directory above it could swap the data dir for one of theirs after the
  // checks below (a sticky one, /tmp, is fine: nobody may rename another's entry there).
  // A symlinked data dir is fine when both ways, to the link and to where it leads, are.
  const way = untrustedWayTo(dirname(path)) ?? untrustedWayTo(dirname(realpathSync(path)));
  if (way) throw new ConfigError(`${where}: ${way.path}, on the way to it, is ${way.why}, so another user could swap the data dir; choose a --data-dir whose parent directories belong to you or root`);
  const stat = statSync(path);
  if (!stat.isDirectory()) throw new ConfigError(`${where}: it is a file, not a directory; remove it or choose another --data-dir`);
  if (stat.uid !== euid()) {
    throw new ConfigError(`${where}: it is owned by uid ${stat.uid}, not by this daemon's user (${euid()}); chown it to uid ${euid()} or choose another --data-dir`);
  }
  const narrowed: PreparedDir['narrowed'] = [];
  if ((stat.mode & 0o777) !== 0o700) {
    try {
      chmodSync(path, 0o700);
    } catch (err) {
      throw new ConfigError(`${where}: cannot make it 0700 (${code(err)}); choose a --data-dir on a writable file system`);
    }
    narrowed.push({ path, mode: octal(stat.mode) });
  }
  for (const name of files) {
    const file = resolve(path, name);
    const was = narrowFile(file, where);
    if (was !== undefined) narrowed.push({ path: file, mode: octal(was) });
  }
  return { dir: path, created, narrowed };
}

/**
 * Creates `path` and the missing directories above it, one level at a time: Node's recursive
 * mkdir retries forever on a file system that answers ENOENT to every mkdir (/proc, /sys), and its
 * errors do not say which level failed. The levels above the data dir get the usual mode (they
 * may be shared, like ~/.local/share); the data dir itself 0700.
 */
function createMissing(path: string, where: string): string[] {
  const missing: string[] = [];
  let at = path;
  for (;;) {
    try {
      const stat = statSync(at);
      if (!stat.isDirectory()) {
        throw new ConfigError(at === path ? `${where}: it is a file, not a directory; remove it or choose another --data-dir` : `${where}: cannot create it: ${at} is a file, not a directory; choose another --data-dir`);
      }
      break;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      if (code(err) !== 'ENOENT' && code(err) !== 'ENOTDIR') throw new ConfigError(`${where}: cannot look at ${at} (${code(err)}); choose another --data-dir`);
      missing.unshift(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
    }
  }
  for (const level of missing) {
    try {
      mkdirSync(level, { mode: level === path ? 0o700 : 0o755 });
    } catch (err) {
      throw new ConfigError(`${where}: cannot create ${level === path ? 'it' : level} (${describe(err, dirname(level))}); choose another --data-dir`);
    }
  }
  return missing;
}

function describe(err: unknown, parent: string): string {
  switch (code(err)) {
    case 'EACCES':
    case 'EPERM':
      return `${code(err)}: this daemon's user (uid ${euid()}) may not write in ${parent}`;
    case 'EROFS':
      return `EROFS: ${parent} is on a read-only file system`;
    case 'ENOENT':
      return `ENOENT: the file system of ${parent} takes no new directories (procfs or sysfs?)`;
    case 'ENOTDIR':
      return `ENOTDIR: ${parent} is a file, not a directory`;
    default:
      return String(code(err));
  }
}

/**
 * Takes group and other bits off an existing file; its old mode when it changed anything. A file
 * the daemon could not have made (a symlink, a hard link, another user's: planted while the dir
 * was open, docs/security.md) is refused, not narrowed: chmod would change the other user's file,
 * and the daemon never writes into a file it did not create. Checked after the dir is 0700, so
 * nobody but this user (and root) can swap the entry between this check and its use.
 */
function narrowFile(file: string, where: string): number | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined; // not there yet: it will be created private
  }
  const why = untrustedFileStat(stat, { root: false });
  if (why) {
    throw new ConfigError(`${where}: ${file} is ${why}, so another user may have put it there and the daemon will not write into it; move it out of the data dir (keep it if it holds sessions you want: a copy you own, cp ${file} ${file}.copy, can replace it)`);
  }
  if ((stat.mode & 0o077) === 0) return undefined;
  try {
    chmodSync(file, stat.mode & 0o700);
  } catch (err) {
    throw new ConfigError(`${where}: cannot make ${file} private (${code(err)}); chown it to uid ${euid()} or choose another --data-dir`);
  }
  return stat.mode;
}

/**
 * Creates `path` 0600 if it does not exist (an existing one keeps its content and is narrowed to
 * 0600), and writes `data` when given (replacing the content). SQLite gives a database's -wal and
 * -shm its file's mode, so creating the database file this way before SQLite opens it makes them
 * private too; a token file is written the same way. A symlink is refused (O_NOFOLLOW): nobody
 * else can write in the prepared dir, but a link left there must not redirect a write.
 */
export function privateFile(path: string, data?: string | Buffer): void {
  const flags = constants.O_CREAT | constants.O_WRONLY | constants.O_NOFOLLOW | (data === undefined ? 0 : constants.O_TRUNC);
  const fd = openSync(path, flags, 0o600);
  try {
    // Checked on the open descriptor, not on the name: what is checked is what is written.
    const stat = fstatSync(fd);
    const why = untrustedFileStat(stat, { root: false });
    if (why) throw Object.assign(new Error(`${path} is ${why}`), { code: 'EUNTRUSTED' });
    if ((stat.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    if (data !== undefined) writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** One log line per thing preparing changed: an operator should know the daemon chmodded a dir. */
export function logPrepared(log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void }, prepared: PreparedDir): void {
  if (prepared.created.length > 0) log.info({ dataDir: prepared.dir, created: prepared.created }, 'data dir created (0700)');
  for (const { path, mode } of prepared.narrowed) log.warn({ path, was: mode }, `${path} was ${mode}, open to other users; made it private (${path === prepared.dir ? '0700' : '0600'})`);
}
