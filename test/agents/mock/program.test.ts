// The mock agent as a real child process, without the daemon: what it prints must be valid MockOut.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MockIn, MockOut } from '../../../src/agents/mock/native.js';
import { Mock } from '../../support/mock-process.js';
import { alive, processes, type Proc } from '../../support/procs.js';

const spawned: Mock[] = [];
function start(args?: string[]) {
  const mock = new Mock(args);
  spawned.push(mock);
  return mock;
}

/** Tool processes seen: a failed test may leave them behind, no longer under their mock. */
const tools = new Map<number, Proc>();
const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const mock of spawned.splice(0)) {
    for (const p of descendants(mock.child.pid!)) kill(p.pid);
    if (mock.child.exitCode === null) mock.child.kill('SIGKILL');
  }
  // Only what is still the same process (same name and group), in case a pid was reused.
  for (const p of processes()) {
    const seen = tools.get(p.pid);
    if (seen && seen.comm === p.comm && seen.pgid === p.pgid) kill(p.pid);
  }
  tools.clear();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function kill(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** The processes a mock started, found by parentage: here it shares the test's process group. */
function descendants(pid: number): Proc[] {
  const table = processes();
  const found: Proc[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const parent = queue.shift();
    for (const p of table.filter((q) => q.ppid === parent)) found.push(p), queue.push(p.pid);
  }
  return found;
}

async function runningSleep(mock: Mock): Promise<Proc> {
  await mock.until((l) => l.type === 'tool_call');
  const deadline = Date.now() + 5000;
  for (;;) {
    const tree = descendants(mock.child.pid!);
    for (const p of tree) tools.set(p.pid, p);
    const sleep = tree.find((p) => p.comm === 'sleep');
    if (sleep) return sleep;
    if (Date.now() > deadline) throw new Error('no sleep process under the mock');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const types = (lines: MockOut[]) => lines.map((l) => l.type);

describe('mock program', () => {
  it('announces itself with a ready line', async () => {
    const mock = start(['--model', 'mock-big', '--mode', 'plan']);
    const [ready] = await mock.until((l) => l.type === 'ready');
    expect(ready).toEqual({
      type: 'ready',
      session: expect.stringMatching(/^mock-[a-z0-9]{12}$/),
      model: 'mock-big',
      mode: 'plan',
      cwd: process.cwd(),
      pid: mock.child.pid,
    });
  });

  it('replies with exactly the requested word', async () => {
    const mock = start();
    expect(await mock.turn('Reply with exactly the single word OK.')).toEqual([
      { type: 'message_start', id: 'msg_1', role: 'assistant' },
      { type: 'text', id: 'msg_1', chunk: 'OK' },
      { type: 'message_end', id: 'msg_1', role: 'assistant', parts: [{ kind: 'text', value: 'OK' }] },
      { type: 'done', reason: 'completed' },
    ]);
  });

  it('runs a tool call parented to its message', async () => {
    const mock = start();
    const lines = await mock.turn('tool');
    expect(types(lines)).toEqual([
      'message_start', 'text', 'message_end', 'tool_call', 'tool_result', 'message_start', 'text', 'message_end', 'done',
    ]);
    const input = { path: 'notes.txt', content: 'hello\n' };
    expect(lines[3]).toEqual({ type: 'tool_call', id: 'call_1', parent: 'msg_1', tool: 'write_file', input });
    const output = 'wrote 6 bytes to notes.txt';
    expect(lines[4]).toMatchObject({ type: 'tool_result', id: 'res_1', call: 'call_1', parent: 'msg_1', output });
    const ops = lines[4]?.type === 'tool_result' ? lines[4].files?.map((f) => (f.kind === 'file' ? f.op : f.kind)) : [];
    expect(ops).toEqual(['read', 'write', 'patch']);
  });

  it('asks permission, waits, and acts on the reply', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'permission' });
    await mock.until((l) => l.type === 'ask_permission');
    expect(mock.lines.at(-1)).toEqual({ type: 'ask_permission', id: 'perm_1', action: 'write_file', input: { path: 'notes.txt' }, call: 'call_1' });
    mock.send({ type: 'permission_reply', id: 'perm_9', reply: 'once' });
    const from = mock.lines.length;
    mock.send({ type: 'permission_reply', id: 'perm_1', reply: 'once' });
    const lines = (await mock.until((l) => l.type === 'done', from)).slice(from);
    expect(types(lines)).toEqual(['tool_call', 'tool_result', 'message_start', 'text', 'message_end', 'done']);
    expect(lines[4]).toMatchObject({ parts: [{ kind: 'text', value: 'Permission granted; wrote notes.txt.' }] });
    // stderr is a separate pipe, so it may arrive after the stdout lines written later.
    await vi.waitFor(() => expect(mock.stderr).toContain('perm_9'));
  });

  it('asks a question and reports the answer', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'question' });
    await mock.until((l) => l.type === 'ask_question');
    const from = mock.lines.length;
    mock.send({ type: 'question_reply', id: 'q_1', answers: [['green'], ['blue']] });
    const lines = (await mock.until((l) => l.type === 'done', from)).slice(from);
    expect(lines.find((l) => l.type === 'message_end')).toMatchObject({ parts: [{ kind: 'text', value: 'You answered: green, blue' }] });
  });

  it('stops a slow turn on interrupt with the partial text', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'slow 50' });
    await mock.until((l) => l.type === 'text' && l.chunk === 'tick 2\n');
    mock.send({ type: 'interrupt' });
    const lines = await mock.until((l) => l.type === 'done');
    const end = lines.find((l) => l.type === 'message_end');
    const streamed = lines.flatMap((l) => (l.type === 'text' ? [l.chunk] : [])).join('');
    const parts = [{ kind: 'text', value: streamed }];
    expect(end).toEqual({ type: 'message_end', id: 'msg_1', role: 'assistant', parts, interrupted: true });
    expect(lines.at(-1)).toEqual({ type: 'done', reason: 'interrupted' });
    expect(lines.filter((l) => l.type === 'text').length).toBeLessThan(50);
    // Nothing from the stopped turn leaks into the next one.
    await new Promise((r) => setTimeout(r, 250));
    expect(types(await mock.turn('echo next'))).toEqual(['message_start', 'text', 'message_end', 'done']);
  });

  it('crashes with exit code 3 after writing stderr, without done', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'crash' });
    expect(await mock.exited).toBe(3);
    expect(mock.stderr.trimEnd().split('\n')).toEqual([1, 2, 3, 4, 5].map((i) => `mock: fatal line ${i}`));
    expect(types(mock.lines)).toEqual(['ready']);
  });

  it('ends the session with bye and exit code 0', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'end' });
    expect(await mock.exited).toBe(0);
    expect(types(mock.lines)).toEqual(['ready', 'message_start', 'text', 'message_end', 'done', 'bye']);
  });

  it('ignores invalid stdin lines and exits 0 quietly at EOF', async () => {
    const mock = start();
    mock.send('not json');
    mock.send({ type: 'prompt' } as unknown as MockIn);
    expect(types(await mock.turn('hello there'))).toEqual(['message_start', 'text', 'message_end', 'done']);
    mock.child.stdin.end();
    expect(await mock.exited).toBe(0);
    expect(mock.stderr.trimEnd().split('\n')).toHaveLength(2);
  });

  it('adds attachments to the final message', async () => {
    const mock = start();
    const from = (await mock.until((l) => l.type === 'ready')).length;
    mock.send({ type: 'prompt', text: 'echo hi', attachments: [{ path: '/a.txt' }, { path: '/b.png', mime: 'image/png' }] });
    const lines = (await mock.until((l) => l.type === 'done', from)).slice(from);
    expect(lines.find((l) => l.type === 'message_end')).toMatchObject({
      parts: [
        { kind: 'text', value: 'hi' },
        { kind: 'file', path: '/a.txt', op: 'read' },
        { kind: 'picture', path: '/b.png', mime: 'image/png' },
      ],
    });
  });

  it('runs a shell command as a tool call and reports its output and exit code', async () => {
    const mock = start();
    const lines = await mock.turn('shell echo out; echo err >&2; exit 3');
    expect(types(lines)).toEqual([
      'message_start', 'text', 'message_end', 'tool_call', 'tool_result', 'message_start', 'text', 'message_end', 'done',
    ]);
    const command = 'echo out; echo err >&2; exit 3';
    expect(lines[2]).toMatchObject({ id: 'msg_1', parts: [{ kind: 'text', value: `Running: ${command}` }] });
    expect(lines[3]).toEqual({ type: 'tool_call', id: 'call_1', parent: 'msg_1', tool: 'shell', input: { command } });
    expect(lines[4]).toMatchObject({ type: 'tool_result', id: 'res_1', call: 'call_1', parent: 'msg_1', failed: true });
    // stdout and stderr are separate pipes, so only their contents are certain, not their order.
    const output = lines[4]?.type === 'tool_result' ? lines[4].output : '';
    expect(output.split('\n').sort()).toEqual(['', 'err', 'out']);
    expect(lines[7]).toMatchObject({ parts: [{ kind: 'text', value: 'The command exited with code 3.' }] });

    const ok = await mock.turn('shell echo fine');
    expect(ok.find((l) => l.type === 'tool_result')).toEqual({ type: 'tool_result', id: 'res_2', call: 'call_2', parent: 'msg_3', output: 'fine\n' });
  });

  it('keeps only the last 64 KiB of a long shell output', async () => {
    const mock = start();
    const lines = await mock.turn("shell head -c 100000 /dev/zero | tr '\\0' x; echo END");
    const result = lines.find((l) => l.type === 'tool_result');
    const output = result?.type === 'tool_result' ? result.output : '';
    expect(output.startsWith(`[${100_004 - 65_536} earlier characters omitted]\n`)).toBe(true);
    expect(output.endsWith('xEND\n')).toBe(true);
    expect(output.length).toBeLessThan(65_536 + 100);
  });

  it('answers `shell` without a command with its usage', async () => {
    const mock = start();
    const lines = await mock.turn('shell');
    expect(lines.find((l) => l.type === 'message_end')).toMatchObject({ parts: [{ kind: 'text', value: 'Usage: shell <command>' }] });
  });

  it('kills the running shell command on interrupt and stays usable', async () => {
    const mock = start();
    const dir = mkdtempSync(join(tmpdir(), 'mock-shell-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const marker = join(dir, 'after');
    mock.send({ type: 'prompt', text: `shell echo before; sleep 1000; touch ${marker}` });
    const sleep = await runningSleep(mock);
    const from = mock.lines.length;
    mock.send({ type: 'interrupt' });
    const lines = (await mock.until((l) => l.type === 'done', from)).slice(from);
    expect(lines).toEqual([
      { type: 'tool_result', id: 'res_1', call: 'call_1', parent: 'msg_1', output: expect.stringMatching(/\[interrupted\]\n$/), failed: true },
      { type: 'done', reason: 'interrupted' },
    ]);
    await vi.waitFor(() => expect(alive(sleep.pid)).toBe(false));
    // The shell went too (reaped by the mock), so it did not go on to its next command.
    await vi.waitFor(() => expect(descendants(mock.child.pid!)).toEqual([]));
    await new Promise((r) => setTimeout(r, 250));
    expect(existsSync(marker)).toBe(false);
    expect(mock.lines.slice(from + 2)).toEqual([]);
    const next = await mock.turn('shell echo next');
    expect(next.find((l) => l.type === 'tool_result')).toMatchObject({ output: 'next\n' });
  });

  it('kills its running shell command when stdin closes (the daemon is gone)', async () => {
    const mock = start();
    mock.send({ type: 'prompt', text: 'shell sleep 1000' });
    const sleep = await runningSleep(mock);
    mock.child.stdin.end();
    expect(await mock.exited).toBe(0);
    await vi.waitFor(() => expect(alive(sleep.pid)).toBe(false));
  });
});
