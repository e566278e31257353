// The daemon's log as a real process writes it (docs/logging.md): `--log-format pretty` is one
// readable line per event, with the start line a person needs and no request lines at info;
// `json` is pino's JSON lines as before; `--log-level debug` adds a line per request in either;
// and `auto` picks the readable format on a real terminal (a pseudo-terminal from util-linux's
// `script`), in colour unless NO_COLOR is set.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { call, cleanEnv, installDir, killDaemons, removeInstall, setUpInstall, startDaemon, type DaemonProcess } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'aw-log-format-'));
const terminals: ChildProcess[] = [];

beforeAll(setUpInstall, 300_000);
afterEach(() => {
  killDaemons();
  for (const t of terminals.splice(0)) if (t.exitCode === null && t.signalCode === null) t.kill('SIGKILL');
});
afterAll(() => {
  removeInstall();
  rmSync(scratch, { recursive: true, force: true });
});

/** Health, the session list, a mock session created and deleted: requests, and a session's lines. */
async function someWork(port: number, daemon: DaemonProcess, lines: () => string[]) {
  await call(port, 'GET', '/v1/health');
  await call(port, 'GET', '/v1/sessions');
  await call(port, 'POST', '/v1/sessions/s1', { agent: 'mock' });
  await call(port, 'DELETE', '/v1/sessions/s1');
  await waitFor(() => lines().some((l) => l.includes('session ended') || /session s1 \(mock\) ended/.test(l)), 5000, 'the session ended line');
  daemon.child.kill('SIGTERM');
  await daemon.exited;
}

const PRETTY_LINE = /^\d\d:\d\d:\d\d (trace|debug|info |warn |error|fatal) \S/;

describe('--log-format pretty', () => {
  it('writes the start line, session and agent lines, no JSON and no request lines at info', async () => {
    const dataDir = join(scratch, 'pretty');
    const { daemon, port, token } = await startDaemon(['--log-format', 'pretty', '--data-dir', dataDir]);
    expect(token, 'the token line on stderr still reads').toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lines = () => daemon.logs.map((l) => l.msg ?? '');
    await someWork(port, daemon, lines);
    // Every stdout line is a drawn one: DaemonProcess keeps a line that is not JSON as { msg }.
    expect(daemon.logs.filter((l) => Object.keys(l).join() !== 'msg' || !PRETTY_LINE.test(l.msg ?? ''))).toEqual([]);
    const base = `http://127.0.0.1:${port}`;
    expect(lines().map((l) => l.slice(9))).toEqual(
      expect.arrayContaining([
        `info  agentwire ${VERSION} listening on ${base} · data dir ${dataDir} · inspector ${base}/ui/ · token in ${join(dataDir, 'token')}`,
        expect.stringMatching(/^info {2}session s1 started: mock, pid \d+/),
        expect.stringMatching(/^info {2}session s1: agent pid \d+ exited on SIGTERM \(asked to stop\)$/),
        'info  session s1 (mock) ended: terminated, by the daemon',
        'info  shutting down: ending streams and agent sessions signal=SIGTERM',
      ]),
    );
    expect(lines().filter((l) => /\b(GET|POST|DELETE) \/|Server listening|configuration/.test(l))).toEqual([]);
  });

  it('adds a line per request at --log-level debug, and the configuration', async () => {
    const { daemon, port } = await startDaemon(['--log-format', 'pretty', '--log-level', 'debug', '--persist', 'off', '--no-token']);
    const lines = () => daemon.logs.map((l) => l.msg ?? '');
    await someWork(port, daemon, lines);
    const requests = lines().filter((l) => / debug (GET|POST|DELETE) \//.test(l)).map((l) => l.slice(15));
    expect(requests).toEqual([
      expect.stringMatching(/^GET \/v1\/health 200 [\d.]+m?s req_\w+$/),
      expect.stringMatching(/^GET \/v1\/sessions 200 [\d.]+m?s req_\w+$/),
      expect.stringMatching(/^POST \/v1\/sessions\/s1 200 [\d.]+m?s req_\w+$/),
      expect.stringMatching(/^DELETE \/v1\/sessions\/s1 204 [\d.]+m?s req_\w+$/),
    ]);
    expect(lines()).toContainEqual(expect.stringMatching(/ debug configuration \{"host":"127\.0\.0\.1",/));
  });
});

describe('--log-format json', () => {
  it("writes pino's JSON lines, the start line among them, and no request lines at info", async () => {
    const dataDir = join(scratch, 'json');
    const { daemon, port } = await startDaemon(['--log-format', 'json', '--data-dir', dataDir]);
    const records = () => daemon.logs as Record<string, unknown>[];
    await someWork(port, daemon, () => records().map((r) => String(r.msg)));
    // `pid` is the daemon's, but an agent's on the lines about one (written after pino's own).
    for (const r of records()) expect(r).toMatchObject({ level: expect.any(Number), time: expect.any(Number), pid: expect.any(Number), hostname: expect.any(String), msg: expect.any(String) });
    const base = `http://127.0.0.1:${port}`;
    expect(records()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 30, msg: `Server listening at ${base}` }),
        expect.objectContaining({ level: 30, msg: 'listening', version: VERSION, url: base, inspector: `${base}/ui/`, dataDir, token: 'generated', tokenFile: join(dataDir, 'token') }),
        expect.objectContaining({ level: 30, msg: 'session started', sessionId: 's1', agent: 'mock' }),
        expect.objectContaining({ level: 30, msg: 'agent process exited', sessionId: 's1', signal: 'SIGTERM', requested: true }),
        expect.objectContaining({ level: 30, msg: 'session ended', sessionId: 's1', agent: 'mock', reason: 'terminated', terminatedBy: 'daemon' }),
      ]),
    );
    expect(records().filter((r) => r.req !== undefined || r.res !== undefined || r.config !== undefined)).toEqual([]);
  });

  it('is what a daemon writes into a pipe by default, with a record per request at debug', async () => {
    const { daemon, port } = await startDaemon(['--log-level', 'debug', '--persist', 'off', '--no-token']);
    const records = () => daemon.logs as Record<string, unknown>[];
    await someWork(port, daemon, () => records().map((r) => String(r.msg)));
    expect(records().filter((r) => r.level === undefined)).toEqual([]);
    const requests = records().filter((r) => r.msg === 'request completed');
    expect(requests.map((r) => `${(r.req as { method: string }).method} ${(r.req as { url: string }).url} ${(r.res as { statusCode: number }).statusCode}`)).toEqual([
      'GET /v1/health 200',
      'GET /v1/sessions 200',
      'POST /v1/sessions/s1 200',
      'DELETE /v1/sessions/s1 204',
    ]);
    for (const r of requests) expect(r).toMatchObject({ level: 20, reqId: expect.stringMatching(/^req_/), responseTime: expect.any(Number) });
    expect(records()).toContainEqual(expect.objectContaining({ level: 20, msg: 'starting', config: expect.objectContaining({ logLevel: 'debug', logFormat: 'auto' }) }));
  });
});

