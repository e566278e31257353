// One live mock agent: `node program.js` as a real child process, spoken to with MockIn lines on
// stdin. Its state is what a test can read: the process and whether the program said `ready`.
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../errors.js';
import { ChildProcess } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import { untilReady } from '../readiness.js';
import type { AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import type { MockIn } from './native.js';

/** The program sits next to this module in src/ and in dist/. */
export const PROGRAM = fileURLToPath(new URL('./program.js', import.meta.url));

export class MockSession implements AgentHandle {
  /** The program printed its `ready` line. */
  ready = false;
  private markReady: () => void = () => {};
  private readonly readySeen = new Promise<void>((resolve) => (this.markReady = resolve));

  private constructor(
    readonly child: ChildProcess,
    private readonly sink: AgentSink,
  ) {}

  /** Spawns the program and resolves once it reported ready; throws agent_start_failed otherwise. */
  static async start(options: StartOptions, sink: AgentSink, limits: ProcessLimits): Promise<MockSession> {
    let session: MockSession | undefined;
    const early: unknown[] = [];
    const child = await ChildProcess.start(
      { command: process.execPath, args: mockArgs(options), cwd: options.cwd, env: options.env, ...processSpawnOptions(limits, options.logger) },
      (line) => {
        const message = parseNativeLine(line.text, line.truncated);
        if (session) session.onLine(message);
        else early.push(message);
      },
    );
    session = new MockSession(child, sink);
    for (const message of early) session.onLine(message);
    const resume = options.nativeSessionId ?? options.fork?.nativeSessionId;
    await untilReady(child, session.readySeen, limits.startTimeoutMs, {
      // A failed resume is the usual early exit once sessions survive restarts: name the session.
      title: resume ? `The mock agent, resuming its session ${resume},` : 'The mock agent',
      details: { agent: 'mock', ...(resume ? { nativeSessionId: resume } : {}) },
      timeout: 'did not report ready in time',
      exit: (exit) => `exited with code ${exit.exitCode} before it was ready`,
    });
    child.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));
    return session;
  }

  private onLine(message: unknown): void {
    if (isReady(message)) {
      this.ready = true;
      this.markReady();
    }
    this.sink.native(message);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(turn: TurnInput): Promise<void> {
    const attachments = turn.attachments.map((a) => ({ path: a.path, ...(a.mime ? { mime: a.mime } : {}) }));
    return this.write({ type: 'prompt', text: turn.message, attachments });
  }

  replyPermission(id: string, reply: PermissionReply): Promise<void> {
    return this.write({ type: 'permission_reply', id, reply });
  }

  replyQuestion(id: string, answers: string[][] | null): Promise<void> {
    return this.write({ type: 'question_reply', id, answers });
  }

  interrupt(): Promise<void> {
    return this.write({ type: 'interrupt' });
  }

  /** A turn held after a step (`usage` with `wait`) goes on. */
  continueStep(): Promise<void> {
    return this.write({ type: 'continue' });
  }

  steer(turn: TurnInput): Promise<void> {
    return this.write({ type: 'steer', text: turn.message });
  }

  async terminate(): Promise<void> {
    await this.child.kill();
  }

  private async write(message: MockIn): Promise<void> {
    try {
      await this.child.writeLine(JSON.stringify(message));
    } catch (err) {
      throw new ApiError('agent_io_failed', `The mock agent did not accept input: ${(err as Error).message}`, { agent: 'mock' });
    }
  }
}

/** The program's argv; cwd, model and mode are its command line. */
function mockArgs(options: StartOptions): string[] {
  return [
    PROGRAM,
    '--model',
    options.model ?? 'mock-1',
    '--mode',
    options.agentMode,
    // Like Claude's --resume: the mock reads its own transcript of that session back.
    ...(options.nativeSessionId ? ['--resume', options.nativeSessionId] : []),
    // Like Claude's --fork-session: a new session with a copy of that one's first `turns` turns.
    ...(options.fork ? ['--fork', options.fork.nativeSessionId, '--fork-turns', String(options.fork.turns)] : []),
  ];
}

function isReady(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'ready';
}
