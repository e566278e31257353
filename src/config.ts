// Flags and AGENTWIRE_* environment variables → one validated Config. Flags win over env, env over
// defaults. Every limit the daemon enforces is here, so every buffer has a documented bound. One
// table (OPTIONS) drives parsing, validation, `--help` and the redacted start-up log line.
import { BlockList, isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import { AcpAgentConfig, AcpAgentsFile, parseAcpAgentSpec } from './schema/acp-agents.js';
import { isBuiltinAgent } from './schema/agents.js';
import { BUDGET_BOUNDS } from './schema/usage.js';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const list = z.array(z.string().min(1));
/** A duration: milliseconds as a number, or a number with a unit (`500ms`, `30s`, `15m`, `12h`, `7d`). */
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const duration = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(String(v).trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `'${v}' is not a duration (a number of ms, or e.g. 30s, 15m, 12h, 7d)` });
    return z.NEVER;
  }
  return Number(match[1]) * UNITS[match[2] ?? 'ms']!;
});

// An Origin header is scheme://host[:port], nothing more: a path or trailing slash never matches.
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+$/;
const corsOrigin = z.string().refine((v) => v === '*' || (ORIGIN.test(v) && (!/^https?:/.test(v) || (URL.canParse(v) && new URL(v).origin === v))), {
  error: (issue) => `'${String(issue.input)}' is not an origin: use * or scheme://host[:port] exactly as browsers send it (lower case, no path, no trailing slash, no default port)`,
});
// A host name or IP address (no scheme, no port), *.suffix for every subdomain, or * for any.
const allowedHost = z.string().refine((v) => v === '*' || /^(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(v) || isIP(v.replace(/^\[(.*)\]$/, '$1')) !== 0, {
  error: (issue) => `'${String(issue.input)}' is not a host name or IP address (no scheme or port; *.example.com for subdomains, * for any)`,
});

/** `--acp-agent name=command args…` (src/agents/acp/configured.ts), checked at start. */
const acpAgentSpec = z.union([AcpAgentConfig, z.string()]).transform((v, ctx) => {
  const parsed = typeof v === 'string' ? parseAcpAgentSpec(v) : v;
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed });
    return z.NEVER;
  }
  return parsed;
});

interface Option<S extends z.ZodType> {
  flag: string;
  env: string;
  schema: S;
  help: string;
  /** `value` takes an argument; `list` is repeatable (env: comma-separated); `switch` takes none. */
  kind?: 'value' | 'list' | 'switch';
  /** What separates a list's entries in its environment variable (default: commas). */
  envSeparator?: RegExp;
  secret?: boolean;
  /** How --help shows the default, where the parsed value (a duration in ms) would read badly. */
  shownDefault?: string;
}

const opt = <S extends z.ZodType>(o: Option<S>) => o;

