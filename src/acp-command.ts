// `agentwire acp [--url URL] [--token-file FILE] [--agent NAME] [--data-dir DIR] [--keep-sessions]
// [--wait DURATION]`: agentwire as an
// ACP agent on stdio, the process an editor launches (docs/acp-server.md). It is a bridge
// (acp-bridge.ts) to a running daemon's GET /v1/acp: the local one by default, found the way
// `agentwire token` finds its token (the data dir) and at the address it listens on by default
// ($AGENTWIRE_HOST / $AGENTWIRE_PORT, else 127.0.0.1:2468), or a remote one with --url and
// --token-file. Nothing of the protocol is here: the daemon speaks it, once, for both transports.
import { existsSync, readFileSync } from 'node:fs';
import { AcpBridge, DEFAULT_WAIT_MS } from './acp-bridge.js';
import { ConfigError } from './config-error.js';
import { defaultDataDir } from './config.js';
import { readTokenFile, tokenFilePath } from './daemon-token.js';

export const ACP_USAGE = `Usage: agentwire acp [--url URL] [--token-file FILE] [--agent NAME] [--data-dir DIR]
                     [--keep-sessions] [--wait DURATION]

An Agent Client Protocol agent on stdin/stdout (what an editor such as Zed launches), connected to
an agentwire daemon's GET /v1/acp WebSocket. It reconnects when the connection is cut and resumes
every session after the last update it passed on. When stdin closes, the sessions made through it
end (their agents stop) unless --keep-sessions.

  --url URL          the daemon (http://, https://, ws:// or wss://; default: the local one at
                     $AGENTWIRE_HOST:$AGENTWIRE_PORT, else http://127.0.0.1:2468)
  --token-file FILE  a file holding the daemon's token (default: <data-dir>/token when it exists)
  --agent NAME       the agent of new sessions (default: the daemon's, claude)
  --data-dir DIR     where the local daemon keeps its token (default: as agentwire token)
  --keep-sessions    the sessions it makes outlive it (until the daemon's --acp-idle-ttl)
  --wait DURATION    how long to wait for a daemon that does not answer, at start or after a
                     cut, before giving up (default 60s; e.g. 500ms, 30s, 5m)`;

export function acpCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> | number {
  const flags: Record<string, string> = {};
  let keepSessions = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') return (console.error(ACP_USAGE), 0);
    if (flag === '--keep-sessions' && inline === undefined) {
      keepSessions = true;
      continue;
    }
    if (!['--url', '--token-file', '--agent', '--data-dir', '--wait'].includes(flag)) return fail(`unknown argument ${argv[i]}\n\n${ACP_USAGE}`);
    const value = inline ?? argv[++i];
    if (!value) return fail(`${flag} needs a value`);
    flags[flag.slice(2)] = value;
  }
  let url: URL;
  try {
    url = acpUrl(flags.url, env);
  } catch (err) {
    return fail((err as Error).message);
  }
  if (flags.agent) url.searchParams.set('agent', flags.agent);
  const waitMs = flags.wait === undefined ? DEFAULT_WAIT_MS : durationMs(flags.wait);
  if (waitMs === undefined) return fail(`--wait ${flags.wait}: not a duration (a number of ms, or e.g. 30s, 5m)`);
  let token: string | undefined;
  try {
    token = flags['token-file'] ? readFileSync(flags['token-file'], 'utf8').trim() : localToken(flags['data-dir'], env);
  } catch (err) {
    return fail(err instanceof ConfigError ? err.message : `--token-file ${flags['token-file']}: ${(err as Error).message}`);
  }
  // stdout is the protocol's: everything said to a person goes to stderr.
  const bridge = new AcpBridge({ url: url.toString(), token, stdin: process.stdin, stdout: process.stdout, log: (line) => console.error(line), waitMs, keepSessions });
  return bridge.done.then(() => {
    process.stdin.destroy(); // a refused bridge stops reading, so the process can end
    return Number(process.exitCode ?? 0);
  });
}

/** The WebSocket URL of GET /v1/acp on the daemon `given` names, or the local one. */
export function acpUrl(given: string | undefined, env: NodeJS.ProcessEnv): URL {
  let base: URL;
  if (given) {
    try {
      base = new URL(given);
    } catch {
      throw new Error(`--url ${given}: not a URL (http://host:port, say)`);
    }
  } else {
    const host = env.AGENTWIRE_HOST && !['0.0.0.0', '::', '[::]'].includes(env.AGENTWIRE_HOST) ? env.AGENTWIRE_HOST : '127.0.0.1';
    base = new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${env.AGENTWIRE_PORT ?? '2468'}`);
  }
  const scheme = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' }[base.protocol];
  if (!scheme) throw new Error(`--url ${given}: use http://, https://, ws:// or wss://`);
  const url = base;
  url.protocol = scheme;
  if (!url.pathname.endsWith('/v1/acp')) url.pathname = `${url.pathname.replace(/\/$/, '')}/v1/acp`;
  return url;
}

/** The local daemon's token from its data dir, if it made one (a --no-token daemon needs none). */
function localToken(dataDir: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const file = tokenFilePath(dataDir ?? defaultDataDir(env));
  return existsSync(file) ? readTokenFile(file) : undefined;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `500ms`, `30s`, `5m`, `1h` or a number of ms; undefined when it is none of these. */
function durationMs(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  return match ? Number(match[1]) * UNITS[match[2] ?? 'ms']! : undefined;
}

function fail(message: string): number {
  console.error(`agentwire acp: ${message}`);
  return 2;
}
