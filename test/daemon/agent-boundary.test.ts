// The agent/daemon boundary with real processes (docs/security.md): a mock agent's `shell` looks
// for the daemon's token every way a prompt-injected agent could, and tries to answer its own
// permission request over HTTP. Without --agent-user the environment must already hold nothing of
// the daemon's configuration; with --token-file and --agent-user the token must be out of reach
// and the reply refused; a default daemon (no token flag) makes a token its agent's reply lacks. Switching users needs root: these tests fail (never skip) without it.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';
import { buildInstall, cleanEnv, DaemonProcess, type DaemonOptions } from '../support/daemon-process.js';
import { expectNoUnparsed, waitFor } from '../support/helpers.js';
import { allGone, killGroups } from '../support/procs.js';

const TOKEN = 'boundary-test-token-0123456789';
let install: { dir: string; remove: () => void } | undefined;
let scratch: string;
const daemons: DaemonProcess[] = [];
const groups = new Set<number>();

beforeAll(async () => {
  install = await buildInstall();
  scratch = mkdtempSync(join(tmpdir(), 'agentwire-boundary-'));
  chmodSync(scratch, 0o755); // the agent user must reach its cwd below it
}, 180_000);

afterEach(() => {
  for (const d of daemons.splice(0)) d.stop();
  killGroups(groups);
  groups.clear();
});

afterAll(() => {
  install?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function start(options: DaemonOptions): DaemonProcess {
  // In memory: these tests are about the boundary, and must not share the user's data dir.
  const daemon = new DaemonProcess(install!.dir, { ...options, args: [...(options.args ?? []), '--persist', 'off'] });
  daemons.push(daemon);
  return daemon;
}

/** A directory any user may use as a session's cwd. */
function sharedDir(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  return dir;
}

function api(port: number, token: string | undefined) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    expect(res.status, text).toBeLessThan(300);
    return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };
  const events = async (sid: string) => ((await call('GET', `/v1/sessions/${sid}/events?offset=0&limit=10000`)) as { events: UniversalEvent[] }).events;
  /** Sends a message and resolves with the turn's events once it ended or waits for a human. */
  const turn = async (sid: string, message: string) => {
    const before = (await events(sid)).length;
    await call('POST', `/v1/sessions/${sid}/messages`, { message });
    return waitFor(
      async () => {
        const after = (await events(sid)).slice(before);
        return after.some((e) => e.type === 'turn.ended' || e.type === 'permission.requested' || e.type === 'session.ended') ? after : undefined;
      },
      15_000,
      `turn '${message.slice(0, 40)}'`,
    );
  };
  /** The mock's pid (its process group), remembered for the cleanup. */
  const create = async (sid: string, body: Record<string, unknown>) => {
    await call('POST', `/v1/sessions/${sid}`, { agent: 'mock', ...body });
    const pid = Number((await events(sid)).find((e) => e.type === 'session.started')?.data.metadata?.pid);
    expect(pid).toBeGreaterThan(0);
    groups.add(pid);
    return pid;
  };
  return { call, events, turn, create };
}