export const OPTIONS = {
  host: opt({ flag: 'host', env: 'HOST', schema: z.string().min(1).default('127.0.0.1'), help: 'listen address' }),
  port: opt({ flag: 'port', env: 'PORT', schema: int(0, 65535).default(2468), help: 'listen port (0: any free port)' }),
  token: opt({ flag: 'token', env: 'TOKEN', schema: z.string().min(16, 'use at least 16 characters').optional(), help: 'bearer token (at least 16 characters) that every route but /v1/health requires; without it, --token-file or --no-token the daemon makes one (<data-dir>/token, `agentwire token` prints it). On the command line every local process can read it: prefer --token-file', secret: true }),
  noToken: opt({ flag: 'no-token', env: 'NO_TOKEN', schema: z.coerce.boolean().default(false), kind: 'switch', help: 'run without a token: every local process, the agents included, and any page that reaches the daemon can drive it (you take responsibility); beside a token it changes nothing' }),
  allowUnauthenticatedNetwork: opt({ flag: 'allow-unauthenticated-network', env: 'ALLOW_UNAUTHENTICATED_NETWORK', schema: z.coerce.boolean().default(false), kind: 'switch', help: 'let --no-token stand with a --host that is not loopback: every machine that reaches the address can drive the daemon (without it, that combination is refused)' }),
  allowedHosts: opt({ flag: 'allowed-host', env: 'ALLOWED_HOST', schema: z.array(allowedHost).default([]), kind: 'list', help: 'a Host name the daemon answers to besides loopback names and --host (repeatable; *.example.com for subdomains; * turns the DNS-rebinding check off)' }),
  // The agent/daemon boundary (docs/security.md): a token no agent can read, agents as another user.
  tokenFile: opt({ flag: 'token-file', env: 'TOKEN_FILE', schema: z.string().min(1).optional(), help: 'read the token from this file (trimmed; not with --token), so it is in no environment or command line' }),
  agentUser: opt({ flag: 'agent-user', env: 'AGENT_USER', schema: z.string().min(1).optional(), help: 'run agents and their tools as this OS user (name or uid); needs root (or CAP_SETUID, CAP_SETGID, CAP_KILL, CAP_CHOWN) and a token' }),
  corsOrigins: opt({ flag: 'cors-origin', env: 'CORS_ORIGIN', schema: z.array(corsOrigin).default([]), kind: 'list', help: 'browser origin allowed to call the daemon at all, with CORS (repeatable, or * for any); without it pages on other origins get 403' }),
  corsMethods: opt({ flag: 'cors-methods', env: 'CORS_METHODS', schema: list.default(['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS']), kind: 'list', help: 'methods allowed cross-origin' }),
  corsHeaders: opt({ flag: 'cors-headers', env: 'CORS_HEADERS', schema: list.default(['Authorization', 'Content-Type', 'Last-Event-ID', 'Accept']), kind: 'list', help: 'request headers allowed cross-origin' }),
  logLevel: opt({ flag: 'log-level', env: 'LOG_LEVEL', schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'), help: 'pino log level (also LOG_LEVEL); debug adds one line per HTTP request' }),
  // docs/logging.md: what a person on a terminal reads, and what a log collector parses.
  logFormat: opt({ flag: 'log-format', env: 'LOG_FORMAT', schema: z.enum(['auto', 'pretty', 'json']).default('auto'), help: 'pretty: one readable line per event; json: pino JSON lines; auto: pretty when stdout is a terminal, json otherwise' }),
  maxSessions: opt({ flag: 'max-sessions', env: 'MAX_SESSIONS', schema: int(1).default(100), help: 'sessions held at once' }),
  endedSessionTtlMs: opt({ flag: 'ended-session-ttl-ms', env: 'ENDED_SESSION_TTL_MS', schema: int(0).default(3_600_000), help: 'forget ended sessions after this long (0: keep until the limit needs room)' }),
  maxEventsPerSession: opt({ flag: 'max-events-per-session', env: 'MAX_EVENTS_PER_SESSION', schema: int(10).default(100_000), help: 'events kept per session (oldest evicted)' }),
  maxBytesPerSession: opt({ flag: 'max-bytes-per-session', env: 'MAX_BYTES_PER_SESSION', schema: int(1024).default(64 * 1024 * 1024), help: 'JSON bytes of events and raw payloads kept per session' }),
  // Bounded connections (src/http/connections.ts): a request arrives whole in time, sockets are counted.
  requestTimeoutMs: opt({ flag: 'request-timeout', env: 'REQUEST_TIMEOUT', schema: duration.pipe(z.number().min(100, 'use at least 100ms')).default(30_000), shownDefault: '30s', help: 'a request (headers and body) must arrive whole within this, or it is answered 408 and its connection closed; responses, streams included, are not bounded by it (e.g. 30s, 2m)' }),
  maxConnections: opt({ flag: 'max-connections', env: 'MAX_CONNECTIONS', schema: int(1).default(10_000), help: 'connections served at once; one more is answered 503 and closed (keep it under the open-file limit, ulimit -n)' }),
  bodyLimitBytes: opt({ flag: 'body-limit', env: 'BODY_LIMIT', schema: int(1024).default(1024 * 1024), help: 'request body size limit in bytes' }),
  maxSubscribersPerSession: opt({ flag: 'max-subscribers', env: 'MAX_SUBSCRIBERS', schema: int(1).default(64), help: 'concurrent event streams per session' }),
  subscriberMaxLag: opt({ flag: 'subscriber-max-lag', env: 'SUBSCRIBER_MAX_LAG', schema: int(1).default(10_000), help: 'events a stream may fall behind before it is closed' }),
  feedMaxLag: opt({ flag: 'feed-max-lag', env: 'FEED_MAX_LAG', schema: int(1).default(100_000), help: 'entries a reader of the daemon-wide feed (GET /v1/events/sse) may fall behind before it is closed; one reader carries every session' }),
  subscriberLagGraceMs: opt({ flag: 'subscriber-lag-grace-ms', env: 'SUBSCRIBER_LAG_GRACE_MS', schema: int(0).default(1_000), help: 'how long a stream may stay over that lag with a full socket' }),
  sseKeepAliveMs: opt({ flag: 'sse-keepalive-ms', env: 'SSE_KEEPALIVE_MS', schema: int(10).default(15_000), help: 'interval of SSE keep-alive comments' }),
  sseRetryMs: opt({ flag: 'sse-retry-ms', env: 'SSE_RETRY_MS', schema: int(0).default(2_000), help: 'retry: hint sent to EventSource clients' }),
  maxLineChars: opt({ flag: 'max-line-chars', env: 'MAX_LINE_CHARS', schema: int(1024).default(16 * 1024 * 1024), help: 'longest native stdout line kept whole' }),
  stderrHeadLines: opt({ flag: 'stderr-head-lines', env: 'STDERR_HEAD_LINES', schema: int(0, 10_000).default(20), help: 'first stderr lines kept per agent process' }),
  stderrTailLines: opt({ flag: 'stderr-tail-lines', env: 'STDERR_TAIL_LINES', schema: int(0, 10_000).default(50), help: 'last stderr lines kept per agent process' }),
  killGraceMs: opt({ flag: 'kill-grace-ms', env: 'KILL_GRACE_MS', schema: int(0).default(3_000), help: 'SIGTERM to SIGKILL grace for an agent process group' }),
  startTimeoutMs: opt({ flag: 'start-timeout-ms', env: 'START_TIMEOUT_MS', schema: int(100).default(30_000), help: 'how long an agent may take to be ready' }),
  permissionPolicy: opt({ flag: 'permission-policy', env: 'PERMISSION_POLICY', schema: z.enum(['ask', 'allow', 'deny']).default('ask'), help: 'default answer to permission requests: ask the client, allow, or deny' }),
  hitlTimeoutMs: opt({ flag: 'hitl-timeout-ms', env: 'HITL_TIMEOUT_MS', schema: int(0).default(0), help: 'deny/reject a pending permission or question after this long (0: wait)' }),
  // Budgets (docs/budgets.md): the default for sessions created without one.
  budgetMaxTokens: opt({ flag: 'budget-max-tokens', env: 'BUDGET_MAX_TOKENS', schema: int(BUDGET_BOUNDS.max_tokens.min, BUDGET_BOUNDS.max_tokens.max).optional(), help: 'default budget: input plus output tokens a session may use before it pauses and asks' }),
  budgetMaxCostUsd: opt({ flag: 'budget-max-cost-usd', env: 'BUDGET_MAX_COST_USD', schema: z.coerce.number().min(BUDGET_BOUNDS.max_cost_usd.min).max(BUDGET_BOUNDS.max_cost_usd.max).optional(), help: 'default budget: USD a session may spend (where a cost is known) before it pauses and asks' }),
  budgetMaxTurns: opt({ flag: 'budget-max-turns', env: 'BUDGET_MAX_TURNS', schema: int(BUDGET_BOUNDS.max_turns.min, BUDGET_BOUNDS.max_turns.max).optional(), help: 'default budget: turns a session may start before it pauses and asks' }),
  shutdownTimeoutMs: opt({ flag: 'shutdown-timeout-ms', env: 'SHUTDOWN_TIMEOUT_MS', schema: int(100).default(10_000), help: 'longest graceful shutdown before the daemon exits anyway' }),
  noAutoInstall: opt({ flag: 'no-auto-install', env: 'NO_AUTO_INSTALL', schema: z.coerce.boolean().default(false), kind: 'switch', help: 'do not install a missing agent CLI from npm when a session asks for it' }),
  agentQueryTimeoutMs: opt({ flag: 'agent-query-timeout-ms', env: 'AGENT_QUERY_TIMEOUT_MS', schema: int(100).default(15_000), help: 'how long asking an agent for its models or modes may take before the built-in list answers' }),
  // Persistence (docs/persistence.md). dataDir has no schema default: loadConfig fills in the XDG
  // default, so the CLI persists by default while buildApp({}) in a test stays in memory.
  dataDir: opt({ flag: 'data-dir', env: 'DATA_DIR', schema: z.string().min(1).optional(), help: 'where the daemon keeps its event store and agent CLIs (default: $XDG_DATA_HOME/agentwire or ~/.local/share/agentwire)' }),
  persist: opt({ flag: 'persist', env: 'PERSIST', schema: z.enum(['on', 'off']).default('on'), help: 'keep sessions and events on disk so they survive a restart (off: memory only)' }),
  fsync: opt({ flag: 'fsync', env: 'FSYNC', schema: z.enum(['normal', 'always']).default('normal'), help: 'normal: a power loss may lose the last commits; always: fsync every commit (slower)' }),
  retentionMs: opt({ flag: 'retention', env: 'RETENTION', schema: duration.default(7 * 24 * 3_600_000), shownDefault: '7d', help: 'drop ended sessions from the store this long after they ended (e.g. 7d, 12h, 30m)' }),
  deletedRetentionMs: opt({ flag: 'deleted-retention', env: 'DELETED_RETENTION', schema: duration.default(10 * 60_000), shownDefault: '10m', help: "keep a DELETEd session's events readable through the feed (GET /v1/events) this long (0: drop them at once)" }),
  maxStoreMb: opt({ flag: 'max-store-mb', env: 'MAX_STORE_MB', schema: int(1).default(10_240), help: 'keep the store under this size by dropping the oldest ended sessions' }),
  // Warm pool (docs/performance.md): spare agents started ahead of sessions; `agent=n`, validated
  // against the agents here, against what each driver can pool in buildApp.
  warm: opt({ flag: 'warm', env: 'WARM', schema: z.array(z.string().regex(/^(claude|codex|opencode|amp|mock)=\d{1,3}$/, 'use <agent>=<n>, e.g. claude=2')).default([]), kind: 'list', help: 'keep n spare agent processes started with the daemon defaults, taken by new sessions that need nothing else (repeatable: claude=2)' }),
  agentsDir: opt({ flag: 'agents-dir', env: 'AGENTS_DIR', schema: z.string().min(1).optional(), help: 'where agent CLIs are installed and looked up (default: <data-dir>/agents)' }),
  claudeBin: opt({ flag: 'claude-bin', env: 'CLAUDE_BIN', schema: z.string().min(1).optional(), help: 'the claude executable to use (skips the agents dir and PATH)' }),
  codexBin: opt({ flag: 'codex-bin', env: 'CODEX_BIN', schema: z.string().min(1).optional(), help: 'the codex executable to use (skips the agents dir and PATH)' }),
  // docs/opencode.md, "Shared servers": sessions with the same executable and environment (config
  // included) share one `opencode serve`, whatever their cwd; per-session gives each its own process.
  opencodeServers: opt({ flag: 'opencode-servers', env: 'OPENCODE_SERVERS', schema: z.enum(['shared', 'per-session']).default('shared'), help: 'shared: OpenCode sessions with the same env and config share one `opencode serve`, whatever their cwd (less memory, faster starts; a crash ends all of them); per-session: one server each' }),
  opencodeBin: opt({ flag: 'opencode-bin', env: 'OPENCODE_BIN', schema: z.string().min(1).optional(), help: 'the opencode executable to use (skips the agents dir and PATH)' }),
  // Any ACP agent by configuration (docs/acp.md): its entries join the built-in agents.
  acpAgents: opt({ flag: 'acp-agent', env: 'ACP_AGENT', schema: z.array(acpAgentSpec).default([]), kind: 'list', envSeparator: /[;\n]/, help: "an ACP agent: 'name=command args…' (repeatable; in the variable, entries separated by ;)" }),
  acpAgentsFile: opt({ flag: 'acp-agents-file', env: 'ACP_AGENTS_FILE', schema: z.string().min(1).optional(), help: 'a JSON file of ACP agents: {"agents": {"<name>": {"command", "args", "env", "package"}}}' }),
  // ACP clients of the daemon (docs/acp-server.md, "Session lifetime"): sessions they made end.
  acpIdleTtlMs: opt({ flag: 'acp-idle-ttl', env: 'ACP_IDLE_TTL', schema: duration.default(3_600_000), shownDefault: '1h', help: 'end a session made over ACP (GET /v1/acp, agentwire acp) that has had no turn and no event this long, kept or not (e.g. 30m, 12h; 0: never)' }),
  acpReconnectGraceMs: opt({ flag: 'acp-reconnect-grace', env: 'ACP_RECONNECT_GRACE', schema: duration.default(60_000), shownDefault: '60s', help: 'how long the sessions of an ACP connection cut without a close frame wait for the client to reconnect and load them before they end' }),
  ampBin: opt({ flag: 'amp-bin', env: 'AMP_BIN', schema: z.string().min(1).optional(), help: 'the amp executable to use (skips the agents dir and PATH)' }),
  geminiBin: opt({ flag: 'gemini-bin', env: 'GEMINI_BIN', schema: z.string().min(1).optional(), help: 'the gemini executable to use (skips the agents dir and PATH)' }),
  qwenBin: opt({ flag: 'qwen-bin', env: 'QWEN_BIN', schema: z.string().min(1).optional(), help: 'the qwen executable to use (skips the agents dir and PATH)' }),
};

type Options = typeof OPTIONS;
export type ConfigKey = keyof Options;

export const Config = z.object(
  Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.schema])) as { [K in ConfigKey]: Options[K]['schema'] },
);
export type Config = z.infer<typeof Config>;

