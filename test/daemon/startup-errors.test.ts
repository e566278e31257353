// Start-up failures as a person meets them (src/startup-failure.ts): the built daemon started as a
// process with a wrong port, data dir or token file exits at once with one line on stderr naming
// the cause and the fix, no stack trace, exit 2 for configuration and 1 otherwise. Some cases run
// the daemon as nobody (uid 65534), since root may write anywhere: they need root, like
// agent-boundary.test.ts, and fail (never skip) without it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { describeStartupFailure } from '../../src/startup-failure.js';
import { StoreInUseError } from '../../src/store/sqlite-store.js';
import { killDaemons, removeInstall, setUpInstall, startDaemon, startRefused } from '../support/daemon-process.js';

const NOBODY = 65534;
let scratch: string;

beforeAll(async () => {
  await setUpInstall();
  scratch = mkdtempSync(join(tmpdir(), 'agentwire-startup-'));
  chmodSync(scratch, 0o755); // nobody must reach what is below it
}, 600_000);

afterEach(() => killDaemons());

afterAll(() => {
  removeInstall();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The refusal every case must be: exit code, one line, no stack frame, quickly. */
async function refusedWith(args: string[], as?: number) {
  const r = await startRefused({ args: ['--log-level', 'warn', ...args], ...(as === undefined ? {} : { uid: as, gid: as }) });
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(lines[0]).toMatch(/^agentwire: /);
  expect(r.ms).toBeLessThan(8_000);
  return { code: r.code, line: lines[0]!, ms: r.ms };
}

function listenOn(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port })));
}

describe('the port', () => {
  it('in use by another process: exit 1, names the port and says to stop it or choose --port', async () => {
    const { server, port } = await listenOn();
    try {
      const r = await refusedWith(['--port', String(port), '--persist', 'off']);
      expect(r.code).toBe(1);
      expect(r.line).toBe(`agentwire: port ${port} on 127.0.0.1 is already in use by another process; stop that process or choose another --port`);
    } finally {
      server.close();
    }
  });

  it('not permitted (below 1024 for an unprivileged user): exit 2', async () => {
    expect(process.getuid?.(), 'this test starts the daemon as nobody: run it as root (CI does)').toBe(0);
    const r = await refusedWith(['--port', '80', '--persist', 'off'], NOBODY);
    expect(r.code).toBe(2);
    expect(r.line).toMatch(/^agentwire: not permitted to listen on port 80 of 127\.0\.0\.1 \(EACCES: .*\); choose --port 1024 or above$/);
  });

  it('a --host that is not this machine: exit 2', async () => {
    const r = await refusedWith(['--host', '192.0.2.1', '--persist', 'off']);
    expect(r.code).toBe(2);
    expect(r.line).toMatch(/^agentwire: --host 192\.0\.2\.1 is not an address of this machine \(EADDRNOTAVAIL\); choose one/);
  });
});

describe('the trust boundary', () => {
  it('--no-token on an address other machines reach: exit 2, naming the fix (issue 39)', async () => {
    const r = await refusedWith(['--host', '0.0.0.0', '--no-token', '--persist', 'off']);
    expect(r.code).toBe(2);
    expect(r.line).toBe(
      'agentwire: --no-token with --host 0.0.0.0: every machine that reaches that address could drive this daemon (and run commands through its agents) with no token; drop --no-token (the daemon then makes a token), listen on 127.0.0.1, or add --allow-unauthenticated-network if that is what you want',
    );
  });
});

describe('the data dir', () => {
  it('a file: exit 2, says so and what to do', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const r = await refusedWith(['--data-dir', file]);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: --data-dir ${file}: it is a file, not a directory; remove it or choose another --data-dir`);
  });

  it('below a file (cannot be created): exit 2, names the file', async () => {
    const file = join(scratch, 'parent-file');
    writeFileSync(file, '');
    const r = await refusedWith(['--data-dir', join(file, 'sub', 'dir')]);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: --data-dir ${join(file, 'sub', 'dir')}: cannot create it: ${file} is a file, not a directory; choose another --data-dir`);
  });

  it('in a directory the daemon may not write in: exit 2, names the user and the directory', async () => {
    expect(process.getuid?.(), 'this test starts the daemon as nobody: run it as root (CI does)').toBe(0);
    const parent = join(scratch, 'roots');
    mkdirSync(parent, { mode: 0o755 });
    const r = await refusedWith(['--data-dir', join(parent, 'data')], NOBODY);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: --data-dir ${join(parent, 'data')}: cannot create it (EACCES: this daemon's user (uid ${NOBODY}) may not write in ${parent}); choose another --data-dir`);
  });

  it("owned by another user (the daemon's cannot write it): exit 2, says to chown it", async () => {
    expect(process.getuid?.(), 'this test starts the daemon as nobody: run it as root (CI does)').toBe(0);
    const dir = join(scratch, 'root-owned');
    mkdirSync(dir, { mode: 0o755 });
    const r = await refusedWith(['--data-dir', dir], NOBODY);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: --data-dir ${dir}: it is owned by uid 0, not by this daemon's user (${NOBODY}); chown it to uid ${NOBODY} or choose another --data-dir`);
  });

  it('under /proc: refused at once (Node recursive mkdir would spin there forever)', async () => {
    const r = await refusedWith(['--data-dir', '/proc/agentwire-x/data']);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: --data-dir /proc/agentwire-x/data: cannot create /proc/agentwire-x (ENOENT: the file system of /proc takes no new directories (procfs or sysfs?)); choose another --data-dir`);
    expect(r.ms).toBeLessThan(5_000);
  });

  it('held by another daemon: exit 2, one line', async () => {
    const dir = join(scratch, 'held');
    await startDaemon(['--data-dir', dir]);
    const r = await refusedWith(['--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.line).toBe(`agentwire: cannot open the store in ${dir}: ${join(dir, 'agentwire.db')} is in use by another agentwire daemon (its lock is held); stop it or choose another --data-dir`);
  });
});

describe('the token file', () => {
  it('unreadable: exit 2, names the file and how to make one', async () => {
    const r = await refusedWith(['--token-file', '/nonexistent/token', '--persist', 'off']);
    expect(r.code).toBe(2);
    expect(r.line).toMatch(/^agentwire: --token-file \/nonexistent\/token: cannot read it \(ENOENT\); write the token there \(openssl rand -hex 24 > FILE; chmod 600 FILE\) or point --token-file at the file that has it$/);
  });
});

describe('describeStartupFailure', () => {
  it('an unexpected error is one line, exit 1, pointing at AGENTWIRE_DEBUG', () => {
    const err = new Error('boom\n    at somewhere (x.js:1:1)');
    const f = describeStartupFailure(err);
    expect(f.exitCode).toBe(1);
    expect(f.line).not.toContain('\n');
    expect(f.line).toMatch(/^agentwire: boom; at somewhere \(x\.js:1:1\) \(Error: an unexpected start-up failure; AGENTWIRE_DEBUG=1 prints its stack trace\)$/);
  });

  it('configuration and a held store are exit 2', () => {
    expect(describeStartupFailure(new ConfigError('--port x: bad'))).toEqual({ line: 'agentwire: --port x: bad', exitCode: 2 });
    expect(describeStartupFailure(new StoreInUseError('held'), { host: '127.0.0.1', port: 1, dataDir: '/d' })).toEqual({ line: 'agentwire: cannot open the store in /d: held', exitCode: 2 });
  });
});
