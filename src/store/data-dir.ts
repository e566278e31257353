// The data directory: the one root of everything the daemon keeps (docs/persistence.md).
//
//   <data-dir>/agentwire.db (+ -wal)   the event store (SqliteStore), locked by the running daemon
//   <data-dir>/agents/                 the installed agent CLIs (unless --agents-dir says otherwise)
//
// Where it is by default is configuration (defaultDataDir in src/config.ts, which reads the
// environment); this file says what is inside it.
// It is private (private-dir.ts): owned by the daemon's user, 0700, its files 0600. It holds every
// transcript, and an agent running as another user (--agent-user) must not be able to read it.

export const STORE_FILE = 'agentwire.db';
/** The store's file and the files SQLite keeps beside it: all private (0600). */
export const STORE_FILES = [STORE_FILE, `${STORE_FILE}-wal`, `${STORE_FILE}-shm`, `${STORE_FILE}-journal`] as const;