/**
 * The data dir when none is given (src/store/data-dir.ts says what is in it):
 * $AGENTWIRE_DATA_DIR, else $XDG_DATA_HOME/agentwire, else ~/.local/share/agentwire.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTWIRE_DATA_DIR) return resolve(env.AGENTWIRE_DATA_DIR);
  const xdg = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith('/') ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(xdg, 'agentwire');
}

/** Parses `--name value` / `--name=value` flags over AGENTWIRE_* env over defaults. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, unknown> = {};
  const entries = Object.entries(OPTIONS) as [ConfigKey, Option<z.ZodType>][];
  for (const [key, o] of entries) {
    // LOG_LEVEL is the conventional name; AGENTWIRE_LOG_LEVEL wins when both are set.
    const value = env[`AGENTWIRE_${o.env}`] ?? (key === 'logLevel' ? env.LOG_LEVEL : undefined);
    if (value === undefined || value === '') continue;
    input[key] = o.kind === 'list' ? value.split(o.envSeparator ?? ',').map((s) => s.trim()).filter(Boolean) : o.kind === 'switch' ? !['0', 'false', 'no'].includes(value) : value;
  }
  const byFlag = new Map(entries.map(([key, o]) => [o.flag, key]));
  const lists = new Map<ConfigKey, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument '${arg}'`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const key = byFlag.get(name);
    if (!key) throw new ConfigError(`unknown flag --${name} (see --help)`);
    const kind = OPTIONS[key].kind ?? 'value';
    if (kind === 'switch') {
      input[key] = inline === undefined ? true : !['0', 'false', 'no'].includes(inline);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`flag --${name} needs a value`);
    if (kind === 'list') lists.set(key, [...(lists.get(key) ?? []), value]);
    else input[key] = value;
  }
  for (const [key, values] of lists) input[key] = values; // repeated flags replace the env list
  const parsed = Config.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const o = OPTIONS[issue.path[0] as ConfigKey];
    throw new ConfigError(`--${o?.flag ?? issue.path.join('.')} (AGENTWIRE_${o?.env ?? '?'}): ${issue.message}`);
  }
  return checkAcpAgents(checkBoundary({ ...parsed.data, dataDir: parsed.data.dataDir ?? defaultDataDir(env) }));
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether listening on `host` reaches this machine only: localhost names, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 6 ? 'ipv6' : 'ipv4');
}

/** --acp-agents-file's agents join --acp-agent's; a name is one agent (never a built-in's). */
function checkAcpAgents(config: Config): Config {
  let agents = config.acpAgents;
  if (config.acpAgentsFile !== undefined) {
    const where = `--acp-agents-file ${config.acpAgentsFile}`;
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(config.acpAgentsFile, 'utf8'));
    } catch (err) {
      throw new ConfigError(`${where}: cannot read it as JSON (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const file = AcpAgentsFile.safeParse(json);
    if (!file.success) {
      const issue = file.error.issues[0]!;
      throw new ConfigError(`${where}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    for (const [name, entry] of Object.entries(file.data.agents)) {
      const agent = AcpAgentConfig.safeParse({ ...entry, name });
      if (!agent.success) throw new ConfigError(`${where}: agents.${name}: ${agent.error.issues[0]!.message}`);
      agents = [...agents, agent.data];
    }
  }
  const seen = new Set<string>();
  for (const agent of agents) {
    if (isBuiltinAgent(agent.name)) throw new ConfigError(`--acp-agent ${agent.name}: '${agent.name}' is a built-in agent; choose another name`);
    if (seen.has(agent.name)) throw new ConfigError(`--acp-agent ${agent.name}: the name is given twice`);
    seen.add(agent.name);
  }
  return { ...config, acpAgents: agents };
}

