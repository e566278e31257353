// The data directory: the one root of everything the daemon keeps (docs/persistence.md).
//
//   <data-dir>/agentwire.db (+ -wal)   the event store (SqliteStore), locked by the running daemon
//   <data-dir>/agents/                 the installed agent CLIs (unless --agents-dir says otherwise)
//
// It is private (private-dir.ts): owned by the daemon's user, 0700, its files 0600. It holds every
// transcript, and an agent running as another user (--agent-user) must not be able to read it.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** $AGENTWIRE_DATA_DIR, else $XDG_DATA_HOME/agentwire, else ~/.local/share/agentwire. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTWIRE_DATA_DIR) return resolve(env.AGENTWIRE_DATA_DIR);
  const xdg = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith('/') ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(xdg, 'agentwire');
}

export const STORE_FILE = 'agentwire.db';
/** The store's file and the files SQLite keeps beside it: all private (0600). */
export const STORE_FILES = [STORE_FILE, `${STORE_FILE}-wal`, `${STORE_FILE}-shm`, `${STORE_FILE}-journal`] as const;
