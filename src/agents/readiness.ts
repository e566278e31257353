// Start-up readiness, the one step every process-backed driver shares: wait until the agent says
// it is ready (its own signal: a `ready` line, an initialize answer, an opened session, a
// "listening" line), or its process exits, or the start timeout passes. On anything but ready the
// process group is killed and reaped before the start fails (design rule **Owned processes**: a
// start that fails leaves nothing running), and the failure names the first stderr lines, which is
// where an agent says why it would not start (a bad flag, a missing login, an unknown session).
import { ApiError } from '../errors.js';
import type { ChildExit, ChildProcess } from '../process/spawn.js';

/** What of a child process readiness needs (a test may pass a stand-in). */
export type StartingProcess = Pick<ChildProcess, 'exited' | 'kill'>;

/** Why a start failed; `exit` is the reaped process's (killed by us unless it exited itself). */
export type StartFailure =
  | { reason: 'timeout'; exit: ChildExit }
  | { reason: 'exit'; exit: ChildExit }
  | { reason: 'error'; error: Error; exit: ChildExit };

export type Readiness<T> = { ok: true; value: T } | ({ ok: false } & StartFailure);

/**
 * Races `ready` against the process's exit and `timeoutMs`. Ready wins: `{ok: true, value}` and the
 * process runs on. Otherwise the process group is killed (when it has not exited by itself) and
 * the failure is returned once the process is reaped. `ready` rejecting is a failure too
 * (`reason: 'error'`): a refused handshake.
 */
export async function awaitReady<T>(proc: StartingProcess, ready: Promise<T> | (() => Promise<T>), timeoutMs: number): Promise<Readiness<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ reason: 'timeout' }>((resolve) => {
    timer = setTimeout(() => resolve({ reason: 'timeout' }), timeoutMs);
    timer.unref();
  });
  // Given as a function, the work starts after the timer: with its own requests bounded by the
  // same timeoutMs, the whole wait's timeout then fires first and is the one reported.
  const work = typeof ready === 'function' ? ready() : ready;
  // Settled into values, so a handshake still pending when the start fails (its requests are failed
  // by the exit) never becomes an unhandled rejection.
  const first = await Promise.race([
    work.then(
      (value) => ({ reason: 'ready' as const, value }),
      (error: unknown) => ({ reason: 'error' as const, error: error instanceof Error ? error : new Error(String(error)) }),
    ),
    proc.exited.then((exit) => ({ reason: 'exit' as const, exit })),
    timeout,
  ]);
  clearTimeout(timer);
  if (first.reason === 'ready') return { ok: true, value: first.value };
  if (first.reason === 'exit') return { ok: false, reason: 'exit', exit: first.exit };
  const exit = await proc.kill();
  return first.reason === 'error' ? { ok: false, reason: 'error', error: first.error, exit } : { ok: false, reason: 'timeout', exit };
}

/** How one driver words its start failures: `<title> <why>.[ stderr: <head>]`. */
export interface StartWords {
  /** The agent as the message names it ("Codex", "Claude Code", an ACP definition's title). */
  title: string;
  /** The catalogue error's details (at least `agent`). */
  details: Record<string, unknown>;
  /** The why of a timeout ("did not start a thread in time"). */
  timeout: string;
  /** The why of a failed handshake, given its error. */
  error?: (error: Error) => string;
  /** The why of an exit before ready; by default "exited with code <code|signal> before it was ready". */
  exit?: (exit: ChildExit) => string;
  /** A handshake's own catalogue error (e.g. invalid_request for a bad MCP server) is thrown as is. */
  keepApiErrors?: boolean;
}

/** The exit's why when a driver does not word it itself. */
export const exitedBeforeReady = (exit: ChildExit): string => `exited with code ${exit.exitCode ?? exit.signal} before it was ready`;

/** " stderr: <first lines>" when the process wrote any, else nothing. */
export const stderrHeadSuffix = (exit: ChildExit): string => (exit.stderr.head ? ` stderr: ${exit.stderr.head}` : '');

/** The catalogue error (agent_start_failed) for a failed start. */
export function startFailedError(failure: StartFailure, words: StartWords): ApiError {
  if (failure.reason === 'error' && words.keepApiErrors && failure.error instanceof ApiError) return failure.error;
  const why =
    failure.reason === 'timeout'
      ? words.timeout
      : failure.reason === 'error'
        ? (words.error ?? ((e: Error) => `failed to start: ${e.message}`))(failure.error)
        : (words.exit ?? exitedBeforeReady)(failure.exit);
  return new ApiError('agent_start_failed', `${words.title} ${why}.${stderrHeadSuffix(failure.exit)}`, words.details);
}

/** awaitReady, then throw the driver's agent_start_failed on anything but ready. */
export async function untilReady<T>(proc: StartingProcess, ready: Promise<T>, timeoutMs: number, words: StartWords): Promise<T> {
  const outcome = await awaitReady(proc, ready, timeoutMs);
  if (outcome.ok) return outcome.value;
  throw startFailedError(outcome, words);
}