/** --token-file: the token is read here, so that it lives in the daemon's memory only. Without any
 *  token the CLI makes one (src/daemon-token.ts), so an --agent-user or a non-loopback --host is
 *  never open unless --no-token says so. */
function checkBoundary(config: Config): Config {
  if (config.noToken && config.token === undefined && config.tokenFile === undefined && !isLoopbackHost(config.host) && !config.allowUnauthenticatedNetwork) {
    throw new ConfigError(`--no-token with --host ${config.host}: every machine that reaches that address could drive this daemon (and run commands through its agents) with no token; drop --no-token (the daemon then makes a token), listen on 127.0.0.1, or add --allow-unauthenticated-network if that is what you want`);
  }
  if (config.tokenFile === undefined) return config;
  if (config.token !== undefined) throw new ConfigError('--token and --token-file (AGENTWIRE_TOKEN, AGENTWIRE_TOKEN_FILE) are both set; use one');
  let text: string;
  try {
    text = readFileSync(config.tokenFile, 'utf8');
  } catch (err) {
    throw new ConfigError(`--token-file ${config.tokenFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); write the token there (openssl rand -hex 24 > FILE; chmod 600 FILE) or point --token-file at the file that has it`);
  }
  const token = OPTIONS.token.schema.safeParse(text.trim());
  if (!token.success) throw new ConfigError(`--token-file ${config.tokenFile}: the token in it is refused: ${token.error.issues[0]?.message}`);
  return { ...config, token: token.data };
}

