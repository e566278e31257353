// The real daemon as a process, for tests of what only a process shows (its environment, its
// user, its start-up refusals): a throwaway install of a fresh build and bundle, readable by every
// user so a daemon (or an agent) running as another user can load it, and a started daemon's
// port, logs and exit; and, on one install per test run, daemons a test starts, stops and restarts.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';
import { waitFor } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Builds src/ into a fresh install (tsc, the bundle bin/agentwire.js runs, the inspector); returns its dir. */
export async function buildInstall(): Promise<{ dir: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-install-'));
  chmodSync(dir, 0o755); // mkdtemp makes it 0700; an agent user must read the mock's program
  await buildInto(dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function buildInto(dir: string): Promise<void> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: ROOT });
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(ROOT, 'bin/agentwire.js'), join(dir, 'bin/agentwire.js'));
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  copyFileSync(join(ROOT, 'openapi.json'), join(dir, 'openapi.json')); // shipped beside dist/, served at /openapi.json
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/bundle.js'), join(dir, 'dist')], { cwd: ROOT });
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build-web.js'), join(dir, 'dist')], { cwd: ROOT });
}

/**
 * The run's one install, shared by every test file that starts daemons: the build (tsc and the
 * bundle, 15–60 s on two cores) happens once per run instead of once per file. test/global-setup.ts
 * names an empty directory; the first file to get here builds into it, the others wait for it.
 * Outside a vitest run (no directory named) each caller gets its own install.
 */
async function runInstall(): Promise<{ dir: string; remove: () => void }> {
  const dir = process.env[SHARED_INSTALL_ENV];
  if (!dir) return buildInstall();
  const keep = { dir, remove: () => {} }; // global teardown removes it
  try {
    mkdirSync(join(dir, '.building')); // atomic: exactly one file builds
  } catch {
    await waitFor(() => existsSync(join(dir, '.ready')) || existsSync(join(dir, '.failed')), 600_000, 'the shared test install');
    if (existsSync(join(dir, '.failed'))) throw new Error(`the shared test install failed to build: ${readFileSync(join(dir, '.failed'), 'utf8')}`);
    return keep;
  }
  try {
    await buildInto(dir);
  } catch (err) {
    writeFileSync(join(dir, '.failed'), String((err as Error).message));
    throw err;
  }
  writeFileSync(join(dir, '.ready'), '');
  return keep;
}

/** Where test/global-setup.ts tells workers the run's shared install goes. */
export const SHARED_INSTALL_ENV = 'TEST_SHARED_DAEMON_INSTALL';

/** The test's environment without AGENTWIRE_* (only what a test passes configures the daemon). */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTWIRE_') && k !== 'LOG_LEVEL') env[k] = v;
  return { ...env, ...extra };
}

export interface DaemonOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Run the daemon itself as this uid/gid (spawning as another user needs root). */
  uid?: number;
  gid?: number;
}

