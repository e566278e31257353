// One live Amp session: no process between turns, ONE process per turn (turn.ts), all on one
// thread, and the delegate listener through which Amp asks permission (delegate-server.ts). Its
// state is named fields a test can read: the thread, the running turn, the blocked delegates, the
// tools granted `always`, whether it ended. The protocol steps are at the top of driver.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../errors.js';
import { shareWithAgent } from '../../process/agent-user.js';
import type { ChildExit } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import type { ProcessLimits } from '../process-options.js';
import type { AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { DelegateServer, type DelegateAnswer, type DelegateRequest } from './delegate-server.js';
import { writeSessionFiles } from './settings.js';
import { AmpTurn, INTERRUPT_GRACE_MS } from './turn.js';

/** Blocked delegates at once per session; more are rejected rather than queued without bound. */
const MAX_PENDING = 16;
/** What `amp threads continue` prints (exit 1, no `Error:` prefix) for a thread that does not exist. */
const MISSING_THREAD = /^Thread \S+ does not exist\./m;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export interface PendingDelegate {
  tool: string;
  answer: DelegateAnswer;
}

/** What the driver checked and found before the session starts (driver.ts). */
export interface AmpSetup {
  executable: string;
  apiKey: string;
  /** Amp's `-m` mode. */
  mode: string;
}

export class AmpSession implements AgentHandle {
  /** Blocked delegates by permission id. */
  readonly pending = new Map<string, PendingDelegate>();
  /** Tools the user answered `always` for: later requests for them are allowed at once. */
  readonly always = new Set<string>();
  /** The Amp thread (T-…): the resumed one, else learnt from the first turn's system/init. */
  thread: string | null;
  /** The running turn, from its spawn until its process exited. */
  turn: AmpTurn | undefined;
  /** The running turn once it can be interrupted (its prompt fed, stdin closed). */
  interruptible: AmpTurn | undefined;
  /** The last turn's exit handling (a send waits for it before the next turn). */
  lastExit: Promise<void> = Promise.resolve();
  terminating = false;
  /** The session is over (terminated, or a turn crashed): no more turns. */
  ended = false;
  private nextPermission = 0;
  private server!: DelegateServer;
  private settingsFile = '';
  private readonly env: Record<string, string>;

  private constructor(
    private readonly options: StartOptions,
    private readonly sink: AgentSink,
    private readonly limits: ProcessLimits,
    private readonly setup: AmpSetup,
    /** The session's 0700 directory: delegate socket, settings file, delegate wrapper. */
    readonly dir: string,
  ) {
    this.thread = options.nativeSessionId ?? null;
    this.env = { ...options.env, AMP_API_KEY: setup.apiKey };
    // A daemon running under Amp would otherwise make every thread a child of Amp's own thread.
    (this.env as Record<string, string | undefined>).AMP_THREAD_ID = undefined;
  }

  /** Makes the session's directory with the delegate listener, settings file and delegate wrapper. */
  static async start(options: StartOptions, sink: AgentSink, limits: ProcessLimits, setup: AmpSetup): Promise<AmpSession> {
    const session = new AmpSession(options, sink, limits, setup, await mkdtemp(join(tmpdir(), 'agentwire-amp-')));
    const { dir } = session;
    session.server = await DelegateServer.start(join(dir, 'delegate.sock'), (request, answer) => session.onDelegate(request, answer)).catch(async (err: unknown) => {
      await rm(dir, { recursive: true, force: true });
      throw new ApiError('agent_start_failed', `Amp's permission listener did not start: ${(err as Error).message}`, { agent: 'amp' });
    });
    const { server } = session;
    const files = await writeSessionFiles(dir, { permissionMode: options.permissionMode, socketPath: server.socketPath, secret: server.secret, mcp: options.mcp });
    session.settingsFile = files.settingsFile;
    const user = limits.boundary?.user;
    if (user) {
      // Amp runs as the agent user: it may read its settings, run the delegate and connect to the
      // socket (group bits), but not rewrite its permission rules (the daemon owns the files).
      for (const [path, mode] of [[dir, 0o750], [files.settingsFile, 0o640], [files.delegateScript, 0o750], [server.socketPath, 0o660]] as const) {
        await shareWithAgent(path, mode, user);
      }
    }
    return session;
  }

  get pid(): number | undefined {
    return this.turn?.child.pid;
  }

  /** A delegate blocked on the listener: allowed at once for an `always` tool, else held for the reply. */
  private onDelegate(request: DelegateRequest, answer: DelegateAnswer): void {
    const id = `amp-perm-${++this.nextPermission}`;
    const message = { type: 'agentwire.permission', id, tool: request.tool, input: request.input, thread_id: request.thread_id };
    if (this.always.has(request.tool)) {
      answer(true);
      return this.sink.native({ ...message, decided: 'always' });
    }
    if (this.pending.size >= MAX_PENDING) return answer(false, 'agentwire: too many permission requests waiting');
    this.pending.set(id, { tool: request.tool, answer });
    this.sink.native(message);
  }

  private rejectPending(why: string): void {
    for (const p of this.pending.values()) p.answer(false, why);
    this.pending.clear();
  }

  private async cleanup(): Promise<void> {
    this.rejectPending('agentwire: the session ended');
    await this.server.close();
    await rm(this.dir, { recursive: true, force: true });
  }

  async send(turn: TurnInput): Promise<void> {
    if (this.ended || this.terminating) throw new ApiError('session_ended', 'The Amp session has ended.', { agent: 'amp' });
    // The turn ended at its `result` line; its process may still be on its way out.
    if (this.turn) await Promise.race([this.lastExit, delay(INTERRUPT_GRACE_MS)]);
    if (this.turn) await this.turn.child.kill();
    try {
      await this.runTurn(turn);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError('agent_io_failed', `Amp could not be started: ${(err as Error).message}`, { agent: 'amp' });
    }
  }

  private async runTurn(input: TurnInput): Promise<void> {
    const { turn, fed } = await AmpTurn.start(input, {
      executable: this.setup.executable,
      options: this.options,
      limits: this.limits,
      env: this.env,
      mode: this.setup.mode,
      settingsFile: this.settingsFile,
      thread: this.thread,
      onMessage: (message) => {
        const m = message as { type?: unknown; session_id?: unknown };
        if (m && typeof m === 'object' && m.type === 'system' && typeof m.session_id === 'string') this.thread = m.session_id;
        this.sink.native(message);
      },
    });
    this.turn = turn;
    await fed;
    this.interruptible = turn;
    this.lastExit = turn.child.exited.then((exit) => this.turnExited(exit, turn));
  }

  /** A turn's process is gone: without its `result` line (and not interrupted) the session ends. */
  private turnExited(exit: ChildExit, turn: AmpTurn): void {
    this.turn = undefined;
    this.interruptible = undefined;
    this.rejectPending('agentwire: the turn ended');
    if (this.terminating || turn.sawResult) return;
    const why = exit.signal ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
    const stderrText = exit.stderr.head?.trim();
    if (turn.interrupted) {
      this.sink.native({ type: 'agentwire.exit', exit_code: exit.exitCode, signal: exit.signal, message: `Amp was interrupted and exited with ${why} without a result.`, interrupted: true });
      return;
    }
    this.ended = true;
    const message = stderrText ? stderrText : `Amp exited with ${why} without a result.`;
    // `threads continue` on a thread Amp no longer has (a restored session whose thread is gone).
    const resumeFailed = MISSING_THREAD.test(stderrText ?? '') ? { resume_failed: true } : {};
    this.sink.native({ type: 'agentwire.exit', exit_code: exit.exitCode, signal: exit.signal, message, stderr: exit.stderr, ...resumeFailed });
    void this.cleanup().finally(() => this.sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: false }));
  }

  async replyPermission(id: string, reply: PermissionReply): Promise<void> {
    const p = this.pending.get(id);
    // Gone: its turn ended (or was interrupted) and the delegate was already rejected.
    if (!p) return;
    this.pending.delete(id);
    if (reply === 'always') this.always.add(p.tool);
    p.answer(reply !== 'reject', reply === 'reject' ? 'The user rejected this tool use.' : undefined);
  }

  async replyQuestion(): Promise<void> {
    throw new ApiError('agent_io_failed', 'Amp asks no questions.', { agent: 'amp' });
  }

  async interrupt(): Promise<void> {
    if (!this.interruptible) return;
    this.rejectPending('agentwire: the turn was interrupted');
    this.interruptible.interrupt();
  }

  async terminate(): Promise<void> {
    if (this.ended) return;
    this.terminating = true;
    this.ended = true;
    this.rejectPending('agentwire: the session was terminated');
    const exit = this.turn ? await this.turn.child.kill() : { exitCode: null, signal: null, stderr: { truncated: false } };
    await this.cleanup();
    this.sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: true });
  }
}
