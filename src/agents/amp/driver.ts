// How Amp is run: ONE process per turn (docs/amp.md says why), all of them on one thread.
//
//   start      nothing runs yet: check AMP_API_KEY, make the session's 0700 directory with the
//              delegate listener, settings file and delegate wrapper (settings.ts)
//   send       `amp -x <prompt> --stream-json-thinking …`, later turns
//              `amp threads continue <T-id> -x <prompt> …`; stdin is closed at once (an open stdin
//              stalls `-x` for 30 s); the thread id comes from the first system/init
//   permission the delegate program blocks on the listener; the driver feeds an
//              `agentwire.permission` message to the converter and answers on the user's reply
//   interrupt  SIGINT: Amp ends the turn with an error result (exit 0); the thread goes on
//   terminate  kill the running turn's group, reject blocked delegates, remove the directory
// A turn's process that ends without a `result` line (an `Error: …` exit) ends the session.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import { shareWithAgent } from '../../process/agent-user.js';
import { ChildProcess, type ChildExit } from '../../process/spawn.js';
import { agentLocator } from '../locator.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { ampCapabilities } from './capabilities.js';
import { ampConverter } from './convert.js';
import { DelegateServer, type DelegateAnswer } from './delegate-server.js';
import { writeSessionFiles } from './settings.js';

/** Amp's agent modes in this build (`-m`); the mode picks the model. `default` means medium. */
export const AMP_MODES = [
  { id: 'medium', name: 'Medium', description: "Amp's default mode (`-m medium`)." },
  { id: 'low', name: 'Low', description: 'Faster and cheaper (`-m low`).' },
  { id: 'high', name: 'High', description: 'More reasoning (`-m high`).' },
  { id: 'ultra', name: 'Ultra', description: 'The most capable mode (`-m ultra`).' },
];
const MODE_IDS = new Set(AMP_MODES.map((m) => m.id));

/** There is no public model choice: Amp picks the model from the mode. */
const AMP_MODELS = { models: [{ id: 'default', name: "Chosen by Amp from the agentMode (no public model flag)" }], defaultModel: 'default' };

/** Blocked delegates at once per session; more are rejected rather than queued without bound. */
const MAX_PENDING = 16;
/** How long an interrupted turn may take to print its result before its group is killed. */
const INTERRUPT_GRACE_MS = 5_000;
/** Longest prompt passed as an argument; longer ones (and ones starting with '-') go on stdin. */
const MAX_ARG_PROMPT = 100_000;
/** What `amp threads continue` prints (exit 1, no `Error:` prefix) for a thread that does not exist. */
const MISSING_THREAD = /^Thread \S+ does not exist\./m;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export type LocateAmp = () => Promise<string>;

export function ampLocator(config: Partial<Pick<Config, 'agentsDir' | 'ampBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateAmp {
  return agentLocator('amp', 'Amp', config, env);
}

export function createAmpDriver(limits: ProcessLimits, locate: LocateAmp = ampLocator(), daemonEnv: NodeJS.ProcessEnv = process.env): AgentDriver {
  return {
    id: 'amp',
    capabilities: ampCapabilities,
    converter: ampConverter,
    modes: AMP_MODES,
    permissionModes: ['default', 'bypass', 'acceptEdits'],
    models: AMP_MODELS,
    start: (options, sink) => startAmp(options, sink, limits, locate, daemonEnv),
  };
}

/** The argv of one turn after the executable. */
export function ampArgs(o: { thread: string | null; prompt: string | null; mode: string; bypass: boolean; settingsFile: string }): string[] {
  const args = o.thread ? ['threads', 'continue', o.thread] : [];
  args.push('-x', ...(o.prompt !== null ? [o.prompt] : []), '--stream-json-thinking', '-m', o.mode, '--settings-file', o.settingsFile);
  if (o.bypass) args.push('--dangerously-allow-all'); // hidden from --help, but there (docs/amp.md)
  return args;
}

