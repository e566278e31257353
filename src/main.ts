// `agentwire server`: parse config, build the app, listen, and shut down gracefully (every agent
// process group is terminated and every stream told before the daemon exits). Nothing else.
import { buildApp } from './app.js';
import { flagHelp, loadConfig, redacted } from './config.js';
import { installCommand } from './install-command.js';
import { reportStartupFailure } from './startup-failure.js';
import { VERSION } from './version.js';

const usage = () => `agentwire ${VERSION}: coding-agent CLIs behind one universal event API

Usage: agentwire server [flags]
       agentwire install-agent <agent|all> [--version x.y.z] [--reinstall] [--agents-dir DIR]

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
  try {
    config = loadConfig(rest);
    // buildApp refuses an --agent-user it cannot switch to (src/process/agent-user.ts).
    ({ app } = await buildApp({ config, logger: true }));
  } catch (err) {
    // One line naming the cause and the fix, exit 2 or 1 (src/startup-failure.ts).
    reportStartupFailure(err, config);
    return;
  }
  app.log.info({ config: redacted(config), version: VERSION }, 'starting');
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
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    // A port in use, say: end what buildApp started (warm spares, the store's lock) and say why.
    await app.close().catch(() => {});
    reportStartupFailure(err, config);
  }
}
