// The daemon's bearer token when the operator gave none: a daemon that runs code must not be open to
// every local process and web page by default (the convention of local servers that run code, such
// as Jupyter). `--token`, `--token-file` or AGENTWIRE_TOKEN name one; `--no-token` is the explicit
// opt-out; otherwise the CLI makes one here. buildApp() never does: a test or an embedding that
// builds the app without a token gets an open app, as it asked.
//
// With persistence on, the token lives in `<data-dir>/token` (0600, inside the 0700 data dir) and
// is reused on later starts, so a bookmark, a script's `$(agentwire token)` and a client keep
// working across restarts. With `--persist off` nothing is written: a fresh token per run.
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { ConfigError } from './config-error.js';
import { OPTIONS, type Config } from './config.js';
import { untrustedFileStat } from './util/trusted-path.js';

export const TOKEN_FILE = 'token';

/** Where the token in force came from; `generated` tokens are announced on stderr at start. */
export type TokenSource = 'flag' | 'env' | 'file' | 'generated' | 'none';

export interface DaemonToken {
  token?: string;
  source: TokenSource;
  /** The file that holds a generated token; absent when it lives in memory only (--persist off). */
  file?: string;
}

/** 32 random bytes, base64url: 43 characters, no character that needs escaping in a URL. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `<data-dir>/token`, where a persistent daemon keeps the token it made. */
export function tokenFilePath(dataDir: string): string {
  return join(dataDir, TOKEN_FILE);
}

/**
 * The token in force for a CLI start. `argv` tells a `--token` flag (readable by every local
 * process in /proc/<pid>/cmdline) from AGENTWIRE_TOKEN. The data dir must already be prepared
 * (private, ours): the token file is created inside it.
 */
export function daemonToken(config: Config, argv: readonly string[]): DaemonToken {
  if (config.tokenFile !== undefined) return { token: config.token, source: 'file' };
  if (config.token !== undefined) return { token: config.token, source: argv.some((a) => a === '--token' || a.startsWith('--token=')) ? 'flag' : 'env' };
  if (config.noToken) return { source: 'none' };
  if (config.persist === 'off' || !config.dataDir) return { token: newToken(), source: 'generated' };
  const file = tokenFilePath(config.dataDir);
  return { token: readOrCreate(file), source: 'generated', file };
}

function readOrCreate(file: string): string {
  try {
    // 'wx': never overwrite a token another start (or a concurrent one) wrote; mode 0600 from birth.
    const token = newToken();
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigError(`cannot write the token file ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); check the data dir, or give a token with --token-file`);
  }
  return readTokenFile(file, { repair: true });
}

/**
 * The token in an existing token file. With `repair`, a file the daemon owns that others could
 * read is closed (0600) rather than refused: it was ours, only its mode was wrong.
 */
export function readTokenFile(file: string, { repair = false } = {}): string {
  let text: string;
  try {
    if (repair) {
      // lstat: a symlink or a hard link would make someone else's file (and token) the daemon's.
      const stat = lstatSync(file);
      const why = untrustedFileStat(stat, { root: false });
      if (why) throw new ConfigError(`the token file ${file} is ${why}, so another user may have put it there (and know the token); remove it and start again`);
      if ((stat.mode & 0o077) !== 0) chmodSync(file, 0o600);
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(code === 'ENOENT' ? `no token file at ${file}` : `cannot read the token file ${file} (${code ?? (err as Error).message})`);
  }
  const token = OPTIONS.token.schema.safeParse(text.trim());
  if (!token.success || token.data === undefined) throw new ConfigError(`the token file ${file} holds no valid token (${token.success ? 'it is empty' : token.error.issues[0]?.message}); remove it and start again to get a new one`);
  return token.data;
}

/** How the token is printed again, from where the daemon was started: `command` is how that shell
 *  runs agentwire (agentwireCommand), `dataDir` is given when it is not the one `token` defaults to. */
export interface TokenHint {
  command: string;
  dataDir?: string;
}

/** The one stderr line that tells a person how to get in, printed once the daemon listens. */
export function tokenAnnouncement(token: DaemonToken, baseUrl: string, hint: TokenHint = { command: 'agentwire' }): string | undefined {
  if (token.source !== 'generated' || !token.token) return undefined;
  const print = printCommand(hint);
  const where = token.file
    ? `saved in ${token.file}; scripts: -H "Authorization: Bearer $(${print})"`
    : `a new token for this run, kept in memory only (--persist off), so no command prints it; scripts: -H "Authorization: Bearer ${token.token}"`;
  return `agentwire: this daemon needs its token; open ${baseUrl}/?token=${token.token} (${where})`;
}

/** Where the token in force is and how to print it, for a 401's detail (a person holding no token
 *  reads it there, or in the inspector's form). */
export function tokenHelp(token: DaemonToken, hint: TokenHint): string | undefined {
  if (token.source === 'none' || !token.token) return undefined;
  if (token.source === 'file') return 'Its token is in the file its --token-file names.';
  if (token.source === 'flag' || token.source === 'env') return 'Its token is the one it was started with (--token or AGENTWIRE_TOKEN).';
  if (!token.file) return 'Its token was made for this run only (--persist off) and printed on its stderr at start.';
  return `Its token is in ${token.file}; print it with: ${printCommand(hint)}`;
}

function printCommand(hint: TokenHint): string {
  return `${hint.command} token${hint.dataDir ? ` --data-dir ${shellWord(hint.dataDir)}` : ''}`;
}

/**
 * How the shell that started this daemon runs agentwire again: `npx agentwire` for a package that
 * npx started (npm exec puts its bin on a PATH the shell does not have), `node bin/agentwire.js` in a
 * clone (`npm start` there, or that command), `agentwire` when that name on the shell's PATH is
 * this program (a global install), else node with the script's path.
 */
export function agentwireCommand(script: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const real = realpathOr(script);
  if (!real) return 'agentwire';
  if (env.npm_command === 'exec' && real.includes(`${sep}node_modules${sep}`)) return 'npx agentwire';
  if (realpathOr(join(cwd, 'bin/agentwire.js')) === real) return 'node bin/agentwire.js';
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && !dir.includes('node_modules') && realpathOr(join(dir, 'agentwire')) === real) return 'agentwire';
  }
  return `node ${shellWord(real)}`;
}

function realpathOr(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** A path as one shell word: quoted when it holds anything but the usual path characters. */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
