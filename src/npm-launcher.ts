// A daemon started by `npx agentwire` (npm exec) ends when that npm process ends. npm runs the bin
// through `sh -c`, and on a SIGTERM of its own it exits without passing the signal on: the daemon
// would be left running, orphaned, holding its port and its agents, while whoever stopped `npx`
// believes it stopped. (Ctrl-C in a terminal reaches the whole process group, so it was never the
// problem.) Only for that launch: a daemon started any other way, or one whose parent exits on
// purpose (`nohup … &`), is never watched. Linux only: the ancestry is read from /proc.
import { readFileSync } from 'node:fs';

const CHECK_MS = 1000;

/**
 * Watches the npm process that launched this daemon, when one did; calls `gone` once when it is no
 * longer among the daemon's ancestors. Returns a function that stops watching.
 */
export function watchNpmLauncher(gone: () => void, env: NodeJS.ProcessEnv = process.env): () => void {
  const launcher = npmLauncher(env);
  if (launcher === undefined) return () => {};
  const timer = setInterval(() => {
    if (ancestors(process.pid).includes(launcher)) return;
    clearInterval(timer);
    gone();
  }, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The pid of the `npm exec` that ran this very command (npm says so in the environment it gives
 *  the command), looked for among the two nearest ancestors (npm, or npm's `sh -c`). */
export function npmLauncher(env: NodeJS.ProcessEnv, self = process.pid): number | undefined {
  if (process.platform !== 'linux' || env.npm_command !== 'exec' || env.npm_lifecycle_script?.replace(/'/g, '') !== 'agentwire') return undefined;
  return ancestors(self)
    .slice(0, 2)
    .find((pid) => /^npm\b|\bnpm-cli\.js\b|\bnpx-cli\.js\b/.test(commandLine(pid)));
}

/** Parent, grandparent, … up to (not including) pid 1; [] where /proc cannot say. */
export function ancestors(pid: number): number[] {
  const chain: number[] = [];
  for (let current = parentOf(pid); current !== undefined && current > 1 && chain.length < 16; current = parentOf(current)) chain.push(current);
  return chain;
}

function parentOf(pid: number): number | undefined {
  try {
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}
