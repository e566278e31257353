// One `opencode serve` process: spawned in its own process group on a free 127.0.0.1 port, ready
// once it prints "opencode server listening on …". It must not be called earlier: the socket is
// bound before the server answers, and a connection made then is accepted but never answered
// (test/agents/opencode/fixtures/recorded/README.md). `--port 0` means "4096 first", so the port is ours.
import { createServer } from 'node:net';
import { ChildProcess } from '../../process/spawn.js';
import { processSpawnOptions, type ProcessLimits } from '../process-options.js';
import { awaitReady } from '../readiness.js';

const LISTENING = /opencode server listening on (http:\/\/\S+)/;

/** The environment every server gets on top of the session's (docs/opencode.md says why). */
export const SERVER_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_AUTOUPDATE: '1', // never replaces the pinned binary behind the daemon's back
  OPENCODE_DISABLE_SHARE: '1', // sessions are never uploaded
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1', // no web app: unknown routes are not answered with HTML
};

export interface RunningServer {
  proc: ChildProcess;
  url: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Spawns the server and waits for its "listening" line; kills it and throws when it does not come. */
export async function startServer(
  executable: string,
  cwd: string,
  env: Record<string, string>,
  limits: ProcessLimits,
  logger: { debug(obj: object, msg: string): void },
): Promise<RunningServer> {
  const port = await freePort();
  let announce: ((url: string) => void) | undefined;
  const announced = new Promise<string>((resolve) => (announce = resolve));
  const proc = await ChildProcess.start(
    { command: executable, args: ['serve', '--hostname', '127.0.0.1', '--port', String(port)], cwd, env: { ...env, ...SERVER_ENV }, ...processSpawnOptions(limits, logger) },
    (line) => {
      const match = LISTENING.exec(line.text);
      if (match?.[1]) announce?.(match[1]);
      else logger.debug({ stdout: line.text }, 'opencode stdout');
    },
  );
  const outcome = await awaitReady(proc, announced, limits.startTimeoutMs);
  if (outcome.ok) {
    if (outcome.value === `http://127.0.0.1:${port}`) return { proc, url: outcome.value };
    await proc.kill();
    throw new Error(`it listens on ${outcome.value}, not on port ${port}`);
  }
  const { exit } = outcome;
  const stderr = exit.stderr.tail || exit.stderr.head;
  const why = outcome.reason === 'timeout' ? `did not listen within ${limits.startTimeoutMs} ms` : `exited with ${exit.signal ?? `code ${exit.exitCode}`} before it listened`;
  throw new Error(`${why}${stderr ? `; stderr: ${stderr}` : ''}`);
}