export class DaemonProcess {
  readonly logs: { msg?: string }[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = '';

  constructor(
    install: string,
    options: DaemonOptions,
    readonly child: ChildProcess = spawn(process.execPath, [join(install, 'bin/agentwire.js'), 'server', '--port', '0', ...(options.args ?? [])], {
      cwd: install,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid }),
    }),
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        this.logs.push(JSON.parse(line) as { msg?: string });
      } catch {
        this.logs.push({ msg: line });
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The port once it listens; throws with its stderr if it exits first. */
  async port(): Promise<number> {
    const match = await waitFor(
      () => {
        if (this.child.exitCode !== null) throw new Error(`daemon exited ${this.child.exitCode}: ${this.stderr}`);
        // Fastify's JSON line, or the start line of the readable format (docs/logging.md).
        return this.logs.map((l) => /(?:Server listening at|listening on) http:\/\/127\.0\.0\.1:(\d+)/.exec(l.msg ?? '')).find((m) => m);
      },
      15_000,
      'the daemon to listen',
    );
    return Number(match[1]);
  }

  /** The token a daemon started without one made and announced on stderr (src/daemon-token.ts). */
  async announcedToken(): Promise<string> {
    const match = await waitFor(
      () => {
        if (this.child.exitCode !== null) throw new Error(`daemon exited ${this.child.exitCode}: ${this.stderr}`);
        return /open http:\/\/\S+\/\?token=([A-Za-z0-9_-]+) /.exec(this.stderr);
      },
      15_000,
      'the daemon to announce its token',
    );
    return match[1]!;
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

// The shared install, and daemons started on it that afterEach can SIGKILL.
let shared: { dir: string; remove: () => void } | undefined;
const started: DaemonProcess[] = [];

/** beforeAll: the run's install (built by the first file that asks; see runInstall). */
export async function setUpInstall(): Promise<void> {
  shared = await runInstall();
}

/** The shared install's directory (setUpInstall first), for a test that starts its daemon its own way. */
export function installDir(): string {
  if (!shared) throw new Error('setUpInstall() must run first (beforeAll)');
  return shared.dir;
}

/**
 * A daemon on the shared install that is expected not to start: resolves with its exit code,
 * stderr and how long it took, or rejects if it is still running after `timeoutMs` (then killed).
 */
export async function startRefused(options: DaemonOptions, timeoutMs = 10_000): Promise<{ code: number | null; stderr: string; ms: number }> {
  if (!shared) throw new Error('setUpInstall() must run first (beforeAll)');
  const started = performance.now();
  const daemon = new DaemonProcess(shared.dir, { ...options, env: options.env ?? cleanEnv() });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      daemon.stop();
      reject(new Error(`the daemon did not exit within ${timeoutMs} ms; stderr: ${daemon.stderr}`));
    }, timeoutMs);
  });
  try {
    const { code } = await Promise.race([daemon.exited, timedOut]);
    const stderr = daemon.child.stderr!;
    if (!stderr.readableEnded) await new Promise((resolve) => stderr.once('end', resolve).once('close', resolve)); // 'exit' can come before the last output
    return { code, stderr: daemon.stderr, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** The shared install's directory (after setUpInstall). */
export function sharedInstallDir(): string {
  if (!shared) throw new Error('setUpInstall() must run first (beforeAll)');
  return shared.dir;
}

/** afterAll. */
export function removeInstall(): void {
  shared?.remove();
  shared = undefined;
}

/** afterEach: SIGKILLs every daemon a test left running. */
export function killDaemons(): void {
  for (const d of started.splice(0)) d.stop();
}

/**
 * `agentwire server --port 0 --log-level info <args>` on the shared install; resolves once it
 * listens, with the token it needs: the one `args` or `env` gave, or the one it made and announced
 * (a daemon makes one unless told --no-token). call() and authHeaders() use it by port.
 */
export async function startDaemon(args: string[], env: Record<string, string> = {}): Promise<{ daemon: DaemonProcess; port: number; token: string | undefined }> {
  if (!shared) throw new Error('setUpInstall() must run first (beforeAll)');
  const daemon = new DaemonProcess(shared.dir, { args: ['--log-level', 'info', ...args], env: cleanEnv(env) });
  started.push(daemon);
  const port = await daemon.port();
  const token = await expectedToken(daemon, args, env);
  if (token === undefined) tokens.delete(port);
  else tokens.set(port, token);
  return { daemon, port, token };
}

const tokens = new Map<number, string>();

async function expectedToken(daemon: DaemonProcess, args: string[], env: Record<string, string>): Promise<string | undefined> {
  const flag = (name: string) => args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const given = flag('token');
  if (given >= 0) return args[given]!.includes('=') ? args[given]!.split(/=(.*)/s)[1] : args[given + 1];
  if (env.AGENTWIRE_TOKEN) return env.AGENTWIRE_TOKEN;
  const file = flag('token-file');
  if (file >= 0 || env.AGENTWIRE_TOKEN_FILE) return readFileSync(file >= 0 ? args[file + 1]! : env.AGENTWIRE_TOKEN_FILE!, 'utf8').trim();
  if (flag('no-token') >= 0 || env.AGENTWIRE_NO_TOKEN) return undefined;
  return daemon.announcedToken();
}

/** The Authorization header the daemon on `port` (started by startDaemon) needs, if any. */
export function authHeaders(port: number): Record<string, string> {
  const token = tokens.get(port);
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** A request that must succeed; its JSON answer (undefined for 204). */
export async function call(port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...authHeaders(port), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

/** Every event after `offset`, page by page. */
export async function events(port: number, id: string, offset = 0): Promise<UniversalEvent[]> {
  const all: UniversalEvent[] = [];
  for (;;) {
    const page = (await call(port, 'GET', `/v1/sessions/${id}/events?offset=${offset}&limit=10000`)) as { events: UniversalEvent[]; hasMore: boolean };
    all.push(...page.events);
    if (!page.hasMore || page.events.length === 0) return all;
    offset = page.events.at(-1)!.sequence;
  }
}