/** --warm's `agent=n` list as spares per agent (the last of an agent wins). */
export function warmSizes(list: readonly string[]): Record<string, number> {
  return Object.fromEntries(list.map((entry) => entry.split('=') as [string, string]).map(([agent, n]) => [agent, Number(n)]));
}

/** The effective config for the start-up log: secrets replaced. */
export function redacted(config: Config): Record<string, unknown> {
  const shown = Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, (OPTIONS[k as ConfigKey] as Option<z.ZodType>).secret && v ? '[redacted]' : v]),
  );
  // A configured agent's env and arguments may carry its keys (`--api-key sk-…`): names and the
  // command only, never a value.
  const acpAgents = config.acpAgents.map((a) => ({
    ...a,
    ...(a.args ? { args: a.args.map(() => '[redacted]') } : {}),
    ...(a.env ? { env: Object.fromEntries(Object.keys(a.env).map((n) => [n, '[redacted]'])) } : {}),
  }));
  return { ...shown, acpAgents };
}

export function flagHelp(): string {
  const rows = (Object.entries(OPTIONS) as [ConfigKey, Option<z.ZodType>][]).map(([, o]) => {
    const fallback = o.schema.safeParse(undefined);
    const value = o.shownDefault ?? (fallback.success && fallback.data !== undefined ? (Array.isArray(fallback.data) ? fallback.data.join(',') || 'none' : String(fallback.data)) : undefined);
    const shown = value === undefined ? '' : ` (default: ${value})`;
    const arg = o.kind === 'switch' ? '' : o.kind === 'list' ? ' <v>…' : ' <v>';
    return `  --${o.flag}${arg}`.padEnd(34) + `${o.help}${shown}\n${''.padEnd(34)}env AGENTWIRE_${o.env}`;
  });
  return rows.join('\n');
}
