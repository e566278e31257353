// The real daemon as a process (bin/agentwire.js over a fresh build), stopped the ways an operator
// or a supervisor stops it: SIGTERM and SIGINT must end every stream with a reason, end every agent
// process group and exit 0; SIGKILL cannot clean up, so the agents must notice on their own.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../src/schema/events.js';
import { waitFor } from './helpers.js';
import { allGone, groupTree, killGroups } from './procs.js';
import { abortAllStreams, openSse, type SseClient } from './sse-client.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** A throwaway install: package.json, bin/ and a fresh dist/ (tsc output and its bundle), with node_modules linked in. */
let install: string;
const daemons: Daemon[] = [];
const groups = new Set<number>();

beforeAll(async () => {
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
}, 120_000);

afterEach(() => {
  abortAllStreams();
  for (const d of daemons.splice(0)) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
  killGroups(groups);
  groups.clear();
});

afterAll(() => {
  if (install) rmSync(install, { recursive: true, force: true });
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

class Daemon {
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

  static async start(): Promise<{ daemon: Daemon; port: number }> {
    // Only our flags: an AGENTWIRE_* variable in the test's environment must not change the daemon.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENTWIRE_')));
    const child = spawn(process.execPath, [join(install, 'bin/agentwire.js'), 'server', '--port', '0', '--log-level', 'info'], {
      cwd: install,
      env,
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

async function call(port: number, method: string, path: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

async function events(port: number, id: string): Promise<UniversalEvent[]> {
  return ((await call(port, 'GET', `/v1/sessions/${id}/events?offset=0&limit=10000`)) as { events: UniversalEvent[] }).events;
}

/** A mock session busy in `shell sleep 1000`; resolves with the mock's pid (= its process group). */
async function sleepingSession(port: number, id: string): Promise<number> {
  await call(port, 'POST', `/v1/sessions/${id}`, { agent: 'mock' });
  const started = (await events(port, id)).find((e) => e.type === 'session.started');
  const pgid = Number(started?.data.metadata?.pid);
  expect(pgid).toBeGreaterThan(0);
  groups.add(pgid);
  await call(port, 'POST', `/v1/sessions/${id}/messages`, { message: 'shell sleep 1000' });
  await waitFor(async () => (await events(port, id)).some((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_call'), 5000, 'the tool_call');
  await waitFor(() => groupTree(pgid).some((p) => p.comm === 'sleep'), 5000, 'the sleep process');
  return pgid;
}

/** Two sleeping sessions and an SSE stream on the first. */
async function busyDaemon() {
  const { daemon, port } = await Daemon.start();
  const pgids = [await sleepingSession(port, 'one'), await sleepingSession(port, 'two')];
  const sse = await openSse({ port, path: '/v1/sessions/one/events/sse' });
  await sse.until(() => sse.events().some((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_call'), 5000, 'the tool_call frame');
  return { daemon, pgids, sse };
}

function expectEndedStream(sse: SseClient) {
  const last = sse.events().at(-1);
  expect(last).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
  expect(sse.entries.at(-1)).toEqual({ kind: 'comment', text: expect.stringMatching(/^closed: /) });
  expect(sse.completed).toBe(true);
}

describe('daemon shutdown (real process)', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal}: streams end with session.ended, every agent group is gone, exit 0`, async () => {
      const { daemon, pgids, sse } = await busyDaemon();
      const sent = Date.now();
      daemon.child.kill(signal);
      const exit = await Promise.race([daemon.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5000))]);
      expect(exit, daemon.stderr).toEqual({ code: 0, signal: null });
      expect(Date.now() - sent).toBeLessThan(5000);
      await sse.ended(2000);
      expectEndedStream(sse);
      // The daemon reaped its agents before it exited; anything left would be a live orphan.
      for (const pgid of pgids) await allGone(pgid, 2000, [process.pid, daemon.child.pid!]);
      expect(daemon.logs.some((l) => l.msg?.startsWith('shutting down'))).toBe(true);
    });
  }

  it('SIGKILL: no cleanup runs, but each agent sees stdin close, stops its tool and exits', async () => {
    const { daemon, pgids, sse } = await busyDaemon();
    daemon.child.kill('SIGKILL');
    expect(await daemon.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The connection just drops: no session.ended, no closing comment.
    await sse.ended(2000);
    expect(sse.events().some((e) => e.type === 'session.ended')).toBe(false);
    expect(sse.comments.some((c) => c.startsWith('closed:'))).toBe(false);
    // The agents are now init's children; only their own reaction to EOF on stdin ends them.
    for (const pgid of pgids) await allGone(pgid, 3000);
  });
});