describe('--log-format auto on a terminal', () => {
  /** The daemon under `script`, whose pseudo-terminal is its stdout; its screen, and its pid. */
  function onTerminal(noColor: string | undefined) {
    const command = `'${process.execPath}' '${join(installDir(), 'bin/agentwire.js')}' server --port 0 --persist off --no-token`;
    const env = cleanEnv();
    delete env.NO_COLOR;
    if (noColor !== undefined) env.NO_COLOR = noColor;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    terminals.push(child);
    let screen = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
    return { child, screen: () => screen };
  }

  async function startOnTerminal(noColor: string | undefined) {
    const terminal = onTerminal(noColor);
    const port = await waitFor(() => /listening on (?:\x1b\[[\d;]*m)?http:\/\/127\.0\.0\.1:(\d+)/.exec(terminal.screen())?.[1], 15_000, 'the start line on the terminal');
    const daemonPid = Number(readFileSync(`/proc/${terminal.child.pid}/task/${terminal.child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    await call(Number(port), 'GET', '/v1/health');
    process.kill(daemonPid, 'SIGTERM');
    await waitFor(() => !existsSync(`/proc/${daemonPid}`) && terminal.child.exitCode !== null, 10_000, 'the daemon and script to exit');
    return terminal.screen().split(/\r?\n/).filter((l) => l !== '');
  }

  it('writes readable lines, coloured, and never JSON', async () => {
    expect(execFileSync('sh', ['-c', 'command -v script || echo missing'], { encoding: 'utf8' }).trim(), 'this test needs util-linux script (Debian: bsdutils)').not.toBe('missing');
    const lines = await startOnTerminal(undefined);
    const plain = lines.map((l) => l.replace(/\x1b\[[\d;]*m/g, ''));
    expect(plain).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d info {2}agentwire \S+ listening on http:\/\/127\.0\.0\.1:\d+ · in memory only \(--persist off\) · inspector http:\/\/127\.0\.0\.1:\d+\/ui\/ · no token$/));
    expect(lines.find((l) => l.includes('listening on'))).toContain('\x1b[32minfo \x1b[0m');
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(plain.filter((l) => /GET \/v1\/health/.test(l))).toEqual([]);
  });

  it('without colour when NO_COLOR is set', async () => {
    const lines = await startOnTerminal('1');
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d info {2}agentwire \S+ listening on /));
    expect(lines.filter((l) => l.includes('\x1b['))).toEqual([]);
  });
});
