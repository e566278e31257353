// `agentwire-mirror`: the mirror as a command. Flags name the database and the daemons; secrets
// come only from the environment (a command line is readable by every user of the machine through
// ps and /proc). Logs and periodic stats are JSON lines on stdout; SIGINT or SIGTERM stops it
// cleanly (what was read is written first), a second signal stops it at once.
import { parseArgs } from 'node:util';
import { mirror, type MirrorLogEntry } from './index.js';
import type { DaemonTarget } from './types.js';

const USAGE = `usage: agentwire-mirror --database <postgres-url> --daemon <id>=<baseUrl> [--daemon <id>=<baseUrl> …]
       [--stats-interval-ms 10000] [--batch-size 2000]

  --database   or AGENTWIRE_MIRROR_DATABASE_URL; leave the password out of it and use PGPASSWORD or ~/.pgpass
  --daemon     repeatable; <id> names the daemon in the tables, for good
  tokens       AGENTWIRE_MIRROR_TOKEN_<ID> per daemon (<ID>: the id in upper case, other characters as _),
               else AGENTWIRE_MIRROR_TOKEN for every daemon; never on the command line`;

export class UsageError extends Error {}

export interface CliConfig {
  connectionString: string;
  daemons: DaemonTarget[];
  statsIntervalMs: number;
  batchSize: number;
}

/** The environment variable holding a daemon's token: AGENTWIRE_MIRROR_TOKEN_<ID>. */
export function tokenVariable(id: string): string {
  return `AGENTWIRE_MIRROR_TOKEN_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        database: { type: 'string' },
        daemon: { type: 'string', multiple: true },
        'stats-interval-ms': { type: 'string' },
        'batch-size': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) throw new UsageError('');
  const connectionString = values.database ?? env.AGENTWIRE_MIRROR_DATABASE_URL;
  if (!connectionString) throw new UsageError('no database: give --database or AGENTWIRE_MIRROR_DATABASE_URL');
  if (!values.daemon?.length) throw new UsageError('no daemon: give at least one --daemon <id>=<baseUrl>');
  const daemons = values.daemon.map((spec) => {
    const at = spec.indexOf('=');
    const id = spec.slice(0, at);
    const baseUrl = spec.slice(at + 1).replace(/\/+$/, '');
    if (at < 1 || !/^https?:\/\/./.test(baseUrl)) throw new UsageError(`--daemon ${spec}: expected <id>=<http(s) base url>`);
    const token = env[tokenVariable(id)] ?? env.AGENTWIRE_MIRROR_TOKEN;
    return token ? { id, baseUrl, token } : { id, baseUrl };
  });
  const int = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer`);
    return Number(value);
  };
  return {
    connectionString,
    daemons,
    statsIntervalMs: int('stats-interval-ms', values['stats-interval-ms'], 10_000),
    batchSize: int('batch-size', values['batch-size'], 2000),
  };
}

function print(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

/** Runs the command; resolves with its exit code. */
export async function main(argv: string[]): Promise<number> {
  let config: CliConfig;
  try {
    config = parseCli(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message ? `agentwire-mirror: ${error.message}\n` : ''}${USAGE}\n`);
    return error.message ? 2 : 0;
  }
  let stopping = false;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (stopping) process.exit(1); // a second signal: no more waiting
        stopping = true;
        resolve(signal);
      });
    }
  });
  const m = await mirror({
    connectionString: config.connectionString,
    daemons: config.daemons,
    batchSize: config.batchSize,
    log: (entry: MirrorLogEntry) => print({ ...entry }),
  });
  print({ level: 'info', msg: 'mirror started', daemons: config.daemons.map((d) => ({ id: d.id, baseUrl: d.baseUrl, token: Boolean(d.token) })) });

  let last = { at: Date.now(), written: 0 };
  const timer = setInterval(() => {
    const stats = m.stats();
    const now = Date.now();
    const perSecond = ((stats.eventsWritten - last.written) * 1000) / Math.max(1, now - last.at);
    last = { at: now, written: stats.eventsWritten };
    print({ level: 'info', msg: 'stats', eventsPerSecond: Math.round(perSecond), ...stats });
  }, config.statsIntervalMs);

  const signal = await stopped;
  clearInterval(timer);
  print({ level: 'info', msg: `${signal}: stopping` });
  await m.stop();
  print({ level: 'info', msg: 'mirror stopped', ...m.stats() });
  return 0;
}
