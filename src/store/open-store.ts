// Choosing and opening the store for a config (see data-dir.ts for the layout).
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ConfigError } from '../config-error.js';
import { STORE_FILE, STORE_FILES } from './data-dir.js';
import type { EventStore } from './event-store.js';
import { MemoryStore } from './memory-store.js';
import { prepareDataDir, privateFile, type PreparedDir } from './private-dir.js';
import { SqliteStore } from './sqlite-store.js';

/**
 * The store the config asks for: SQLite in the data dir when persistence is on and a data dir is
 * known (the CLI always knows one), memory otherwise. The data dir is made private first
 * (private-dir.ts: a ConfigError when it cannot be), and the database file created 0600 before
 * SQLite opens it, so that its -wal and -shm are 0600 too. `onPrepared` hears what preparing
 * changed. Throws StoreInUseError when another daemon holds the data dir.
 */
export function openStore(config: Pick<Config, 'persist' | 'dataDir' | 'fsync'>, onPrepared?: (prepared: PreparedDir) => void): EventStore {
  if (config.persist === 'off' || !config.dataDir) return new MemoryStore();
  const prepared = prepareDataDir(config.dataDir, STORE_FILES);
  onPrepared?.(prepared);
  const file = join(prepared.dir, STORE_FILE);
  // Opened (created if missing) and checked on the descriptor every time, not only when missing:
  // prepareDataDir looked at the name, this looks at the file SQLite is about to open.
  try {
    privateFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EUNTRUSTED' || code === 'ELOOP') {
      throw new ConfigError(`--data-dir ${config.dataDir}: ${code === 'ELOOP' ? `${file} is a symbolic link` : (err as Error).message}, so another user may have put it there and the daemon will not write into it; move it out of the data dir`);
    }
    throw new ConfigError(`--data-dir ${config.dataDir}: cannot create ${file} (${code ?? (err as Error).message}); choose a --data-dir on a writable file system`);
  }
  return new SqliteStore(file, { fsync: config.fsync });
}
