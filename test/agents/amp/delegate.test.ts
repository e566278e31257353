// The delegate program and its listener on their own (test/agents/amp/e2e.test.ts runs them under the
// stand-in, test/agents/amp/live.test.ts under the real binary): the secret is checked, nothing is ever
// allowed by default, requests are bounded, and the session files say what docs/amp.md says.
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DelegateServer, type DelegateRequest } from '../../../src/agents/amp/delegate-server.js';
import { writeSessionFiles } from '../../../src/agents/amp/settings.js';

const DELEGATE = new URL('../../../src/agents/amp/delegate.js', import.meta.url).pathname;
let dir: string;
let server: DelegateServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Runs delegate.js as Amp does: input JSON on stdin, the tool name in the environment. */
const ask = (env: Record<string, string>, input = '{"cmd":"make"}') =>
  execa(process.execPath, [DELEGATE], { input, env: { AGENT: 'amp', AGENT_TOOL_NAME: 'Bash', ...env }, extendEnv: false, reject: false, timeout: 10_000 });

async function listen(onRequest: (r: DelegateRequest, answer: (allow: boolean, message?: string) => void) => void) {
  dir = mkdtempSync(join(tmpdir(), 'agentwire-amp-test-'));
  server = await DelegateServer.start(join(dir, 'delegate.sock'), onRequest);
  return { AGENTWIRE_AMP_SOCKET: server.socketPath, AGENTWIRE_AMP_SECRET: server.secret };
}

describe('the Amp delegate program and listener', () => {
  it('allows (exit 0) and rejects (exit 2, the reason on stderr) as the listener answers', async () => {
    const seen: DelegateRequest[] = [];
    let allow = true;
    const env = await listen((r, answer) => (seen.push(r), answer(allow, allow ? undefined : 'no, thanks')));
    expect((await ask({ ...env, AMP_THREAD_ID: 'T-1' })).exitCode).toBe(0);
    allow = false;
    const rejected = await ask(env);
    expect({ exitCode: rejected.exitCode, stderr: rejected.stderr }).toEqual({ exitCode: 2, stderr: 'no, thanks' });
    expect(seen).toEqual([
      { tool: 'Bash', thread_id: 'T-1', input: { cmd: 'make' } },
      { tool: 'Bash', thread_id: null, input: { cmd: 'make' } },
    ]);
  });

  it('rejects with a wrong secret, without a listener, and when the listener closes while it waits', async () => {
    let calls = 0;
    const env = await listen(() => calls++);
    const wrong = await ask({ ...env, AGENTWIRE_AMP_SECRET: 'guess' });
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain('unauthorised');
    expect(calls).toBe(0);
    const none = await ask({ ...env, AGENTWIRE_AMP_SOCKET: join(dir, 'missing.sock') });
    expect(none.exitCode).toBe(2);
    const waiting = ask(env);
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toBe(1);
    await server!.close();
    server = undefined;
    const closed = await waiting;
    expect({ exitCode: closed.exitCode, stderr: closed.stderr }).toEqual({ exitCode: 2, stderr: 'agentwire delegate: the session closed before the user answered' });
  });

  it('refuses a request over 8 MiB', async () => {
    let calls = 0;
    const env = await listen(() => calls++);
    const big = await ask(env, JSON.stringify({ content: 'x'.repeat(9 << 20) }));
    expect(big.exitCode).toBe(2);
    expect(calls).toBe(0);
  });

  it('writes private session files: delegate rules after read-only allows, MCP servers, the wrapper', async () => {
    await listen(() => {});
    const files = await writeSessionFiles(dir, { permissionMode: 'acceptEdits', socketPath: server!.socketPath, secret: server!.secret, mcp: { docs: { command: 'docs-mcp' } } });
    const settings = JSON.parse(readFileSync(files.settingsFile, 'utf8')) as Record<string, { tool: string; action: string; to?: string }[]>;
    const rules = settings['amp.permissions']!;
    expect(rules.at(-1)).toEqual({ tool: '*', action: 'delegate', to: files.delegateScript });
    expect(rules.filter((r) => r.action === 'allow').map((r) => r.tool)).toEqual(expect.arrayContaining(['Read', 'Grep', 'create_file', 'edit_file']));
    expect(rules.some((r) => r.tool === 'Bash')).toBe(false);
    expect(settings['amp.mcpServers']).toEqual({ docs: { command: 'docs-mcp' } });
    expect(statSync(files.delegateScript).mode & 0o777).toBe(0o700);
    expect(statSync(files.settingsFile).mode & 0o777).toBe(0o600);
    const defaults = await writeSessionFiles(dir, { permissionMode: 'default', socketPath: server!.socketPath, secret: server!.secret });
    const plain = (JSON.parse(readFileSync(defaults.settingsFile, 'utf8')) as Record<string, { tool: string }[]>)['amp.permissions']!;
    expect(plain.some((r) => r.tool === 'edit_file')).toBe(false);
  });
});
