// A fleet for the mirror's tests: durable daemons as real processes, each on a fixed port and its
// own data dir so that it can be SIGKILLed and started again where the mirror expects it; the
// `agentwire-mirror` command as a process of its own; and the two sides of the comparison, every
// (session, sequence, event_id) a daemon serves and every one PostgreSQL holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readFile } from 'node:fs/promises';
import { build, type Plugin } from 'esbuild';
import type pg from 'pg';
import type { SessionInfo } from '../../src/schema/api.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { cleanEnv, DaemonProcess } from './daemon-process.js';
import { waitFor } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every `import.meta.url` in src/ stays its source file's URL, so files read beside the code
 *  (the mock's program.js, package.json, openapi.json) resolve as they do when src/ runs. */
const keepSourceUrls: Plugin = {
  name: 'keep-source-urls',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(join(ROOT, 'src'))) return undefined;
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/**
 * The daemon as a process, bundled by esbuild straight from src/ (as scripts/bundle.js bundles
 * tsc's output, with the same externals): a second or two instead of a whole tsc build, which on
 * two busy cores took most of this file's time. The type check is `npm test`'s own tsc run.
 */
export async function buildDaemonInstall(): Promise<{ dir: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-mirror-daemon-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(ROOT, 'bin/agentwire.js'), join(dir, 'bin/agentwire.js'));
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await build({
    entryPoints: [join(ROOT, 'src/main.ts')],
    outfile: join(dir, 'dist/agentwire.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: "import { createRequire as __agentwireRequire } from 'node:module'; const require = __agentwireRequire(import.meta.url);" },
    plugins: [keepSourceUrls],
    external: ['execa', 'better-sqlite3'],
    logLevel: 'warning',
  });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const running = new Set<DaemonProcess>();

/**
 * afterEach, first: takes the daemons the test started, and returns what SIGKILLs them. Taken
 * before the test's other cleanups, so that a cleanup still running when the hook times out can
 * never kill the next test's daemons.
 */
export function takeFleet(): () => void {
  const mine = [...running];
  running.clear();
  return () => mine.forEach((d) => d.stop());
}

/** A durable daemon on a port and data dir of its own, for good: restart() brings it back there. */
export class FleetDaemon {
  process: DaemonProcess | undefined;

  private constructor(
    private readonly install: string,
    readonly id: string,
    readonly port: number,
    readonly dataDir: string,
    readonly token: string,
    private readonly mockHome: string,
  ) {}

  static async create(install: string, id: string, mockHome: string): Promise<FleetDaemon> {
    const d = new FleetDaemon(install, id, await freePort(), mkdtempSync(join(tmpdir(), `aw-mirror-${id}-`)), `token-of-${id}-0123456789`, mockHome);
    await d.restart();
    return d;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const args = ['--port', String(this.port), '--data-dir', this.dataDir, '--log-level', 'info'];
    this.process = new DaemonProcess(this.install, { args, env: cleanEnv({ AGENTWIRE_TOKEN: this.token, MOCK_AGENT_HOME: this.mockHome }) });
    running.add(this.process);
    await this.process.port();
  }

  async kill(): Promise<void> {
    this.process?.child.kill('SIGKILL');
    await this.process?.exited;
  }

  /** A request that must succeed; its JSON answer (undefined for 204). */
  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  async sessions(): Promise<SessionInfo[]> {
    return ((await this.call('GET', '/v1/sessions')) as { sessions: SessionInfo[] }).sessions;
  }

  /** Every event of a session, page by page, from the daemon's history. */
  async events(sessionId: string): Promise<UniversalEvent[]> {
    const all: UniversalEvent[] = [];
    for (let offset = 0; ; ) {
      const page = (await this.call('GET', `/v1/sessions/${sessionId}/events?offset=${offset}&limit=10000`)) as { events: UniversalEvent[]; hasMore: boolean };
      all.push(...page.events);
      if (!page.hasMore || page.events.length === 0) return all;
      offset = page.events.at(-1)!.sequence;
    }
  }

  /** `daemon/session/sequence/event_id` of every event this daemon serves. */
  async eventKeys(): Promise<string[]> {
    const keys: string[] = [];
    for (const s of await this.sessions()) for (const e of await this.events(s.sessionId)) keys.push(`${this.id}/${s.sessionId}/${e.sequence}/${e.event_id}`);
    return keys.sort();
  }

  /** Until no session is running or waiting. */
  async settled(timeoutMs = 60_000): Promise<void> {
    await waitFor(async () => (await this.sessions()).every((s) => s.status === 'idle' || s.status === 'ended'), timeoutMs, `${this.id}'s turns to end`);
  }

  remove(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The same keys as stored in PostgreSQL (duplicates would show: the list is not a set). */
export async function storedKeys(db: pg.Pool | pg.Client): Promise<string[]> {
  const { rows } = await db.query<{ k: string }>(`SELECT daemon_id || '/' || session_id || '/' || sequence || '/' || event_id AS k FROM agentwire_events`);
  return rows.map((r) => r.k).sort();
}

export async function storedCount(db: pg.Pool | pg.Client): Promise<number> {
  return Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM agentwire_events')).rows[0]!.n);
}

/**
 * The `agentwire-mirror` command as installed: client/bin/agentwire-mirror.js beside its dist/
 * (the mirror's sources bundled by esbuild, dependencies left to node_modules).
 */
export async function buildMirrorCommand(): Promise<{ bin: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-mirror-install-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(ROOT, 'client/bin/agentwire-mirror.js'), join(dir, 'bin/agentwire-mirror.js'));
  copyFileSync(join(ROOT, 'client/package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await build({
    entryPoints: [join(ROOT, 'client/src/mirror/cli.ts')],
    outfile: join(dir, 'dist/mirror/cli.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return { bin: join(dir, 'bin/agentwire-mirror.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A running `agentwire-mirror`; its JSON log lines are kept. */
export class MirrorProcess {
  readonly logs: Record<string, unknown>[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = '';
  readonly child: ChildProcess;

  constructor(bin: string, args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      try {
        this.logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        this.logs.push({ msg: line });
      }
    });
    this.child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  async started(): Promise<void> {
    await waitFor(() => {
      if (this.child.exitCode !== null) throw new Error(`agentwire-mirror exited ${this.child.exitCode}: ${this.stderr}`);
      return this.logs.some((l) => l.msg === 'mirror started');
    }, 20_000, 'the mirror to start');
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }
}