/** What the `shell` command printed (stdout and stderr, as the mock's tool_result carries them). */
function shellOutput(events: UniversalEvent[]): string {
  const result = events.find((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_result');
  const part = result?.type === 'item.completed' ? result.data.item.content.find((p) => p.type === 'tool_result') : undefined;
  expect(part, 'the shell command’s tool_result').toBeDefined();
  return (part as { output: string }).output;
}

const lines = (text: string) => text.split('\n');

describe('agent environment (no --agent-user)', () => {
  it('holds no AGENTWIRE_* or LOG_LEVEL, while PATH, HOME, proxies, provider settings and the session env reach it', async () => {
    const daemon = start({
      env: cleanEnv({
        AGENTWIRE_TOKEN: TOKEN,
        AGENTWIRE_MAX_SESSIONS: '7',
        LOG_LEVEL: 'info',
        HOME: '/root',
        HTTPS_PROXY: 'http://proxy.invalid:3128',
        ANTHROPIC_BASE_URL: 'http://provider.invalid',
      }),
    });
    const port = await daemon.port();
    const { create, turn, events } = api(port, TOKEN);
    await create('env', { env: { SESSION_MARKER: 'from-the-session' } });
    const output = shellOutput(await turn('env', 'shell env'));
    expect(lines(output).filter((l) => l.startsWith('AGENTWIRE_') || l.startsWith('LOG_LEVEL='))).toEqual([]);
    expect(output).not.toContain(TOKEN);
    expect(lines(output)).toEqual(
      expect.arrayContaining([
        `PATH=${process.env.PATH}`,
        'HOME=/root',
        'HTTPS_PROXY=http://proxy.invalid:3128',
        'ANTHROPIC_BASE_URL=http://provider.invalid',
        'SESSION_MARKER=from-the-session',
      ]),
    );
    expectNoUnparsed(await events('env'));
  }, 60_000);
});

describe('--token-file and --agent-user nobody', () => {
  it('leaves the token out of reach, and a reply to its own permission gets 401 and changes nothing', async () => {
    expect(process.getuid?.(), 'these tests start agents as another user: run them as root (CI does)').toBe(0);
    const secrets = join(scratch, 'secrets');
    mkdirSync(secrets, { mode: 0o700 });
    const tokenFile = join(secrets, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const work = sharedDir('work');
    const daemon = start({ args: ['--token-file', tokenFile, '--agent-user', 'nobody'], env: cleanEnv({ AGENTWIRE_CANARY: 'canary-in-daemon-env' }) });
    const port = await daemon.port();
    const { create, turn, events, call } = api(port, TOKEN);
    const pid = await create('s1', { cwd: work });
    // A cwd the agent user cannot read is refused up front, not left to fail in its tools.
    const refused = await fetch(`http://127.0.0.1:${port}/v1/sessions/s2`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'mock', cwd: secrets }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'invalid_cwd', cwd: secrets, detail: expect.stringContaining("agent user 'nobody' cannot read cwd") });
    expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/^Uid:\t65534\t65534\t65534\t65534$/m);

    // Every place the token could be: the environment, the daemon's /proc files, the token file.
    const look = [
      'id -u',
      'grep -E "^(Gid|Groups):" /proc/self/status',
      'env',
      `cat /proc/${daemon.pid}/environ`,
      `tr "\\0" " " < /proc/${daemon.pid}/cmdline; echo`,
      `cat ${tokenFile}`,
      `ls ${secrets}`,
    ].join('; ');
    const output = shellOutput(await turn('s1', `shell ${look}`));
    expect(output).not.toContain(TOKEN);
    expect(output).not.toContain('canary-in-daemon-env');
    expect(lines(output)).toEqual(expect.arrayContaining(['65534', 'Gid:\t65534\t65534\t65534\t65534', 'HOME=/nonexistent', 'USER=nobody']));
    expect(output).toMatch(/^Groups:\s*$/m); // no supplementary groups (not even root's)
    expect(output).toContain(`/proc/${daemon.pid}/environ: Permission denied`);
    expect(output).toContain(`${tokenFile}: Permission denied`);
    expect(output).toContain(`--token-file ${tokenFile}`); // the command line names the file, never the token

    // The agent starts a helper, then asks for permission; the helper answers for it, without a token.
    writeFileSync(join(work, 'approve.mjs'), APPROVE_SCRIPT);
    await turn('s1', `shell ${process.execPath} approve.mjs http://127.0.0.1:${port} s1 > approve.out 2>&1 &`);
    const asked = (await turn('s1', 'permission')).find((e) => e.type === 'permission.requested');
    const permissionId = asked?.type === 'permission.requested' ? asked.data.permission_id : '';
    expect(permissionId).not.toBe('');
    writeFileSync(join(work, 'permission-id'), permissionId);
    const status = await waitFor(() => existsSync(join(work, 'approve.status')) && readFileSync(join(work, 'approve.status'), 'utf8'), 15_000, 'the helper’s reply');
    expect(status, readFileSync(join(work, 'approve.out'), 'utf8')).toBe('401 401');
    expect(((await call('GET', '/v1/sessions/s1')) as { status: string }).status).toBe('waiting');
    expect((await events('s1')).filter((e) => e.type === 'permission.resolved')).toEqual([]);

    // The human still decides, and the daemon (root) still ends the agent's whole group.
    await call('POST', `/v1/sessions/s1/permissions/${permissionId}/reply`, { reply: 'reject' });
    await waitFor(async () => (await events('s1')).some((e) => e.type === 'permission.resolved'), 5_000, 'permission.resolved');
    expectNoUnparsed(await events('s1'));
    await call('DELETE', '/v1/sessions/s1');
    await allGone(pid, 5_000, [process.pid, daemon.pid]);
  }, 90_000);
});

