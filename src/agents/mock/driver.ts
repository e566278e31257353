// How the mock agent is run: `node program.js` as a real child process, one per session, spoken to
// with MockIn lines on stdin. The program file sits next to this module in src/ and in dist/.
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../errors.js';
import { ChildProcess } from '../../process/spawn.js';
import { VERSION } from '../../version.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions } from '../types.js';
import { mockCapabilities } from './capabilities.js';
import { mockConverter } from './convert.js';
import type { MockIn } from './native.js';

/** The mock reports its agentMode back in session.started; it behaves the same in each. */
const MOCK_MODES = [
  { id: 'default', name: 'Default', description: 'The scripted mock agent.' },
  { id: 'build', name: 'Build', description: 'Same script; the mode is echoed in session.started.' },
  { id: 'plan', name: 'Plan', description: 'Same script; the mode is echoed in session.started.' },
];

const PROGRAM = fileURLToPath(new URL('./program.js', import.meta.url));

export function createMockDriver(limits: ProcessLimits): AgentDriver {
  return {
    id: 'mock',
    capabilities: mockCapabilities,
    converter: mockConverter,
    bundled: { path: PROGRAM, version: VERSION },
    modes: MOCK_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: { models: [{ id: 'mock-1', name: 'Mock 1' }], defaultModel: 'mock-1' },
    start: (options, sink) => startMock(options, sink, limits),
    // cwd, model and mode are its command line: a spare serves the defaults it was started with.
    spareServes: sameSpareOptions,
  };
}

async function startMock(options: StartOptions, sink: AgentSink, limits: ProcessLimits): Promise<AgentHandle> {
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const child = await ChildProcess.start(
    {
      command: process.execPath,
      args: [
        PROGRAM,
        '--model',
        options.model ?? 'mock-1',
        '--mode',
        options.agentMode,
        // Like Claude's --resume: the mock reads its own transcript of that session back.
        ...(options.nativeSessionId ? ['--resume', options.nativeSessionId] : []),
      ],
      cwd: options.cwd,
      env: options.env,
      ...processSpawnOptions(limits, options.logger),
    },
    (line) => {
      const message = parseNativeLine(line.text, line.truncated);
      if (isReady(message)) markReady();
      sink.native(message);
    },
  );
  const exitedEarly = child.exited.then((exit) => exit);
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), limits.startTimeoutMs).unref());
  const first = await Promise.race([ready.then(() => 'ready' as const), exitedEarly, timeout]);
  if (first !== 'ready') {
    const exit = first === 'timeout' ? await child.kill() : first;
    const why = describeStartFailure(first === 'timeout', exit.exitCode, exit.stderr.head, options.nativeSessionId);
    throw new ApiError('agent_start_failed', why, {
      agent: 'mock',
      ...(options.nativeSessionId ? { nativeSessionId: options.nativeSessionId } : {}),
    });
  }
  child.exited.then((exit) =>
    sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }),
  );

  const send = async (message: MockIn) => {
    try {
      await child.writeLine(JSON.stringify(message));
    } catch (err) {
      throw new ApiError('agent_io_failed', `The mock agent did not accept input: ${(err as Error).message}`, { agent: 'mock' });
    }
  };
  return {
    get pid() {
      return child.pid;
    },
    send: (turn) =>
      send({ type: 'prompt', text: turn.message, attachments: turn.attachments.map((a) => ({ path: a.path, ...(a.mime ? { mime: a.mime } : {}) })) }),
    replyPermission: (id, reply) => send({ type: 'permission_reply', id, reply }),
    replyQuestion: (id, answers) => send({ type: 'question_reply', id, answers }),
    interrupt: () => send({ type: 'interrupt' }),
    terminate: async () => {
      await child.kill();
    },
  };
}

function isReady(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'ready';
}

function describeStartFailure(timedOut: boolean, exitCode: number | null, stderrHead: string | undefined, resume: string | undefined): string {
  const why = timedOut ? 'did not report ready in time' : `exited with code ${exitCode} before it was ready`;
  // A failed resume is the usual early exit once sessions survive restarts: name the session.
  const what = resume ? `The mock agent, resuming its session ${resume},` : 'The mock agent';
  return `${what} ${why}.${stderrHead ? ` stderr: ${stderrHead}` : ''}`;
}
