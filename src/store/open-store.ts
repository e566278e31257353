// Choosing and opening the store for a config (see data-dir.ts for the layout).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { STORE_FILE } from './data-dir.js';
import type { EventStore } from './event-store.js';
import { MemoryStore } from './memory-store.js';
import { SqliteStore } from './sqlite-store.js';

/**
 * The store the config asks for: SQLite in the data dir when persistence is on and a data dir is
 * known (the CLI always knows one), memory otherwise. Throws StoreInUseError when another daemon
 * holds the data dir.
 */
export function openStore(config: Pick<Config, 'persist' | 'dataDir' | 'fsync'>): EventStore {
  if (config.persist === 'off' || !config.dataDir) return new MemoryStore();
  const dir = resolve(config.dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return new SqliteStore(join(dir, STORE_FILE), { fsync: config.fsync });
}