/** Run by the agent as its tool: waits for the id of the pending permission, then approves it
 *  over HTTP as a prompt-injected agent would (it has no token), with a header and as ?token=. */
const APPROVE_SCRIPT = `
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const [base, sid] = process.argv.slice(2);
for (let i = 0; i < 300 && !existsSync('permission-id'); i++) await new Promise((r) => setTimeout(r, 50));
const id = readFileSync('permission-id', 'utf8').trim();
const url = base + '/v1/sessions/' + sid + '/permissions/' + id + '/reply';
const body = JSON.stringify({ reply: 'always' });
const headers = { 'content-type': 'application/json' };
const plain = await fetch(url, { method: 'POST', headers, body });
const guessed = await fetch(url + '?token=', { method: 'POST', headers: { ...headers, authorization: 'Bearer ' }, body });
writeFileSync('approve.status', plain.status + ' ' + guessed.status);
`;

describe('start-up refusals', () => {
  async function refused(options: DaemonOptions): Promise<string> {
    const daemon = start(options);
    const exit = await Promise.race([daemon.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
    expect(exit, daemon.stderr).toEqual({ code: 2, signal: null });
    expect(daemon.logs.some((l) => l.msg?.startsWith('Server listening'))).toBe(false);
    return daemon.stderr;
  }

  it('--agent-user with an unknown user', async () => {
    expect(await refused({ args: ['--agent-user', 'no-such-user-here', '--no-token'] })).toMatch(/^agentwire: --agent-user no-such-user-here: no such user in \/etc\/passwd/);
  }, 30_000);

  it('--agent-user from a daemon that is neither root nor has the capabilities', async () => {
    expect(process.getuid?.(), 'this test starts the daemon as nobody: run it as root (CI does)').toBe(0);
    const stderr = await refused({ args: ['--agent-user', 'daemon', '--no-token'], uid: 65534, gid: 65534 });
    expect(stderr).toMatch(/^agentwire: --agent-user daemon: the daemon cannot switch users; run it as root or give it CAP_SETUID, CAP_SETGID, CAP_KILL and CAP_CHOWN \(it runs as uid 65534, without /);
  }, 30_000);

  it('--token with --token-file', async () => {
    const file = join(scratch, 'both-token');
    writeFileSync(file, TOKEN, { mode: 0o600 });
    expect(await refused({ args: ['--token', TOKEN, '--token-file', file] })).toMatch(/^agentwire: --token and --token-file .* are both set; use one/);
  }, 30_000);

  it('--agent-user with a token file that user can read', async () => {
    const open = join(scratch, 'open');
    mkdirSync(open, { mode: 0o755 });
    const file = join(open, 'token');
    writeFileSync(file, TOKEN, { mode: 0o644 });
    expect(await refused({ args: ['--token-file', file, '--agent-user', 'nobody'] })).toMatch(
      new RegExp(`^agentwire: --token-file ${file}: the agent user 'nobody' can read it; make it readable by the daemon only \\(chmod 600\\)`),
    );
  }, 30_000);

});

describe('a default daemon (no token given)', () => {
  /** A daemon with its own data dir (a store, so a token file), no token flag and no --no-token. */
  function startDefault(extra: string[] = []): { daemon: DaemonProcess; dataDir: string } {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentwire-boundary-data-'));
    const daemon = new DaemonProcess(install!.dir, { args: ['--data-dir', dataDir, ...extra] });
    daemons.push(daemon);
    return { daemon, dataDir };
  }

  it('makes a token, says so on stderr, and its own agent cannot answer its permission without it', async () => {
    const { daemon, dataDir } = startDefault();
    const port = await daemon.port();
    const token = await daemon.announcedToken();
    const file = join(dataDir, 'token');
    expect(daemon.stderr.trim()).toBe(
      `agentwire: this daemon needs its token; open http://127.0.0.1:${port}/?token=${token} (saved in ${file}; scripts: -H "Authorization: Bearer $(node bin/agentwire.js token --data-dir ${dataDir})")`,
    );
    expect(token.length).toBeGreaterThanOrEqual(43); // 32 random bytes
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Root without --agent-user: the warning says who the agents are.
    expect(daemon.logs.filter((l) => (l as { level?: number }).level === 40).map((l) => l.msg)).toEqual([expect.stringMatching(/runs as root without --agent-user: agents .* run as root, can read the token/)]);
    const refused = await fetch(`http://127.0.0.1:${port}/v1/sessions`);
    expect(refused.status).toBe(401);
    // The 401 says where the token is and how to print it, as the start-up line does.
    expect(((await refused.json()) as { detail: string }).detail).toBe(
      `This daemon needs Authorization: Bearer <token>. Its token is in ${file}; print it with: node bin/agentwire.js token --data-dir ${dataDir}`,
    );
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);

    // The reproduction: the agent's helper polls for the pending permission and answers
    // it without the token: 401 both ways, and the permission still waits for the human.
    const work = sharedDir('default-work');
    const { create, turn, events, call } = api(port, token);
    const pid = await create('s1', { cwd: work });
    writeFileSync(join(work, 'approve.mjs'), APPROVE_SCRIPT);
    await turn('s1', `shell ${process.execPath} approve.mjs http://127.0.0.1:${port} s1 > approve.out 2>&1 &`);
    const asked = (await turn('s1', 'permission')).find((e) => e.type === 'permission.requested');
    const permissionId = asked?.type === 'permission.requested' ? asked.data.permission_id : '';
    writeFileSync(join(work, 'permission-id'), permissionId);
    const status = await waitFor(() => existsSync(join(work, 'approve.status')) && readFileSync(join(work, 'approve.status'), 'utf8'), 15_000, 'the helper’s reply');
    expect(status, readFileSync(join(work, 'approve.out'), 'utf8')).toBe('401 401');
    expect(((await call('GET', '/v1/sessions/s1')) as { status: string }).status).toBe('waiting');
    expect((await events('s1')).filter((e) => e.type === 'permission.resolved')).toEqual([]);
    expectNoUnparsed(await events('s1'));
    await call('DELETE', '/v1/sessions/s1');
    await allGone(pid, 5_000, [process.pid, daemon.pid]);

    // The next start reuses the token: bookmarks, scripts and clients keep working.
    daemon.stop();
    await daemon.exited;
    const again = new DaemonProcess(install!.dir, { args: ['--data-dir', dataDir] });
    daemons.push(again);
    await again.port();
    expect(await again.announcedToken()).toBe(token);
    rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('with --agent-user and no token flag: starts with its own token, which the agent user cannot read', async () => {
    expect(process.getuid?.(), 'this test starts agents as another user: run it as root (CI does)').toBe(0);
    const { daemon, dataDir } = startDefault(['--agent-user', 'nobody']);
    const port = await daemon.port();
    const token = await daemon.announcedToken();
    const work = sharedDir('default-agent-user');
    const { create, turn, call } = api(port, token);
    const pid = await create('s1', { cwd: work });
    const output = shellOutput(await turn('s1', `shell id -u; cat ${join(dataDir, 'token')}`));
    expect(lines(output)).toContain('65534');
    expect(output).toContain('Permission denied');
    expect(output).not.toContain(token);
    // Agents run as another user: nothing to warn about.
    expect(daemon.logs.filter((l) => (l as { level?: number }).level === 40)).toEqual([]);
    await call('DELETE', '/v1/sessions/s1');
    await allGone(pid, 5_000, [process.pid, daemon.pid]);
    rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('--no-token runs open, and says who can drive it', async () => {
    const daemon = start({ args: ['--no-token'] });
    const port = await daemon.port();
    expect((await fetch(`http://127.0.0.1:${port}/v1/sessions`)).status).toBe(200);
    expect(daemon.stderr).toBe('');
    const warnings = daemon.logs.filter((l) => (l as { level?: number }).level === 40).map((l) => l.msg);
    expect(warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^--no-token: .*every local process, the agents it runs included/)]));
  }, 30_000);
});
