// The token a daemon makes when given none (src/daemon-token.ts), what `agentwire token` prints
// (src/token-command.ts) and the warnings at start (src/startup-warnings.ts), on real files in a
// throwaway data dir. The processes that announce and use it are in agent-boundary.test.ts.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { loadConfig } from '../../src/config.js';
import { agentwireCommand, daemonToken, tokenAnnouncement, tokenHelp } from '../../src/daemon-token.js';
import { startupWarnings } from '../../src/startup-warnings.js';
import { tokenCommand } from '../../src/token-command.js';

const root = mkdtempSync(join(tmpdir(), 'agentwire-token-test-'));
let n = 0;
const dataDir = () => mkdtempSync(join(root, `d${n++}-`));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

describe('daemonToken', () => {
  it('makes 32 random bytes in <data-dir>/token, mode 0600, and reuses them on the next start', () => {
    const dir = dataDir();
    const first = daemonToken(loadConfig(['--data-dir', dir], {}), []);
    expect(first).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), source: 'generated', file: join(dir, 'token') });
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(`${first.token}\n`);
    expect(daemonToken(loadConfig(['--data-dir', dir], {}), []).token).toBe(first.token);
    expect(daemonToken(loadConfig(['--data-dir', dataDir()], {}), []).token).not.toBe(first.token);
  });

  it('closes a token file of ours that others could read, and refuses one that holds no token', () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'token'), 'a-token-someone-made-0123\n', { mode: 0o644 });
    chmodSync(join(dir, 'token'), 0o644);
    expect(daemonToken(loadConfig(['--data-dir', dir], {}), []).token).toBe('a-token-someone-made-0123');
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    writeFileSync(join(dir, 'token'), 'short\n');
    expect(() => daemonToken(loadConfig(['--data-dir', dir], {}), [])).toThrow(ConfigError);
    expect(() => daemonToken(loadConfig(['--data-dir', dir], {}), [])).toThrow(/token file .* holds no valid token .* remove it and start again/);
  });

  it('with --persist off: a fresh token per run, in memory only', () => {
    const dir = dataDir();
    const a = daemonToken(loadConfig(['--data-dir', dir, '--persist', 'off'], {}), []);
    const b = daemonToken(loadConfig(['--data-dir', dir, '--persist', 'off'], {}), []);
    expect(a.source).toBe('generated');
    expect(a.file).toBeUndefined();
    expect(a.token).not.toBe(b.token);
    expect(() => statSync(join(dir, 'token'))).toThrow(/ENOENT/);
  });

  it('keeps a given token and says where it came from; --no-token makes none, and beside a token changes nothing', () => {
    const dir = dataDir();
    const argv = ['--data-dir', dir, '--token', 'a-long-enough-token'];
    expect(daemonToken(loadConfig(argv, {}), argv)).toEqual({ token: 'a-long-enough-token', source: 'flag' });
    expect(daemonToken(loadConfig(['--data-dir', dir], { AGENTWIRE_TOKEN: 'a-long-enough-token' }), [])).toEqual({ token: 'a-long-enough-token', source: 'env' });
    writeFileSync(join(dir, 'given'), 'a-token-from-a-file-0123\n', { mode: 0o600 });
    expect(daemonToken(loadConfig(['--data-dir', dir, '--token-file', join(dir, 'given')], {}), [])).toEqual({ token: 'a-token-from-a-file-0123', source: 'file' });
    expect(daemonToken(loadConfig(['--data-dir', dir, '--no-token'], {}), [])).toEqual({ source: 'none' });
    expect(daemonToken(loadConfig(['--data-dir', dir], { AGENTWIRE_NO_TOKEN: '1' }), [])).toEqual({ source: 'none' });
    const both = [...argv, '--no-token'];
    expect(daemonToken(loadConfig(both, {}), both).token).toBe('a-long-enough-token');
    expect(() => statSync(join(dir, 'token'))).toThrow(/ENOENT/);
  });

  it('announces only a token it made: the inspector URL with it, where it is kept and the command that prints it', () => {
    const dir = dataDir();
    const made = daemonToken(loadConfig(['--data-dir', dir], {}), []);
    expect(tokenAnnouncement(made, 'http://127.0.0.1:2468')).toBe(
      `agentwire: this daemon needs its token; open http://127.0.0.1:2468/?token=${made.token} (saved in ${join(dir, 'token')}; scripts: -H "Authorization: Bearer $(agentwire token)")`,
    );
    // From a clone, with a data dir `token` would not find by itself.
    expect(tokenAnnouncement(made, 'http://127.0.0.1:2468', { command: 'node bin/agentwire.js', dataDir: dir })).toContain(
      `; scripts: -H "Authorization: Bearer $(node bin/agentwire.js token --data-dir ${dir})")`,
    );
    expect(tokenAnnouncement(made, 'http://x', { command: 'npx agentwire', dataDir: '/srv/my data' })).toContain(`$(npx agentwire token --data-dir '/srv/my data')`);
    // --persist off: no file, so no command can print it; the line itself shows it.
    const memory = daemonToken(loadConfig(['--persist', 'off'], {}), []);
    expect(tokenAnnouncement(memory, 'http://[::1]:1', { command: 'node bin/agentwire.js' })).toBe(
      `agentwire: this daemon needs its token; open http://[::1]:1/?token=${memory.token} (a new token for this run, kept in memory only (--persist off), so no command prints it; scripts: -H "Authorization: Bearer ${memory.token}")`,
    );
    expect(tokenAnnouncement({ token: 'a-long-enough-token', source: 'flag' }, 'http://x')).toBeUndefined();
    expect(tokenAnnouncement({ source: 'none' }, 'http://x')).toBeUndefined();
  });

  it('says in a 401 where the token in force is and how to print it', () => {
    const dir = dataDir();
    const made = daemonToken(loadConfig(['--data-dir', dir], {}), []);
    expect(tokenHelp(made, { command: 'npx agentwire', dataDir: dir })).toBe(`Its token is in ${join(dir, 'token')}; print it with: npx agentwire token --data-dir ${dir}`);
    expect(tokenHelp(daemonToken(loadConfig(['--persist', 'off'], {}), []), { command: 'agentwire' })).toBe('Its token was made for this run only (--persist off) and printed on its stderr at start.');
    expect(tokenHelp({ token: 'a-long-enough-token', source: 'flag' }, { command: 'agentwire' })).toMatch(/the one it was started with/);
    expect(tokenHelp({ token: 'a-long-enough-token', source: 'file' }, { command: 'agentwire' })).toMatch(/--token-file/);
    expect(tokenHelp({ source: 'none' }, { command: 'agentwire' })).toBeUndefined();
  });

  it('names agentwire as the shell that started it runs it: a clone, npx, a global install, a path', () => {
    const root = dataDir();
    const clone = join(root, 'clone');
    mkdirSync(join(clone, 'bin'), { recursive: true });
    writeFileSync(join(clone, 'bin/agentwire.js'), '');
    const script = join(clone, 'bin/agentwire.js');
    expect(agentwireCommand(script, clone, {})).toBe('node bin/agentwire.js');
    expect(agentwireCommand(script, root, {})).toBe(`node ${script}`);
    const pkg = join(root, 'project/node_modules/agentwire/bin');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'agentwire.js'), '');
    expect(agentwireCommand(join(pkg, 'agentwire.js'), join(root, 'project'), { npm_command: 'exec', PATH: join(root, 'project/node_modules/.bin') })).toBe('npx agentwire');
    const globalBin = join(root, 'global-bin');
    mkdirSync(globalBin);
    symlinkSync(script, join(globalBin, 'agentwire'));
    expect(agentwireCommand(script, root, { PATH: `/nonexistent:${globalBin}` })).toBe('agentwire');
    expect(agentwireCommand(join(root, 'gone.js'), root, {})).toBe('agentwire');
  });
});

