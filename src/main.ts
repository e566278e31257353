// `agentwire server`: parse config, build the app, listen, and shut down gracefully (every agent
// process group is terminated and every stream told before the daemon exits). Nothing else.
import { acpCommand } from './acp-command.js';
import { buildApp } from './app.js';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { ConfigError } from './config-error.js';
import { untrustedWayTo } from './util/trusted-path.js';
import { defaultDataDir, flagHelp, loadConfig, redacted, type Config } from './config.js';
import { agentwireCommand, daemonToken, TOKEN_FILE, tokenAnnouncement, tokenHelp, type DaemonToken, type TokenHint } from './daemon-token.js';
import { installCommand } from './install-command.js';
import { logDestination } from './log-format.js';
import { LogMessage } from './logging.js';
import { startupWarnings } from './startup-warnings.js';
import { reportStartupFailure } from './startup-failure.js';
import { STORE_FILES } from './store/data-dir.js';
import { watchNpmLauncher } from './npm-launcher.js';
import { logPrepared, prepareDataDir, type PreparedDir } from './store/private-dir.js';
import { tokenCommand } from './token-command.js';
import { VERSION } from './version.js';

const usage = () => `agentwire ${VERSION}: coding-agent CLIs behind one universal event API

Usage: agentwire server [flags]
       agentwire install-agent <agent|all> [--version x.y.z] [--reinstall] [--agents-dir DIR]
       agentwire token [--data-dir DIR]      print the token the daemon keeps in its data dir
       agentwire acp [--url URL] [--token-file FILE] [--agent NAME] [--keep-sessions] [--wait DURATION]
                                             an ACP agent on stdio for editors (docs/acp-server.md)

Flags (each also settable as an environment variable; flags win):
${flagHelp()}
`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === 'version') return void console.log(VERSION);
  if (command === 'install-agent') {
    process.exitCode = await installCommand(rest);
    return;
  }
  if (command === 'token') {
    process.exitCode = tokenCommand(rest);
    return;
  }
  if (command === 'acp') {
    process.exitCode = await acpCommand(rest);
    return;
  }
  const wantsHelp = command === undefined || command === 'help' || command === '--help' || command === '-h';
  if (wantsHelp || (command === 'server' && (rest.includes('--help') || rest.includes('-h')))) {
    console.log(usage());
    return;
  }
  if (command !== 'server') {
    // A typo (`serve`) or flags without the command must not look like a help request: say what
    // was wrong, on stderr, with a usage-error exit code, so a script or a supervisor notices.
    const hint = command.startsWith('-') ? ' (the command comes first: agentwire server [flags])' : command.startsWith('serv') ? ' (did you mean "server"?)' : '';
    console.error(`agentwire: unknown command "${command}"${hint}\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  let config;
  let app;
  let token: DaemonToken;
  let prepared: PreparedDir | undefined;
  try {
    config = loadConfig(rest);
    checkTempDir();
    // The data dir is made private before anything is written to it: the token file first.
    if (config.persist === 'on' && config.dataDir) prepared = prepareDataDir(config.dataDir, [...STORE_FILES, TOKEN_FILE]);
    // Without --token, --token-file or --no-token the daemon makes its own (src/daemon-token.ts).
    token = daemonToken(config, rest);
    config = { ...config, token: token.token };
    // buildApp refuses an --agent-user it cannot switch to (src/process/agent-user.ts).
    // JSON lines on stdout, or one readable line per event when a person watches (src/log-format.ts).
    const help = tokenHelp(token, tokenHint(config));
    ({ app } = await buildApp({ config, logger: true, logStream: logDestination(config.logFormat, config.logLevel), ...(help ? { tokenHelp: help } : {}) }));
  } catch (err) {
    // One line naming the cause and the fix, exit 2 or 1 (src/startup-failure.ts).
    reportStartupFailure(err, config);
    return;
  }
  app.log.debug({ config: redacted(config), version: VERSION, token: token.source }, LogMessage.configuration);
  if (prepared) logPrepared(app.log, prepared);
  for (const warning of startupWarnings(config, token, { uid: process.getuid?.() })) app.log.warn(warning);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: ending streams and agent sessions');
    // A shutdown that hangs (an agent that ignores SIGKILL in D state, say) still ends.
    setTimeout(() => {
      app.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    await app.close();
    process.exit(0);
  };
  // SIGHUP too: a closed terminal would otherwise kill the daemon without ending its agents.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
  // Started by `npx agentwire`: npm exits on SIGTERM without passing it on (src/npm-launcher.ts).
  watchNpmLauncher(() => void stop('the npx (npm exec) that started the daemon exited'));
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // A port in use, say: end what buildApp started (warm spares, the store's lock) and say why.
    await app.close().catch(() => {});
    reportStartupFailure(err, config);
    return;
  }
  const url = baseUrl(config.host, (app.server.address() as AddressInfo).port);
  // The start line: what a person needs to get going; the whole configuration is at debug.
  const dataDir = config.persist === 'on' ? (config.dataDir ?? null) : null;
  app.log.info({ version: VERSION, url, inspector: `${url}/ui/`, dataDir, token: token.source, ...(token.file ? { tokenFile: token.file } : {}) }, LogMessage.listening);
  const announcement = tokenAnnouncement(token, url, tokenHint(config));
  if (announcement) console.error(announcement);
}

/**
 * Agents get files and directories the daemon makes under the temp dir (settings, throwaway
 * homes, Amp's permission socket): made fresh (mkdtemp), but a temp dir another user owns, or may
 * write without the sticky bit, lets that user swap them for their own (docs/security.md).
 */
function checkTempDir(): void {
  const way = untrustedWayTo(tmpdir());
  if (way) throw new ConfigError(`the temp dir ${tmpdir()} (TMPDIR): ${way.path} is ${way.why}, so another user could replace what the daemon makes there for its agents; unset TMPDIR or point it at a directory that belongs to you or root`);
}

/** The command that prints the token, as the shell that started the daemon runs it. */
function tokenHint(config: Config): TokenHint {
  const command = agentwireCommand(process.argv[1] ?? '', process.cwd(), process.env);
  return config.dataDir && config.dataDir !== defaultDataDir(process.env) ? { command, dataDir: config.dataDir } : { command };
}

/** The URL a person on this machine opens: a wildcard listen address is reached on loopback. */
function baseUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}
