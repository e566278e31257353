// Spawning an agent CLI (rule: Owned processes): its own process group, stdout framed into lines, stderr
// drained into a bounded head/tail, always reaped, and killed as a group (an agent's own children,
// such as the shell commands it runs, go with it).
import type { execa as Execa, ResultPromise } from 'execa';
import type { Writable } from 'node:stream';
import type { StderrOutput } from '../schema/events.js';
import { agentProcessOptions, defaultBoundary, type AgentBoundary } from './agent-env.js';
import { readLines, type Line } from './line-reader.js';
import { StderrTail } from './stderr-tail.js';

export interface SpawnOptions {
  command: string;
  args: string[];
  cwd: string;
  /** The session's env and what the driver adds; on top of what the boundary lets through. */
  env: Record<string, string | undefined>;
  /** Who the process runs as and the daemon environment it starts from (default: the daemon's
   *  environment, less its own variables, as the daemon's user). */
  boundary?: AgentBoundary | undefined;
  /** Longest stdout line kept whole (characters). */
  maxLineChars: number;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** stderr lines kept for session.ended (default 20 first, 50 last). */
  stderrHeadLines?: number;
  stderrTailLines?: number;
  /** Sees every stderr line (bounded in length) as it arrives, e.g. to log it. */
  onStderrLine?: (line: string) => void;
}

export interface ChildExit {
  exitCode: number | null;
  signal: string | null;
  stderr: StderrOutput;
  /** True when kill() was called before the process exited by itself. */
  killed: boolean;
}

/** How long stdout may stay open after the agent exited (held by something outside its group). */
const PIPE_DRAIN_MS = 1_000;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

let execaModule: Promise<typeof import('execa')> | undefined;

/** Every live process group, so a daemon that exits for any reason can still take them along. */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pid of liveGroups) signalGroup(pid, 'SIGKILL');
});

/** How many agent process groups are running in this daemon process (a metrics gauge). */
export const runningProcessCount = (): number => liveGroups.size;
/** Told of every agent process's exit once it is reaped (src/metrics/ counts exits by code). */
export const processExitObservers = new Set<(exit: ChildExit) => void>();

export class ChildProcess {
  readonly exited: Promise<ChildExit>;
  private readonly child: ResultPromise;
  private readonly stdin: Writable;
  private readonly killGraceMs: number;
  private killRequested = false;
  private done = false;

  /** Spawns the process. execa is loaded on first use: a daemon with no session never pays for it. */
  static async start(options: SpawnOptions, onLine: (line: Line) => void): Promise<ChildProcess> {
    execaModule ??= import('execa');
    return new ChildProcess((await execaModule).execa, options, onLine);
  }

  private constructor(execa: typeof Execa, options: SpawnOptions, onLine: (line: Line) => void) {
    const stderr = new StderrTail(options.stderrHeadLines, options.stderrTailLines, options.onStderrLine);
    const child = execa(options.command, options.args, {
      cwd: options.cwd,
      ...agentProcessOptions(options.boundary ?? defaultBoundary(), options.env),
      detached: true, // own process group: kill(-pid) reaches the agent's children too
      cleanup: false, // we reap groups ourselves; execa's cleanup would only kill the leader
      buffer: false,
      reject: false,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    this.child = child;
    this.killGraceMs = options.killGraceMs;
    this.stdin = child.stdin!;
    this.stdin.on('error', () => {}); // EPIPE after the child died: the exit path reports it
    const pid = child.pid;
    if (pid !== undefined) liveGroups.add(pid);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    const stdoutDone = readLines(child.stdout!, options.maxLineChars, onLine);
    // The process's own exit, not the end of its pipes: a child it left behind (an MCP server
    // sharing its stderr, a `setsid` daemon) can hold them open forever.
    const exitEvent = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.exited = (async () => {
      await Promise.race([exitEvent, child.then(() => undefined)]);
      if (pid !== undefined) {
        // The leader is gone; make sure nothing it started lingers in its group.
        signalGroup(pid, 'SIGKILL');
        liveGroups.delete(pid);
      }
      // Every line the child printed is delivered before its exit, unless something outside the
      // group keeps the pipe open: then give up on the rest after a moment.
      await Promise.race([stdoutDone, delay(PIPE_DRAIN_MS)]);
      child.stdout?.destroy();
      child.stderr?.destroy();
      const result = await child;
      this.done = true;
      const exitCode = typeof result.exitCode === 'number' ? result.exitCode : null;
      const signal = typeof result.signal === 'string' ? result.signal : null;
      const spawnError = result.failed && exitCode === null && signal === null ? result.originalMessage : undefined;
      if (spawnError) stderr.push(`${spawnError}\n`);
      const exit = { exitCode, signal, stderr: stderr.output(), killed: this.killRequested };
      for (const observe of processExitObservers) observe(exit);
      return exit;
    })();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Writes one line to stdin, waiting for the pipe to take it. */
  writeLine(line: string): Promise<void> {
    if (this.done || this.stdin.destroyed) return Promise.reject(new Error('agent process is not running'));
    return new Promise((resolve, reject) => {
      this.stdin.write(line + '\n', (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Closes stdin (EOF), for agents that read all of it before they start (Amp's `-x`). */
  endInput(): void {
    this.stdin.end();
  }

  /** SIGTERM the group, SIGKILL it after the grace period; resolves once reaped. */
  async kill(): Promise<ChildExit> {
    if (!this.done) {
      this.killRequested = true;
      const pid = this.child.pid;
      if (pid !== undefined) {
        signalGroup(pid, 'SIGTERM');
        const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), this.killGraceMs);
        timer.unref();
        this.exited.finally(() => clearTimeout(timer)).catch(() => {});
      }
      this.stdin.end();
    }
    return this.exited;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we wanted.
  }
}
