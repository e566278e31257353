// The REAL pinned Amp CLI. What runs everywhere (CI too) needs no network and no account: its
// version; that the stand-in's pre-flight answers (stderr, exit code) are the real binary's, byte
// for byte; that the real binary's `delegate` rule runs agentwire's delegate program against the
// driver's listener (through `amp permissions test`, which evaluates the same rules without a
// model); and that a session without AMP_API_KEY fails at once instead of hanging on the login
// prompt. A real turn needs Amp's servers and an account: it runs only when AMP_API_KEY is set
// (off in CI; see docs/amp.md).
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DelegateServer } from '../../../src/agents/amp/delegate-server.js';
import { writeSessionFiles } from '../../../src/agents/amp/settings.js';
import { testAgentExecutable } from '../../support/test-agents.js';
import { PINNED_AGENTS } from '../../../src/agents/versions.js';
import { eventsUntil, expectWellFormedTurn, sendTurn } from '../../support/e2e-turns.js';
import { makeSandbox } from '../../support/sandbox.js';
import { makeApp, post } from '../../support/helpers.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['amp']);

const STANDIN = new URL('../../support/amp-standin/amp', import.meta.url).pathname;
const sandbox = makeSandbox('amp-live');
afterAll(() => sandbox.cleanup());

async function realAmp(): Promise<string> {
  return testAgentExecutable('amp');
}

/** Runs an executable like the driver does (stdin closed, a throwaway home, a dummy key). */
const run = (bin: string, args: string[], env: Record<string, string> = {}) =>
  execa(bin, args, { env: { ...sandbox.env, AMP_API_KEY: 'sgamp_dummy', AMP_STANDIN_HOME: join(sandbox.root, 'threads'), ...env }, extendEnv: false, stdin: 'ignore', reject: false, timeout: 15_000, cwd: sandbox.work });

describe('the real Amp CLI (offline)', () => {
  it('is the pinned version', async () => {
    const r = await run(await realAmp(), ['--version']);
    // The real one appends how long ago that was (", 1mo ago"), which depends on today's date.
    const released = `${PINNED_AGENTS.amp.version} (released 2026-09-23T05:55:11.000Z`;
    expect(r.stdout.startsWith(released), r.stdout).toBe(true);
    expect((await run(STANDIN, ['--version'])).stdout.startsWith(released)).toBe(true);
  });

  it.each([
    ['--continue', 'T-12345678-0000-0000-0000-000000000000'],
    ['threads', 'continue', 'not-a-thread', '-x', 'hi', '--stream-json'],
    ['--stream-json'],
    ['-x', 'hi', '--stream-json-input'],
  ])('answers pre-flight errors exactly as the stand-in does: %s', async (...args) => {
    const real = await run(await realAmp(), args);
    const standin = await run(STANDIN, args);
    expect(real.exitCode).toBe(1);
    expect({ stdout: standin.stdout, stderr: standin.stderr, exitCode: standin.exitCode }).toEqual({ stdout: real.stdout, stderr: real.stderr, exitCode: real.exitCode });
  });

  it("runs agentwire's delegate program from the session settings, and obeys its answer", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwire-amp-live-'));
    const seen: unknown[] = [];
    let allow = true;
    const server = await DelegateServer.start(join(dir, 'delegate.sock'), (request, answer) => {
      seen.push(request);
      answer(allow, allow ? undefined : 'The user rejected this tool use.');
    });
    try {
      const files = await writeSessionFiles(dir, { permissionMode: 'default', socketPath: server.socketPath, secret: server.secret });
      const test = (tool: string, extra: string[]) => run(realAmpPath!, ['permissions', 'test', tool, ...extra, '--settings-file', files.settingsFile, '--json']);
      realAmpPath = await realAmp();
      const allowed = await test('Bash', ['--cmd', 'rm -rf build']);
      expect(allowed.exitCode, allowed.stderr).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ action: 'allow', matchedEntry: { action: 'delegate', to: files.delegateScript } });
      expect(seen).toEqual([{ tool: 'Bash', thread_id: null, input: { cmd: 'rm -rf build' } }]);
      allow = false;
      const rejected = await test('edit_file', ['--path', 'a.txt']);
      expect(rejected.exitCode).toBe(2);
      expect(JSON.parse(rejected.stdout)).toMatchObject({ action: 'reject', error: 'The user rejected this tool use.\n' });
      // Read-only tools never reach the delegate.
      const read = await test('Read', ['--path', 'a.txt']);
      expect(JSON.parse(read.stdout)).toMatchObject({ action: 'allow', matchedEntry: { tool: 'Read', action: 'allow' } });
      expect(seen).toHaveLength(2);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a session without AMP_API_KEY at once (the CLI would wait for a login forever)', async () => {
    const env = { ...process.env };
    delete env.AMP_API_KEY;
    const app = await makeApp({ baseDir: sandbox.work, agentEnv: { env } });
    try {
      const started = Date.now();
      const res = await post(app, '/v1/sessions/nokey', { agent: 'amp', cwd: sandbox.work, env: sandbox.env });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.statusCode).toBe(502);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ code: 'agent_start_failed', detail: expect.stringContaining('AMP_API_KEY') });
    } finally {
      await app.app.close();
    }
  });
});
let realAmpPath: string | undefined;

describe('the real Amp CLI with an account', () => {
  // The only conditional test of the suite: a real turn needs Amp's servers and an account.
  it.runIf(!!process.env.AMP_API_KEY)('runs a real turn through the daemon', { timeout: 180_000 }, async () => {
    const app = await makeApp({ baseDir: sandbox.work });
    try {
      const res = await post(app, '/v1/sessions/live', { agent: 'amp', cwd: sandbox.work, env: { ...sandbox.env, AMP_API_KEY: process.env.AMP_API_KEY! }, permissionMode: 'bypass' });
      expect(res.statusCode, res.body).toBe(200);
      const message = 'Reply with exactly the word: pong';
      const turn = await sendTurn(app, 'live', message, { until: ['turn.ended', 'session.ended'] });
      await expectWellFormedTurn(app, 'live', turn, message);
      const ended = await eventsUntil(app, 'live', 0, ['turn.ended']);
      expect(ended.some((e) => e.type === 'session.started' && /^T-/.test(e.native_session_id ?? ''))).toBe(true);
    } finally {
      await app.app.close();
    }
  });
});
