import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines, type Line } from '../../../src/process/line-reader.js';
import { ChildProcess } from '../../../src/process/spawn.js';
import { StderrTail } from '../../../src/process/stderr-tail.js';
import { waitFor } from '../../support/helpers.js';
import { alive } from '../../support/procs.js';


describe('StderrTail', () => {
  it('keeps everything when short', () => {
    const t = new StderrTail();
    t.push('one\ntw');
    t.push('o\nthree');
    expect(t.output()).toEqual({ head: 'one\ntwo\nthree', truncated: false, total_lines: 3 });
  });

  it('keeps the first 20 and last 50 lines of a long stderr', () => {
    const t = new StderrTail();
    for (let i = 1; i <= 200; i++) t.push(`line ${i}\n`);
    const out = t.output();
    expect(out.truncated).toBe(true);
    expect(out.total_lines).toBe(200);
    expect(out.head!.split('\n')).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i + 1}`));
    expect(out.tail!.split('\n')).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i + 151}`));
  });

  it('has a tail only once stderr is longer than head and tail together (as docs/events.md says)', () => {
    const lines = (n: number) => {
      const t = new StderrTail();
      for (let i = 1; i <= n; i++) t.push(`line ${i}\n`);
      return t.output();
    };
    expect(new StderrTail().output()).toEqual({ head: '', truncated: false, total_lines: 0 });
    const whole = lines(70);
    expect(whole).toEqual({ head: Array.from({ length: 70 }, (_, i) => `line ${i + 1}`).join('\n'), truncated: false, total_lines: 70 });
    expect('tail' in whole).toBe(false);
    const cut = lines(71);
    expect({ truncated: cut.truncated, total_lines: cut.total_lines, head: cut.head!.split('\n').length, tail: cut.tail!.split('\n') }).toEqual({
      truncated: true,
      total_lines: 71,
      head: 20,
      tail: Array.from({ length: 50 }, (_, i) => `line ${i + 22}`),
    });
  });

  it('bounds very long lines', () => {
    const t = new StderrTail();
    t.push(`${'x'.repeat(10_000)}\n`);
    expect(t.output().head!.length).toBeLessThan(2_100);
  });
});

describe('readLines', () => {
  async function lines(chunks: string[], max = 100): Promise<Line[]> {
    const stream = new PassThrough();
    const got: Line[] = [];
    const done = readLines(stream, max, (l) => got.push(l));
    for (const c of chunks) stream.write(Buffer.from(c));
    stream.end();
    await done;
    return got;
  }

  it('frames lines across chunks, drops blank lines and CR, and flushes the last line', async () => {
    expect(await lines(['{"a":', '1}\r\n\n{"b"', ':2}\nlast'])).toEqual([
      { text: '{"a":1}', truncated: false },
      { text: '{"b":2}', truncated: false },
      { text: 'last', truncated: false },
    ]);
  });

  it('keeps multi-byte characters split across chunks intact', async () => {
    const bytes = Buffer.from('"héllo ✓"\n');
    const stream = new PassThrough();
    const got: Line[] = [];
    const done = readLines(stream, 100, (l) => got.push(l));
    stream.write(bytes.subarray(0, 3));
    stream.end(bytes.subarray(3));
    await done;
    expect(got).toEqual([{ text: '"héllo ✓"', truncated: false }]);
  });

  it('cuts an over-long line, marks it, and resumes at the next newline', async () => {
    expect(await lines(['x'.repeat(30), 'y'.repeat(30), '\nok\n'], 40)).toEqual([
      { text: 'x'.repeat(30) + 'y'.repeat(10), truncated: true },
      { text: 'ok', truncated: false },
    ]);
  });
});

describe('ChildProcess', () => {
  const opts = { cwd: process.cwd(), env: {}, maxLineChars: 1000, killGraceMs: 500 };

  it('delivers every stdout line before the exit, with stderr head/tail and exit code', async () => {
    const got: string[] = [];
    const child = await ChildProcess.start({ ...opts, command: 'sh', args: ['-c', 'echo one; echo two; echo oops >&2; exit 4'] }, (l) => got.push(l.text));
    const exit = await child.exited;
    expect(got).toEqual(['one', 'two']);
    expect(exit).toEqual({ exitCode: 4, signal: null, killed: false, stderr: { head: 'oops', truncated: false, total_lines: 1 } });
  });

  it('kills the whole process group, grandchildren included', async () => {
    const got: string[] = [];
    // The shell starts a grandchild and prints its pid; both must be gone after kill().
    const child = await ChildProcess.start({ ...opts, command: 'sh', args: ['-c', 'sleep 30 & echo $!; wait'] }, (l) => got.push(l.text));
    const grandchild = Number(await waitFor(() => got[0], 5000, 'grandchild pid'));
    expect(alive(grandchild)).toBe(true);
    const exit = await child.kill();
    expect(exit.killed).toBe(true);
    expect(exit.signal).toBe('SIGTERM');
    await waitFor(() => !alive(grandchild), 2000, 'grandchild to die');
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const got: string[] = [];
    const child = await ChildProcess.start({ ...opts, killGraceMs: 200, command: 'sh', args: ['-c', "trap '' TERM; echo ready; while true; do sleep 0.05; done"] }, (l) => got.push(l.text));
    await waitFor(() => got[0] === 'ready', 5000, 'ready');
    const started = Date.now();
    const exit = await child.kill();
    expect(exit.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('reports a command that cannot be spawned as an exit with the reason in stderr', async () => {
    const child = await ChildProcess.start({ ...opts, command: '/nonexistent/agent', args: [] }, () => {});
    const exit = await child.exited;
    expect(exit.exitCode).toBe(null);
    expect(exit.stderr.head).toMatch(/ENOENT/);
    await expect(child.writeLine('x')).rejects.toThrow(/not running/);
  });
});

describe('ChildProcess and what the agent leaves behind', () => {
  const opts = { cwd: process.cwd(), env: {}, maxLineChars: 1000, killGraceMs: 500 };

  it('reports the exit even while a child it left outside its group holds stdout and stderr', async () => {
    const got: string[] = [];
    // setsid puts the sleep in its own session: the group kill cannot reach it, and it keeps
    // both pipes open. The agent's exit must still be reported, promptly.
    const child = await ChildProcess.start({ ...opts, command: 'sh', args: ['-c', 'echo bye; setsid sleep 5 & exit 3'] }, (l) => got.push(l.text));
    const started = Date.now();
    const exit = await child.exited;
    expect(exit.exitCode).toBe(3);
    expect(got).toEqual(['bye']);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('kills a background child that holds stderr, once the agent exits', async () => {
    const got: string[] = [];
    const child = await ChildProcess.start({ ...opts, command: 'sh', args: ['-c', 'sleep 30 >/dev/null & echo $!; exit 0'] }, (l) => got.push(l.text));
    const exit = await child.exited;
    expect(exit.exitCode).toBe(0);
    const orphan = Number(got[0]);
    await waitFor(() => !alive(orphan), 2000, 'the background sleep to be killed with the group');
  });
});
