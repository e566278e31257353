// The shared start-up step (src/agents/readiness.ts): ready wins, or the process exits, or the
// start timeout passes; on anything but ready the process group is killed and the failure names
// the first stderr lines.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { ChildProcess } from '../../../src/process/spawn.js';
import { awaitReady, startFailedError, untilReady } from '../../../src/agents/readiness.js';

const spawnNode = (script: string) =>
  ChildProcess.start({ command: process.execPath, args: ['-e', script], cwd: process.cwd(), env: {}, maxLineChars: 1000, killGraceMs: 200 }, () => {});
const words = { title: 'Tester', details: { agent: 'mock' }, timeout: 'did not say hello in time', error: (e: Error) => `said no: ${e.message}` };

describe('awaitReady', () => {
  it('returns the ready value and leaves the process running', async () => {
    const proc = await spawnNode('setInterval(() => {}, 1000)');
    const outcome = await awaitReady(proc, Promise.resolve(42), 5_000);
    expect(outcome).toEqual({ ok: true, value: 42 });
    expect(proc.running).toBe(true);
    await proc.kill();
  });

  it('reports an exit before ready with its stderr head, without killing', async () => {
    const proc = await spawnNode('console.error("no login"); process.exit(3)');
    const outcome = await awaitReady(proc, new Promise<never>(() => {}), 5_000);
    expect(outcome).toMatchObject({ ok: false, reason: 'exit', exit: { exitCode: 3, killed: false } });
    const error = startFailedError(outcome as Extract<typeof outcome, { ok: false }>, words);
    expect(error.code).toBe('agent_start_failed');
    expect(error.detail).toBe('Tester exited with code 3 before it was ready. stderr: no login');
  });

  it('kills and reaps the process group on a timeout', async () => {
    const proc = await spawnNode('console.error("still thinking"); setInterval(() => {}, 1000)');
    await new Promise((r) => setTimeout(r, 300));
    const outcome = await awaitReady(proc, new Promise<never>(() => {}), 100);
    expect(outcome).toMatchObject({ ok: false, reason: 'timeout', exit: { killed: true } });
    expect(proc.running).toBe(false);
    expect(startFailedError(outcome as Extract<typeof outcome, { ok: false }>, words).detail).toBe('Tester did not say hello in time. stderr: still thinking');
  });

  it('kills the process when the handshake fails, and keeps a catalogue error when asked', async () => {
    const proc = await spawnNode('setInterval(() => {}, 1000)');
    await expect(untilReady(proc, Promise.reject(new Error('bad version')), 5_000, words)).rejects.toMatchObject({ detail: 'Tester said no: bad version.' });
    expect(proc.running).toBe(false);
    const own = new ApiError('invalid_request', 'bad MCP server');
    const proc2 = await spawnNode('setInterval(() => {}, 1000)');
    await expect(untilReady(proc2, Promise.reject(own), 5_000, { ...words, keepApiErrors: true })).rejects.toBe(own);
    expect(proc2.running).toBe(false);
  });

  it('starts work given as a function after its own timer, so a timeout of the same length is reported as the timeout', async () => {
    const proc = await spawnNode('setInterval(() => {}, 1000)');
    const work = () => new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the inner request timed out')), 50));
    expect(await awaitReady(proc, work, 50)).toMatchObject({ ok: false, reason: 'timeout' });
  });
});
