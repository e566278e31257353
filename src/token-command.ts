// `agentwire token [--data-dir DIR]`: prints the token a daemon made for itself in its data dir, so a
// script or a shell can say `-H "Authorization: Bearer $(agentwire token)"` without copying it.
// It reads the same file the daemon reads (src/daemon-token.ts) and never makes one: a token that
// does not exist yet is an error, not a new secret nobody is using.
import { ConfigError } from './config-error.js';
import { defaultDataDir } from './config.js';
import { readTokenFile, tokenFilePath } from './daemon-token.js';

export const TOKEN_USAGE = `Usage: agentwire token [--data-dir DIR]

Prints the token the daemon keeps in <data-dir>/token (default: $AGENTWIRE_DATA_DIR, else
$XDG_DATA_HOME/agentwire or ~/.local/share/agentwire). The daemon writes it at its first start
without --token, --token-file or --no-token (with --persist off it keeps it in memory only).`;

export function tokenCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): number {
  let dataDir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === '--help' || flag === '-h') return (console.log(TOKEN_USAGE), 0);
    if (flag !== '--data-dir') return fail(`unknown argument ${argv[i]} (agentwire token [--data-dir DIR])`);
    dataDir = inline ?? argv[++i];
    if (!dataDir) return fail('--data-dir needs a value');
  }
  const file = tokenFilePath(dataDir ?? defaultDataDir(env));
  try {
    console.log(readTokenFile(file));
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const hint = /no token file/.test(err.message) ? ': start the daemon once without --token to make one, or use the token you gave it' : '';
    return fail(`${err.message}${hint}`);
  }
}

function fail(message: string): number {
  console.error(`agentwire: ${message}`);
  return 1;
}
