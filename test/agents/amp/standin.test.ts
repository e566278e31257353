// The Amp stand-in on its own: the documented behaviours the e2e tests rely on but do not show
// (docs/amp.md, "Amp's headless format"). Its pre-flight texts are compared with the
// real binary's in amp-live.test.ts.
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeSandbox } from '../../support/sandbox.js';

const STANDIN = new URL('../../support/amp-standin/amp', import.meta.url).pathname;
const sandbox = makeSandbox('amp-standin');
afterAll(() => sandbox.cleanup());
const env = (extra: Record<string, string> = {}) => ({ ...sandbox.env, AMP_API_KEY: 'k', AMP_STANDIN_HOME: join(sandbox.root, 'threads'), ...extra });
const lines = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the Amp stand-in', () => {
  it('fails with the stdin timeout when stdin is left open (exit 1, nothing on stdout)', async () => {
    const child = execa(STANDIN, ['-x', 'hi', '--stream-json'], { env: env({ AMP_STANDIN_STDIN_TIMEOUT_MS: '300' }), extendEnv: false, stdin: 'pipe', reject: false, cwd: sandbox.work });
    const r = await child;
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout: '', stderr: 'Error: Timeout while reading from stdin', exitCode: 1 });
  });

  it('waits on a login prompt without AMP_API_KEY', async () => {
    const child = execa(STANDIN, ['-x', 'hi', '--stream-json'], { env: { ...sandbox.env }, extendEnv: false, stdin: 'ignore', reject: false, cwd: sandbox.work });
    const stdout = await new Promise<string>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(c.toString())));
    expect(stdout).toContain('No API key found. Starting login flow');
    await new Promise((r) => setTimeout(r, 300));
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await child;
  });

  it('continues a thread by id and refuses an unknown one without the Error: prefix', async () => {
    const first = await execa(STANDIN, ['-x', 'one', '--stream-json'], { env: env(), extendEnv: false, stdin: 'ignore', cwd: sandbox.work });
    const thread = lines(first.stdout)[0]!.session_id as string;
    const second = await execa(STANDIN, ['threads', 'continue', thread, '-x', 'two', '--stream-json'], { env: env(), extendEnv: false, stdin: 'ignore', cwd: sandbox.work });
    expect(lines(second.stdout).map((l) => l.session_id)).toEqual([thread, thread, thread, thread]);
    expect(lines(second.stdout).at(-1)).toMatchObject({ type: 'result', subtype: 'success', num_turns: 1, result: 'You said: two (message 2 in this thread)' });
    const missing = 'T-00000000-0000-0000-0000-000000000000';
    const r = await execa(STANDIN, ['threads', 'continue', missing, '-x', 'x', '--stream-json'], { env: env(), extendEnv: false, stdin: 'ignore', reject: false, cwd: sandbox.work });
    expect({ stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stderr: `Thread https://ampcode.com/threads/${missing} does not exist.`, exitCode: 1 });
  });

  it('answers SIGTERM mid-turn with a cancelled error result and exit code 0', async () => {
    const child = execa(STANDIN, ['-x', '/sleep 10000', '--stream-json'], { env: env(), extendEnv: false, stdin: 'ignore', reject: false, cwd: sandbox.work });
    await new Promise<void>((resolve) => child.stdout!.on('data', (c: Buffer) => c.toString().includes('"type":"user"') && resolve()));
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(0);
    expect(lines(r.stdout).at(-1)).toMatchObject({ type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, error: 'User cancelled (SIGINT/SIGTERM)' });
  });
});
