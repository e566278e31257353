// A test-only agent that prints garbage on demand. It borrows the mock's converter and capabilities
// (so the daemon treats it exactly like the mock) but runs its own tiny node program through the
// real ChildProcess, so garbage goes through the same framing, parsing and logging as a real
// agent's stdout. The prompt text picks the garbage (see PROGRAM).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mockCapabilities } from '../../src/agents/mock/capabilities.js';
import { mockConverter } from '../../src/agents/mock/convert.js';
import { parseNativeLine } from '../../src/agents/process-options.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions } from '../../src/agents/types.js';
import { ApiError } from '../../src/errors.js';
import { ChildProcess } from '../../src/process/spawn.js';

/** Lines that are JSON but not a MockOut: each must become exactly one agent.unparsed. */
export const WRONG_SHAPES = [
  '{}',
  '{"type":"nope"}',
  '{"type":"text"}',
  '{"type":"text","id":1,"chunk":"x"}',
  '{"type":"message_end","id":"m","role":"assistant","parts":[{"kind":"weird"}]}',
  '{"type":"done","reason":"bored"}',
  '{"type":null}',
  '[1,2,3]',
  '42',
  'true',
  'null',
  // A JSON string that holds a valid line: still not a MockOut object.
  JSON.stringify('{"type":"done","reason":"completed"}'),
];

export const BINARY_FILE = 'binary.bin';
export const FLOOD_LINES = 10_000;
export const floodLine = (i: number) => `garbage line ${i} {not json`;
export const DEEP_LEVELS = 100_000;

// Plain JavaScript, written next to binary.bin in a temp dir. Every write waits for its callback,
// so the daemon sees the bytes in order and the program never exits with output still buffered.
const PROGRAM = `
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const out = (data) => new Promise((resolve) => process.stdout.write(data, () => resolve()));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const line = (value) => JSON.stringify(value) + '\\n';
const DONE = line({ type: 'done', reason: 'completed' });
const MiB = 1024 * 1024;
const cases = {
  async normal() {
    await out(line({ type: 'message_start', id: 'ok', role: 'assistant' }));
    await out(line({ type: 'text', id: 'ok', chunk: 'all good' }));
    await out(line({ type: 'message_end', id: 'ok', role: 'assistant', parts: [{ kind: 'text', value: 'all good' }] }));
    await out(DONE);
  },
  async binary() {
    await out(readFileSync(new URL('./${BINARY_FILE}', import.meta.url)));
    await out('\\n' + DONE);
  },
  // 10 MiB without a newline, written in pieces, then the newline on its own after a pause.
  async bigline() {
    for (let i = 0; i < 10; i++) await out('x'.repeat(MiB));
    await sleep(50);
    await out('\\n' + DONE);
  },
  // 20 MiB of an otherwise valid text line: valid only if it were read whole.
  async hugeline() {
    await out('{"type":"text","id":"big","chunk":"');
    for (let i = 0; i < 20; i++) await out('y'.repeat(MiB));
    await out('"}\\n' + DONE);
  },
  async manybig() {
    for (let i = 0; i < 12; i++) await out(String(i).repeat(1.5 * MiB) + '\\n');
    await out(DONE);
  },
  async shapes() {
    for (const text of ${JSON.stringify(WRONG_SHAPES)}) await out(text + '\\n');
    await out(DONE);
  },
  async deep() {
    await out('['.repeat(${DEEP_LEVELS}) + '\\n' + DONE);
  },
  async deepvalid() {
    await out('['.repeat(${DEEP_LEVELS}) + ']'.repeat(${DEEP_LEVELS}) + '\\n' + DONE);
  },
  // The right shape, with a payload deeper than JSON.stringify can go.
  async deeppayload() {
    await out('{"type":"artifact","id":"a","payload":' + '['.repeat(${DEEP_LEVELS}) + ']'.repeat(${DEEP_LEVELS}) + '}\\n' + DONE);
  },
  async flood() {
    let text = '';
    for (let i = 0; i < ${FLOOD_LINES}; i++) text += 'garbage line ' + i + ' {not json\\n';
    await out(text + DONE);
  },
  async partial() {
    await out('{"type":"tex');
    process.exit(0);
  },
  // A crash after a partial line, with megabytes of stderr (one unterminated run among them).
  async partialcrash() {
    await new Promise((resolve) => process.stderr.write('e'.repeat(5 * MiB) + '\\nboom\\n' + 'tail\\n'.repeat(10000), resolve));
    await out('{"type":"tex');
    process.exit(3);
  },
};
await out(line({ type: 'ready', session: 'garbage-' + process.pid, model: 'garbage', cwd: process.cwd(), pid: process.pid }));
for await (const text of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const message = JSON.parse(text);
  if (message.type !== 'prompt') continue;
  const run = cases[message.text];
  if (run) await run();
  else await out(DONE);
}
`;

/** Writes the program (and the binary blob it prints) into `dir`; returns the program's path. */
export function writeGarbageProgram(dir: string, binary: Buffer): string {
  const path = join(dir, 'garbage-agent.mjs');
  writeFileSync(path, PROGRAM);
  writeFileSync(join(dir, BINARY_FILE), binary);
  return path;
}

export interface GarbageLimits {
  maxLineChars: number;
  killGraceMs: number;
}

export interface GarbageDriver extends AgentDriver {
  /**
   * What the daemon threw while taking a line. The real drivers have no catch here, so each entry
   * would have been an uncaughtException, i.e. a dead daemon; recording it lets a test say so.
   */
  readonly crashes: unknown[];
}

/** A driver registered as 'mock', so sessions are created with agent 'mock'. */
export function createGarbageDriver(program: string, limits: GarbageLimits): GarbageDriver {
  const crashes: unknown[] = [];
  const guarded = (sink: AgentSink): AgentSink => ({
    native: (message) => {
      try {
        sink.native(message);
      } catch (err) {
        crashes.push(err);
      }
    },
    exit: (exit) => sink.exit(exit),
  });
  return {
    id: 'mock',
    capabilities: mockCapabilities,
    converter: mockConverter,
    modes: [{ id: 'default', name: 'Default', description: 'A program printing garbage.' }],
    permissionModes: ['default'],
    models: { models: [] },
    crashes,
    start: (options, sink) => start(program, options, guarded(sink), limits),
  };
}

// Mirrors src/agents/mock/driver.ts: resolve on the ready line, report the exit through the sink.
async function start(program: string, options: StartOptions, sink: AgentSink, limits: GarbageLimits): Promise<AgentHandle> {
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const child = await ChildProcess.start(
    { command: process.execPath, args: [program], cwd: options.cwd, env: options.env, maxLineChars: limits.maxLineChars, killGraceMs: limits.killGraceMs },
    (line) => {
      const message = parseNativeLine(line.text, line.truncated);
      if ((message as { type?: unknown } | null)?.type === 'ready') markReady();
      sink.native(message);
    },
  );
  const first = await Promise.race([ready.then(() => 'ready' as const), child.exited.then(() => 'exited' as const)]);
  if (first !== 'ready') throw new ApiError('agent_start_failed', 'The garbage agent exited before it was ready.', { agent: 'mock' });
  child.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));
  const send = (value: unknown) => child.writeLine(JSON.stringify(value));
  return {
    get pid() {
      return child.pid;
    },
    send: (turn) => send({ type: 'prompt', text: turn.message }),
    replyPermission: (id, reply) => send({ type: 'permission_reply', id, reply }),
    replyQuestion: (id, answers) => send({ type: 'question_reply', id, answers }),
    interrupt: () => send({ type: 'interrupt' }),
    terminate: async () => {
      await child.kill();
    },
  };
}