/** The prompt text: attachments are named by path (Amp reads them with its own tools). */
export function promptOf(turn: TurnInput): string {
  if (turn.attachments.length === 0) return turn.message;
  return `${turn.message}\n\nAttached files:\n${turn.attachments.map((a) => `- ${a.path}`).join('\n')}`;
}

interface Pending {
  tool: string;
  answer: DelegateAnswer;
}

async function startAmp(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateAmp, daemonEnv: NodeJS.ProcessEnv): Promise<AgentHandle> {
  const mode = options.agentMode === 'default' ? 'medium' : options.agentMode;
  if (!MODE_IDS.has(mode)) {
    throw new ApiError('invalid_request', `Amp has no agentMode '${options.agentMode}'; use one of ${[...MODE_IDS].join(', ')}.`, { agent: 'amp' });
  }
  if (options.model && options.model !== 'default') {
    throw new ApiError('invalid_request', `Amp picks its model from the agentMode; model '${options.model}' cannot be chosen.`, { agent: 'amp' });
  }
  const executable = await locate();
  const apiKey = options.env.AMP_API_KEY || daemonEnv.AMP_API_KEY;
  if (!apiKey) {
    // Without a key the CLI starts an interactive login on stdout and waits forever.
    throw new ApiError('agent_start_failed', 'Amp needs AMP_API_KEY (in the session env or the daemon env); without it the CLI waits for an interactive login.', {
      agent: 'amp',
    });
  }
  const dir = await mkdtemp(join(tmpdir(), 'agentwire-amp-'));
  const pending = new Map<string, Pending>();
  const always = new Set<string>();
  let nextPermission = 0;
  let thread: string | null = options.nativeSessionId ?? null;

  const server = await DelegateServer.start(join(dir, 'delegate.sock'), (request, answer) => {
    const id = `amp-perm-${++nextPermission}`;
    const message = { type: 'agentwire.permission', id, tool: request.tool, input: request.input, thread_id: request.thread_id };
    if (always.has(request.tool)) {
      answer(true);
      return sink.native({ ...message, decided: 'always' });
    }
    if (pending.size >= MAX_PENDING) return answer(false, 'agentwire: too many permission requests waiting');
    pending.set(id, { tool: request.tool, answer });
    sink.native(message);
  }).catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw new ApiError('agent_start_failed', `Amp's permission listener did not start: ${(err as Error).message}`, { agent: 'amp' });
  });
  const files = await writeSessionFiles(dir, { permissionMode: options.permissionMode, socketPath: server.socketPath, secret: server.secret, mcp: options.mcp });
  const user = limits.boundary?.user;
  if (user) {
    // Amp runs as the agent user: it may read its settings, run the delegate and connect to the
    // socket (group bits), but not rewrite its permission rules (the daemon owns the files).
    for (const [path, mode] of [[dir, 0o750], [files.settingsFile, 0o640], [files.delegateScript, 0o750], [server.socketPath, 0o660]] as const) {
      await shareWithAgent(path, mode, user);
    }
  }

  const rejectPending = (why: string) => {
    for (const p of pending.values()) p.answer(false, why);
    pending.clear();
  };
  const env: Record<string, string> = { ...options.env, AMP_API_KEY: apiKey };
  // A daemon running under Amp would otherwise make every thread a child of Amp's own thread.
  (env as Record<string, string | undefined>).AMP_THREAD_ID = undefined;

  let current: ChildProcess | undefined;
  let terminating = false;
  let ended = false;
  const cleanup = async () => {
    rejectPending('agentwire: the session ended');
    await server.close();
    await rm(dir, { recursive: true, force: true });
  };

  const runTurn = async (turn: TurnInput) => {
    const text = promptOf(turn);
    const viaStdin = text.startsWith('-') || text.length > MAX_ARG_PROMPT;
    let sawResult = false;
    let interrupted = false;
    const child = await ChildProcess.start(
      {
        command: executable,
        args: ampArgs({ thread, prompt: viaStdin ? null : text, mode, bypass: options.permissionMode === 'bypass', settingsFile: files.settingsFile }),
        cwd: options.cwd,
        env,
        ...processSpawnOptions(limits, options.logger),
      },
      (line) => {
        const message = parseNativeLine(line.text, line.truncated) as { type?: unknown; session_id?: unknown };
        if (message && typeof message === 'object') {
          if (message.type === 'system' && typeof message.session_id === 'string') thread = message.session_id;
          if (message.type === 'result') sawResult = true;
        }
        sink.native(message);
      },
    );
    current = child;
    if (viaStdin) await child.writeLine(text).catch(() => undefined);
    child.endInput();
    const turnHandle = {
      interrupt: () => {
        interrupted = true;
        rejectPending('agentwire: the turn was interrupted');
        if (child.pid !== undefined) {
          try {
            process.kill(child.pid, 'SIGINT');
          } catch {
            // already gone
          }
        }
        setTimeout(() => void child.kill(), INTERRUPT_GRACE_MS).unref();
      },
    };
    activeTurn = turnHandle;
    lastExit = child.exited.then((exit) => turnExited(exit, sawResult, interrupted));
  };
  let lastExit: Promise<void> = Promise.resolve();
  let activeTurn: { interrupt(): void } | undefined;

  const turnExited = (exit: ChildExit, sawResult: boolean, interrupted: boolean) => {
    current = undefined;
    activeTurn = undefined;
    rejectPending('agentwire: the turn ended');
    if (terminating || sawResult) return;
    const why = exit.signal ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
    const stderrText = exit.stderr.head?.trim();
    if (interrupted) {
      sink.native({ type: 'agentwire.exit', exit_code: exit.exitCode, signal: exit.signal, message: `Amp was interrupted and exited with ${why} without a result.`, interrupted: true });
      return;
    }
    ended = true;
    const message = stderrText ? stderrText : `Amp exited with ${why} without a result.`;
    // `threads continue` on a thread Amp no longer has (a restored session whose thread is gone).
    const resumeFailed = MISSING_THREAD.test(stderrText ?? '') ? { resume_failed: true } : {};
    sink.native({ type: 'agentwire.exit', exit_code: exit.exitCode, signal: exit.signal, message, stderr: exit.stderr, ...resumeFailed });
    void cleanup().finally(() => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: false }));
  };

  return {
    get pid() {
      return current?.pid;
    },
    send: async (turn) => {
      if (ended || terminating) throw new ApiError('session_ended', 'The Amp session has ended.', { agent: 'amp' });
      // The turn ended at its `result` line; its process may still be on its way out.
      if (current) await Promise.race([lastExit, delay(INTERRUPT_GRACE_MS)]);
      if (current) await current.kill();
      try {
        await runTurn(turn);
      } catch (err) {
        if (err instanceof ApiError) throw err;
        throw new ApiError('agent_io_failed', `Amp could not be started: ${(err as Error).message}`, { agent: 'amp' });
      }
    },
    replyPermission: async (id, reply) => {
      const p = pending.get(id);
      // Gone: its turn ended (or was interrupted) and the delegate was already rejected.
      if (!p) return;
      pending.delete(id);
      if (reply === 'always') always.add(p.tool);
      p.answer(reply !== 'reject', reply === 'reject' ? 'The user rejected this tool use.' : undefined);
    },
    replyQuestion: async () => {
      throw new ApiError('agent_io_failed', 'Amp asks no questions.', { agent: 'amp' });
    },
    interrupt: async () => {
      activeTurn?.interrupt();
    },
    terminate: async () => {
      if (ended) return;
      terminating = true;
      ended = true;
      rejectPending('agentwire: the session was terminated');
      const exit = current ? await current.kill() : { exitCode: null, signal: null, stderr: { truncated: false } };
      await cleanup();
      sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: true });
    },
  };
}
