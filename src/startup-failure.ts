// Why the daemon did not start, told to a person: one line on stderr naming the cause and the fix,
// never a stack trace, and an exit code a supervisor can act on: 2 when a flag (or its variable)
// is wrong and rerunning with the same configuration would fail again, 1 otherwise (a port
// another process holds, anything unexpected). AGENTWIRE_DEBUG=1, or --log-level debug or trace,
// adds the stack trace below the line.
import { ConfigError } from './config-error.js';
import type { Config } from './config.js';
import { SqliteAddonError } from './store/sqlite-binding.js';
import { StoreInUseError } from './store/sqlite-store.js';

export interface StartupFailure {
  /** One line, `agentwire: …`. */
  line: string;
  exitCode: 1 | 2;
}

type Errno = Error & { code?: unknown; syscall?: unknown };

/** What to print for an error thrown while starting (`config` when it was parsed by then). */
export function describeStartupFailure(err: unknown, config?: Pick<Config, 'host' | 'port' | 'dataDir'>): StartupFailure {
  const error = (err instanceof Error ? err : new Error(String(err))) as Errno;
  const code = typeof error.code === 'string' ? error.code : undefined;
  const host = config?.host ?? '127.0.0.1';
  const port = config?.port;
  const line = (text: string, exitCode: 1 | 2): StartupFailure => ({ line: `agentwire: ${oneLine(text)}`, exitCode });

  if (error instanceof ConfigError) return line(error.message, 2);
  if (error.syscall === 'listen' || error.syscall === 'bind' || error.syscall === 'getaddrinfo') {
    switch (code) {
      case 'EADDRINUSE':
        return line(`port ${port} on ${host} is already in use by another process; stop that process or choose another --port`, 1);
      case 'EACCES':
      case 'EPERM':
        return line(`not permitted to listen on port ${port} of ${host} (${code}: ports below 1024 need root or CAP_NET_BIND_SERVICE); choose --port 1024 or above`, 2);
      case 'EADDRNOTAVAIL':
        return line(`--host ${host} is not an address of this machine (EADDRNOTAVAIL); choose one it has, e.g. 127.0.0.1 or 0.0.0.0`, 2);
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EAI_FAIL':
        return line(`--host ${host} does not resolve (${code}); use an IP address or a name this machine resolves`, 2);
    }
  }
  // Rerunning fails the same way until the addon is built; the message names the fix.
  if (error instanceof SqliteAddonError) return line(error.message, 1);
  if (error instanceof StoreInUseError || isStoreOpenError(error, code)) {
    // The data dir is held by another daemon, not writable, or holds a store from a newer
    // agentwire: the message says which.
    return line(`cannot open the store in ${config?.dataDir}: ${error.message}`, 2);
  }
  return line(`${error.message || String(err)} (${code ?? error.name}: an unexpected start-up failure; AGENTWIRE_DEBUG=1 prints its stack trace)`, 1);
}

/** Prints the failure (and the stack when asked for) and sets the exit code. */
export function reportStartupFailure(err: unknown, config?: Config, env: NodeJS.ProcessEnv = process.env): void {
  const failure = describeStartupFailure(err, config);
  console.error(failure.line);
  if (wantsStack(env, config) && err instanceof Error && err.stack) console.error(err.stack);
  process.exitCode = failure.exitCode;
}

export function wantsStack(env: NodeJS.ProcessEnv, config?: Pick<Config, 'logLevel'>): boolean {
  return env.AGENTWIRE_DEBUG === '1' || config?.logLevel === 'debug' || config?.logLevel === 'trace';
}

function isStoreOpenError(err: Errno, code: string | undefined): boolean {
  return (code !== undefined && (code.startsWith('SQLITE_') || code === 'EACCES' || code === 'EROFS' || code === 'ENOSPC')) || /schema version/.test(err.message);
}

/** A message from a library may span lines (SQLite's rarely, others' more often): one line it is. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ').trim();
}
