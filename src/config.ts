// Flags and AGENTWIRE_* environment variables → one validated Config. Flags win over env, env over
// defaults. Every limit the daemon enforces is here, so every buffer has a documented bound.
import { z } from 'zod';

const int = (min: number) => z.coerce.number().int().min(min);

export const Config = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: int(0).max(65535).default(2468),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  maxSessions: int(1).default(100),
  maxEventsPerSession: int(10).default(100_000),
  maxBytesPerSession: int(1024).default(64 * 1024 * 1024),
  bodyLimitBytes: int(1024).default(1024 * 1024),
  maxSubscribersPerSession: int(1).default(64),
  /** Events a subscriber may fall behind the log before it is closed (it resumes by id). */
  subscriberMaxLag: int(1).default(10_000),
  /** How long a subscriber may stay over the lag limit with a full socket before it is closed. */
  subscriberLagGraceMs: int(0).default(1_000),
  sseKeepAliveMs: int(10).default(15_000),
  sseRetryMs: int(0).default(2_000),
  maxLineChars: int(1024).default(16 * 1024 * 1024),
  killGraceMs: int(0).default(3_000),
  startTimeoutMs: int(100).default(30_000),
});
export type Config = z.infer<typeof Config>;

/** Flag name (without --) and env suffix for each key. */
const SOURCES: Record<keyof Config, [flag: string, env: string]> = {
  host: ['host', 'HOST'],
  port: ['port', 'PORT'],
  logLevel: ['log-level', 'LOG_LEVEL'],
  maxSessions: ['max-sessions', 'MAX_SESSIONS'],
  maxEventsPerSession: ['max-events-per-session', 'MAX_EVENTS_PER_SESSION'],
  maxBytesPerSession: ['max-bytes-per-session', 'MAX_BYTES_PER_SESSION'],
  bodyLimitBytes: ['body-limit', 'BODY_LIMIT'],
  maxSubscribersPerSession: ['max-subscribers', 'MAX_SUBSCRIBERS'],
  subscriberMaxLag: ['subscriber-max-lag', 'SUBSCRIBER_MAX_LAG'],
  subscriberLagGraceMs: ['subscriber-lag-grace-ms', 'SUBSCRIBER_LAG_GRACE_MS'],
  sseKeepAliveMs: ['sse-keepalive-ms', 'SSE_KEEPALIVE_MS'],
  sseRetryMs: ['sse-retry-ms', 'SSE_RETRY_MS'],
  maxLineChars: ['max-line-chars', 'MAX_LINE_CHARS'],
  killGraceMs: ['kill-grace-ms', 'KILL_GRACE_MS'],
  startTimeoutMs: ['start-timeout-ms', 'START_TIMEOUT_MS'],
};

export class ConfigError extends Error {}

/** Parses `--name value` / `--name=value` flags over AGENTWIRE_* env over defaults. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const [key, [, suffix]] of Object.entries(SOURCES)) {
    const value = env[`AGENTWIRE_${suffix}`];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const byFlag = new Map(Object.entries(SOURCES).map(([key, [flag]]) => [flag, key]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument '${arg}'`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const key = byFlag.get(name);
    if (!key) throw new ConfigError(`unknown flag --${name}`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`flag --${name} needs a value`);
    input[key] = value;
  }
  const parsed = Config.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [flag] = SOURCES[issue.path[0] as keyof Config] ?? ['?'];
    throw new ConfigError(`--${flag}: ${issue.message}`);
  }
  return parsed.data;
}

export const FLAG_HELP = Object.entries(SOURCES)
  .map(([key, [flag, env]]) => `  --${flag} <value>   (AGENTWIRE_${env}; default ${String(Config.shape[key as keyof Config].parse(undefined))})`)
  .join('\n');
