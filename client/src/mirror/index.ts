// `agentwire-client/mirror`: follows any number of daemons (one per sandbox), each through its
// one feed, and writes their sessions and events into PostgreSQL, until stop(). The database holds the transcripts after the
// sandboxes are gone; the sandboxes never hold its credentials. docs/mirror.md has the tables, the
// guarantees and the queries.
import pg from 'pg';
import { clientSource } from './client-source.js';
import { DaemonFollower, settleWithin, type FollowerOptions } from './daemon-follower.js';
import { migrate } from './migrations.js';
import { MirrorStore } from './mirror-store.js';
import type { DaemonSource, DaemonTarget, MirrorLogEntry, MirrorStats } from './types.js';

export type { DaemonStats, DaemonTarget, MirrorLogEntry, MirrorStats } from './types.js';
export { MIGRATIONS, SCHEMA_VERSION, migrate } from './migrations.js';

export interface MirrorOptions {
  daemons: DaemonTarget[];
  /** postgres://user:password@host:port/database (or give `pool`). */
  connectionString?: string;
  /** A pool of your own; the mirror does not end it. */
  pool?: pg.Pool;
  /** Events per INSERT at most (default 2000) … */
  batchSize?: number;
  /** … and the longest an event waits for its batch to fill (default 50 ms). */
  batchDelayMs?: number;
  /** Events read but not yet written, per daemon, before its streams are paused (default 20 000) … */
  queueCapacity?: number;
  /** … and their JSON bytes (default 32 MiB). */
  queueCapacityBytes?: number;
  /** The longest wait between attempts at a daemon that does not answer (default 5000 ms). */
  maxBackoffMs?: number;
  /** The fetch the daemons are called with (default: the global one). */
  fetch?: typeof fetch;
  log?: (entry: MirrorLogEntry) => void;
  /** Tests: how a daemon is read (default: through agentwire-client). */
  source?: (daemon: DaemonTarget) => DaemonSource;
}

export interface Mirror {
  /** Stops following, writes what was read, closes the pool it opened. */
  stop(): Promise<void>;
  stats(): MirrorStats;
}

/** Migrates the database, then follows every daemon; resolves once following has started. */
export async function mirror(options: MirrorOptions): Promise<Mirror> {
  const ids = options.daemons.map((d) => d.id);
  const bad = ids.find((id, i) => !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) || ids.indexOf(id) !== i);
  if (bad !== undefined) throw new Error(`daemon id '${bad}' is repeated or not 1–128 letters, digits, '.', '_', '-'`);
  if (!options.pool && !options.connectionString) throw new Error('mirror() needs a connectionString or a pool');

  const log = options.log ?? (() => {});
  const pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: Math.min(20, options.daemons.length + 2) });
  // An idle client that loses its connection must not crash the process: the next query reconnects.
  const onPoolError = (error: Error) => log({ level: 'warn', msg: 'a database connection failed', err: error.message });
  pool.on('error', onPoolError);
  try {
    await migrate(pool);
  } catch (error) {
    if (!options.pool) await pool.end();
    throw error;
  }

  const store = new MirrorStore(pool);
  let eventsWritten = 0;
  let batches = 0;
  const followerOptions: FollowerOptions = {
    batchSize: options.batchSize ?? 2000,
    maxDelayMs: options.batchDelayMs ?? 50,
    capacity: options.queueCapacity ?? 20_000,
    capacityBytes: options.queueCapacityBytes ?? 32 * 1024 * 1024,
    maxBackoffMs: options.maxBackoffMs ?? 5000,
    log,
    onWritten(count) {
      eventsWritten += count;
      batches++;
    },
  };
  const makeSource = options.source ?? ((d: DaemonTarget) => clientSource(d, options.fetch, followerOptions.maxBackoffMs));
  const followers = options.daemons.map((d) => new DaemonFollower(d, makeSource(d), store, followerOptions));
  for (const f of followers) f.start();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await Promise.all(followers.map((f) => f.stop()));
        // A query that never answers (a database gone mid-statement) would hold pool.end() forever.
        if (!options.pool && !(await settleWithin(pool.end(), 5000))) log({ level: 'warn', msg: 'database connections did not close within 5 s of the stop; left behind' });
        pool.off('error', onPoolError);
      })();
      return stopping;
    },
    stats: () => ({ eventsWritten, batches, daemons: followers.map((f) => f.stats()) }),
  };
}
