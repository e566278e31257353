// `agentwire server`: parse config, build the app, listen, and shut down gracefully (every agent
// process group is terminated before the daemon exits). Nothing else.
import { buildApp } from './app.js';
import { ConfigError, FLAG_HELP, loadConfig } from './config.js';
import { VERSION } from './version.js';

const USAGE = `agentwire ${VERSION}

Usage: agentwire server [flags]

Flags (each also settable as an environment variable):
${FLAG_HELP}
`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === 'version') return void console.log(VERSION);
  if (command !== 'server' || rest.includes('--help') || rest.includes('-h')) {
    console.log(USAGE);
    process.exitCode = command === undefined || command === 'help' || command === '--help' || rest.includes('--help') ? 0 : 2;
    return;
  }
  let config;
  try {
    config = loadConfig(rest);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`agentwire: ${err.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const { app } = await buildApp({ config, logger: { level: config.logLevel } });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: terminating agent sessions');
    await app.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ host: config.host, port: config.port });
}