describe('agentwire token', () => {
  function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
    const out: string[] = [];
    const err: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
    const code = tokenCommand(argv, env);
    vi.restoreAllMocks();
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('prints the token of --data-dir or AGENTWIRE_DATA_DIR, alone on its line', () => {
    const dir = dataDir();
    const { token } = daemonToken(loadConfig(['--data-dir', dir], {}), []);
    expect(run(['--data-dir', dir])).toEqual({ code: 0, stdout: token, stderr: '' });
    expect(run([`--data-dir=${dir}`])).toEqual({ code: 0, stdout: token, stderr: '' });
    expect(run([], { AGENTWIRE_DATA_DIR: dir })).toEqual({ code: 0, stdout: token, stderr: '' });
  });

  it('says what to do when there is no token yet, or the arguments are wrong', () => {
    const dir = dataDir();
    const missing = run(['--data-dir', dir]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(`agentwire: no token file at ${join(dir, 'token')}: start the daemon once without --token to make one, or use the token you gave it`);
    expect(run(['--bogus']).stderr).toMatch(/^agentwire: unknown argument --bogus/);
    expect(run(['--data-dir']).stderr).toBe('agentwire: --data-dir needs a value');
    expect(run(['--help']).stdout).toMatch(/^Usage: agentwire token \[--data-dir DIR\]/);
  });
});

describe('startupWarnings', () => {
  const config = (argv: string[] = []) => loadConfig(['--persist', 'off', ...argv], {});
  const made = { token: 'x'.repeat(43), source: 'generated' as const };

  it('names --agent-user when agents run as the daemon, and says so louder for root', () => {
    expect(startupWarnings(config(), made, { uid: 1000 })).toEqual([expect.stringMatching(/^agents run as this daemon's own user \(uid 1000\): an agent can read the token and drive the daemon.*--agent-user/)]);
    expect(startupWarnings(config(), made, { uid: 0 })).toEqual([expect.stringMatching(/^the daemon runs as root without --agent-user: agents .* run as root/)]);
    expect(startupWarnings(config(['--agent-user', 'nobody']), made, { uid: 0 })).toEqual([]);
  });

  it('warns about --no-token, and about --token on the command line (pointing to --token-file)', () => {
    expect(startupWarnings(config(['--no-token']), { source: 'none' }, { uid: 1000 })).toEqual([expect.stringMatching(/^--no-token: .*every local process, the agents it runs included/)]);
    const flag = startupWarnings(config(['--agent-user', 'nobody']), { token: 'a-long-enough-token', source: 'flag' }, { uid: 0 });
    expect(flag).toEqual([expect.stringMatching(/^--token on the command line: every local process can read it .* --token-file/)]);
    expect(startupWarnings(config(['--agent-user', 'nobody']), { token: 'a-long-enough-token', source: 'env' }, { uid: 0 })).toEqual([]);
  });

  it('with --allow-unauthenticated-network, adds that every machine reaching the address can drive it', () => {
    const open = startupWarnings(config(['--no-token', '--host', '0.0.0.0', '--allow-unauthenticated-network']), { source: 'none' }, { uid: 1000 });
    expect(open).toEqual([expect.stringMatching(/^--no-token: /), '--allow-unauthenticated-network: this daemon listens on 0.0.0.0 with no token, so every machine that reaches that address can drive it too']);
  });
});
