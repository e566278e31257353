// The real daemon as a process, for tests that must stop it the ways an operator or a supervisor
// does (signals, SIGKILL) or restart it: a throwaway install (package.json, bin/ and a fresh dist/,
// tsc output and its bundle, with node_modules linked in) built once per test file.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { UniversalEvent } from '../src/schema/events.js';
import { waitFor } from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
let install: string | undefined;
const daemons: Daemon[] = [];

/** Builds the throwaway install (call in beforeAll, with a long timeout). */
export async function buildInstall(): Promise<void> {
  install = mkdtempSync(join(tmpdir(), 'agentwire-daemon-'));
  // Built here, not in dist/: a concurrent `npm run build` or a stale dist/ cannot affect the test.
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(install, 'dist')], { cwd: ROOT });
  mkdirSync(join(install, 'bin'));
  copyFileSync(join(ROOT, 'bin/agentwire.js'), join(install, 'bin/agentwire.js'));
  copyFileSync(join(ROOT, 'package.json'), join(install, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(install, 'node_modules'), 'dir');
  // The same bundle bin/agentwire.js runs in a real install (it resolves the linked node_modules).
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/bundle.js'), join(install, 'dist')], { cwd: ROOT });
}

export function removeInstall(): void {
  if (install) rmSync(install, { recursive: true, force: true });
  install = undefined;
}

/** SIGKILLs every daemon a test left running (afterEach). */
export function killDaemons(): void {
  for (const d of daemons.splice(0)) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Daemon {
  readonly logs: { msg?: string; level?: number }[] = [];
  readonly exited: Promise<Exit>;
  stderr = '';

  private constructor(readonly child: ChildProcess) {
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

  /** Starts `agentwire server --port 0` with `args`; resolves once it listens. */
  static async start(args: string[], env: Record<string, string> = {}): Promise<{ daemon: Daemon; port: number }> {
    if (!install) throw new Error('buildInstall() must run first (beforeAll)');
    // Only our flags: an AGENTWIRE_* variable in the test's environment must not change the daemon.
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENTWIRE_')));
    const child = spawn(process.execPath, [join(install, 'bin/agentwire.js'), 'server', '--port', '0', '--log-level', 'info', ...args], {
      cwd: install,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const daemon = new Daemon(child);
    daemons.push(daemon);
    const listening = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}: ${daemon.stderr}`);
        return daemon.logs.map((l) => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(l.msg ?? '')).find((m) => m);
      },
      10_000,
      'the daemon to listen',
    );
    return { daemon, port: Number(listening[1]) };
  }
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
