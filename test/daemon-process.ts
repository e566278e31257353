// The real daemon as a process, for tests of what only a process shows (its environment, its
// user, its start-up refusals): a throwaway install of a fresh build and bundle, readable by every
// user so a daemon (or an agent) running as another user can load it, and a started daemon's
// port, logs and exit; and, on one install per test file, daemons a test starts, stops and restarts.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { UniversalEvent } from '../src/schema/events.js';
import { waitFor } from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Builds src/ into a fresh install (tsc, the bundle bin/agentwire.js runs, the inspector); returns its dir. */
export async function buildInstall(): Promise<{ dir: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-install-'));
  chmodSync(dir, 0o755); // mkdtemp makes it 0700; an agent user must read the mock's program
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: ROOT });
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(ROOT, 'bin/agentwire.js'), join(dir, 'bin/agentwire.js'));
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  copyFileSync(join(ROOT, 'openapi.json'), join(dir, 'openapi.json')); // shipped beside dist/, served at /openapi.json
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/bundle.js'), join(dir, 'dist')], { cwd: ROOT });
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build-web.js'), join(dir, 'dist')], { cwd: ROOT });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

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
        return this.logs.map((l) => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(l.msg ?? '')).find((m) => m);
      },
      15_000,
      'the daemon to listen',
    );
    return Number(match[1]);
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

// A shared install per test file, and daemons started on it that afterEach can SIGKILL.
let shared: { dir: string; remove: () => void } | undefined;
const started: DaemonProcess[] = [];

/** beforeAll: one fresh install for the whole file. */
export async function setUpInstall(): Promise<void> {
  shared = await buildInstall();
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

/** `agentwire server --port 0 --log-level info <args>` on the shared install; resolves once it listens. */
export async function startDaemon(args: string[], env: Record<string, string> = {}): Promise<{ daemon: DaemonProcess; port: number }> {
  if (!shared) throw new Error('setUpInstall() must run first (beforeAll)');
  const daemon = new DaemonProcess(shared.dir, { args: ['--log-level', 'info', ...args], env: cleanEnv(env) });
  started.push(daemon);
  return { daemon, port: await daemon.port() };
}

/** A request that must succeed; its JSON answer (undefined for 204). */
export async function call(port: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
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
