// Both packages as a user installs them (issue 28): the tarballs `npm pack` makes, installed into an
// empty CommonJS project (what `npm init -y` makes) with nothing but Node and npm; then
// `npx agentwire` runs the mock with the SQLite store, serves the inspector, and the installed
// client runs turns against it from ESM (the README's example, examples/turn-with-hitl.mjs), from
// CommonJS (`require('agentwire-client')`) and typechecks from CommonJS TypeScript. npm fetches
// the dependencies from the registry (or its cache). On Node 20 npm compiles better-sqlite3 12 as
// a user's install does (there is no prebuilt binary to download here: ~1.5 min), and agentwire's
// postinstall checks it loads; on Node 22.13 and later the store uses Node's own node:sqlite, so
// the install runs with --ignore-scripts, as docs/install.md suggests, instead of compiling 12 for
// nothing.
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasNodeSqlite } from '../../src/store/sqlite-binding.js';
import { cleanEnv, DaemonProcess, removeInstall, setUpInstall, sharedInstallDir } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';
import { packClient, packDaemon } from '../support/pack.js';
import { alive } from '../support/procs.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NODE_SQLITE = hasNodeSqlite();
const run = promisify(execFile);
let project: string;
let installOutput = '';

beforeAll(async () => {
  await setUpInstall();
  project = mkdtempSync(join(tmpdir(), 'agentwire-package-project-'));
  const tarballs: string[] = [];
  for (const packed of [await packDaemon(sharedInstallDir()), await packClient()]) {
    copyFileSync(packed.tarball, join(project, basename(packed.tarball)));
    tarballs.push(`./${basename(packed.tarball)}`);
    packed.remove();
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true, type: 'commonjs' }));
  const scripts = NODE_SQLITE ? ['--ignore-scripts'] : [];
  const { stdout, stderr } = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...scripts, ...tarballs], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
  installOutput = stdout + stderr;
}, 600_000);
afterAll(() => {
  removeInstall();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the packed daemon in an empty project', () => {
  it('installs without an engine warning, with no TypeScript, build step or dev dependency', () => {
    expect(installOutput).not.toContain('EBADENGINE');
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/agentwire/package.json'), 'utf8')) as Record<string, Record<string, string>>;
    // What the bundle leaves out is all it needs: execa and this Node's SQLite build.
    expect(Object.keys(installed.dependencies!)).toEqual(['execa']);
    expect(Object.keys(installed.optionalDependencies!)).toEqual(['better-sqlite3']);
    for (const dev of ['typescript', 'fastify', 'zod', 'esbuild', 'vitest']) expect(existsSync(join(project, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(project, 'node_modules/agentwire/dist/agentwire.mjs'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/agentwire/src'))).toBe(false);
  });

  it('prints its version: `npx agentwire version`, and `--version` past npx', async () => {
    // npx takes `--version` for itself (it prints npm's), so the docs say `npx agentwire version`.
    for (const args of [['version'], ['--', '--version']]) {
      const { stdout } = await run('npx', ['--no', 'agentwire', ...args], { cwd: project, env: cleanEnv() });
      expect(stdout.trim(), args.join(' ')).toBe(VERSION);
    }
    const { stdout } = await run(join(project, 'node_modules/.bin/agentwire'), ['--version'], { cwd: project, env: cleanEnv() });
    expect(stdout.trim()).toBe(VERSION);
  }, 60_000);

  describe('npx agentwire server, persisting', () => {
    let daemon: DaemonProcess;
    let baseUrl: string;
    let token: string;
    let dataDir: string;

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'agentwire-package-data-'));
      const args = ['--no', 'agentwire', 'server', '--port', '0', '--data-dir', dataDir];
      daemon = new DaemonProcess(project, {}, spawn('npx', args, { cwd: project, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
      baseUrl = `http://127.0.0.1:${await daemon.port()}`;
      token = await daemon.announcedToken();
    }, 60_000);
    afterAll(() => {
      daemon?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps its token where `npx agentwire token` finds it, and serves the inspector', async () => {
      const { stdout } = await run('npx', ['--no', 'agentwire', 'token', '--data-dir', dataDir], { cwd: project, env: cleanEnv() });
      expect(stdout.trim()).toBe(token);
      const page = await fetch(`${baseUrl}/ui/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('<script');
      expect((await fetch(`${baseUrl}/openapi.json`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    }, 60_000);

    it("runs the README's client example (ESM): a mock turn whose permission the callback approves", async () => {
      writeFileSync(join(project, 'readme-example.mjs'), readmeExample().replace("'http://127.0.0.1:2468'", JSON.stringify(baseUrl)));
      const { stdout } = await run(process.execPath, ['readme-example.mjs'], { cwd: project, timeout: 60_000, env: { ...cleanEnv(), AGENTWIRE_TOKEN: token } });
      expect(stdout).toContain('the agent asks to write_file');
      expect(stdout).toContain('completed Permission granted; wrote notes.txt.');
      expect(stdout).toMatch(/\d+ permission\.resolved/);
      expect(stdout).not.toContain('agent.unparsed');
    }, 120_000);

    it('runs examples/turn-with-hitl.mjs', async () => {
      copyFileSync(join(ROOT, 'examples/turn-with-hitl.mjs'), join(project, 'turn-with-hitl.mjs'));
      const { stdout } = await run(process.execPath, ['turn-with-hitl.mjs'], { cwd: project, timeout: 60_000, env: { ...cleanEnv(), AGENTWIRE_URL: baseUrl, AGENTWIRE_TOKEN: token } });
      expect(stdout).toContain('permission asked: write_file');
      expect(stdout).toContain('turn turn_1: completed: Permission granted; wrote notes.txt.');
      expect(stdout).toContain('turn turn_2: completed: You answered: green');
      expect(stdout).not.toContain('agent.unparsed');
    }, 120_000);

    it("runs a turn from CommonJS with require('agentwire-client') and require('agentwire-client/mirror')", async () => {
      writeFileSync(join(project, 'turn.js'), CJS_TURN);
      const { stdout, stderr } = await run(process.execPath, ['turn.js'], { cwd: project, timeout: 60_000, env: { ...cleanEnv(), AGENTWIRE_URL: baseUrl, AGENTWIRE_TOKEN: token } });
      expect(stderr).toBe(''); // no ExperimentalWarning for require() of the ES module either
      const [result, types, mirror] = stdout.trim().split('\n');
      expect(result).toBe('completed OK');
      expect(types).toMatch(/^session\.started turn\.started .*turn\.ended$/);
      expect(types).not.toContain('agent.unparsed');
      expect(mirror).toBe('function');
    }, 120_000);

    it('typechecks from CommonJS TypeScript (module nodenext) with the types the package ships', async () => {
      writeFileSync(join(project, 'typed.ts'), TYPED_CJS);
      const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
      const result = await run(process.execPath, [tsc, '--module', 'nodenext', '--strict', '--noEmit', 'typed.ts'], { cwd: project }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
      expect(result.stdout).toBe('');
    }, 120_000);

    it('ends on SIGTERM to npx, leaving no daemon process behind', async () => {
      const pid = (daemon.logs.find((l) => typeof (l as { pid?: number }).pid === 'number') as { pid: number }).pid;
      expect(pid).not.toBe(daemon.pid); // npx runs the daemon as its child
      daemon.child.kill('SIGTERM');
      await daemon.exited;
      await waitFor(() => !alive(pid), 15_000, 'the daemon under npx to exit');
    }, 30_000);
  });

  it(NODE_SQLITE ? 'keeps sessions in SQLite with no addon at all (node:sqlite)' : 'says how to build the SQLite addon when it is missing, in one line', async () => {
    // What an install that skipped or lost the addon looks like: on Node 20 better-sqlite3 12
    // without its compiled file; on Node 22.13 and later no better-sqlite3 at all, which it does not need.
    const missing = NODE_SQLITE ? join(project, 'node_modules/better-sqlite3') : join(project, 'node_modules/better-sqlite3/build');
    renameSync(missing, `${missing}.away`);
    const dataDir = mkdtempSync(join(tmpdir(), 'agentwire-package-noaddon-'));
    try {
      const bin = join(project, 'node_modules/agentwire/bin/agentwire.js');
      if (NODE_SQLITE) {
        const daemon = new DaemonProcess(project, {}, spawn(process.execPath, [bin, 'server', '--port', '0', '--data-dir', dataDir], { cwd: project, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
        try {
          await daemon.port();
          await waitFor(() => existsSync(join(dataDir, 'agentwire.db-wal')), 10_000, 'the store to open');
          expect(daemon.stderr).not.toMatch(/SQLite|ExperimentalWarning/);
        } finally {
          daemon.stop();
        }
        return;
      }
      const failed = await run(process.execPath, [bin, 'server', '--port', '0', '--data-dir', dataDir], { cwd: project, env: cleanEnv(), timeout: 20_000 }).then(
        () => undefined,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code).toBe(1);
      const lines = failed!.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^agentwire: the SQLite store could not load better-sqlite3 12, the addon it needs on Node 20/);
      expect(lines[0]).toContain('npm_config_nodedir=');
      expect(lines[0]).toContain('--persist off');
    } finally {
      renameSync(`${missing}.away`, missing);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** The ```js block of README.md that imports the client. */
function readmeExample(): string {
  const blocks = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const example = blocks.find((b) => b.includes("from 'agentwire-client'"));
  if (!example) throw new Error('README.md has no js block importing agentwire-client');
  expect(example).toContain("baseUrl: 'http://127.0.0.1:2468'");
  expect(example).toContain('token: process.env.AGENTWIRE_TOKEN');
  return example;
}


const CJS_TURN = `const { createClient } = require('agentwire-client');
const { mirror } = require('agentwire-client/mirror');
(async () => {
  const client = createClient({ baseUrl: process.env.AGENTWIRE_URL, token: process.env.AGENTWIRE_TOKEN });
  const session = await client.sessions.create({ agent: 'mock' });
  const result = await session.turn('Reply with exactly the single word OK.');
  console.log(result.reason, result.text);
  const types = [];
  for await (const event of session.events({ after: 0 })) {
    types.push(event.type);
    if (event.sequence === result.ended.sequence) break;
  }
  console.log(types.join(' '));
  console.log(typeof mirror);
  await session.delete();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

const TYPED_CJS = `import { createClient, AgentwireError, type UniversalEvent } from 'agentwire-client';
import { mirror, type MirrorOptions } from 'agentwire-client/mirror';
const client = createClient({ baseUrl: 'http://127.0.0.1:2468' });
export async function firstType(): Promise<string | undefined> {
  const session = await client.sessions.create({ agent: 'mock' });
  for await (const event of session.events({ after: 0 })) return (event satisfies UniversalEvent).type;
  return undefined;
}
export const options: Partial<MirrorOptions> = {};
export const kinds = [typeof mirror, AgentwireError.name];
`;
