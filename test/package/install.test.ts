// The "done when": the packed client installed into an empty project runs the README's
// client example against a real daemon (a mock turn whose permission a callback approves), and so
// does examples/turn-with-hitl.mjs. npm fetches the tarball's dependencies from the registry (or
// its cache).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { startClientDaemon } from './daemon.js';
import { packClient } from './pack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
let project: string;

beforeAll(async () => {
  await setUpInstall();
  project = mkdtempSync(join(tmpdir(), 'agentwire-client-project-'));
  const packed = await packClient();
  const tarball = basename(packed.tarball);
  copyFileSync(packed.tarball, join(project, tarball));
  packed.remove();
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty-project', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball}`], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
}, 500_000);
afterAll(() => {
  removeInstall();
  if (project) rmSync(project, { recursive: true, force: true });
});
afterEach(killDaemons);

/** The ```js block of README.md that imports the client. */
function readmeExample(): string {
  const blocks = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const example = blocks.find((b) => b.includes("from '@agentwire/client'"));
  if (!example) throw new Error('README.md has no js block importing @agentwire/client');
  return example;
}

describe('the packed client in an empty project', () => {
  it('runs the README example: a mock turn whose permission the callback approves', async () => {
    // The daemon made its own token, as a default one does; the example reads it from the
    // environment, as the README says to set it (`agentwire token`).
    const { baseUrl, token } = await startClientDaemon();
    expect(token).toBeDefined();
    const example = readmeExample();
    expect(example).toContain("baseUrl: 'http://127.0.0.1:2468'");
    expect(example).toContain('token: process.env.AGENTWIRE_TOKEN');
    writeFileSync(join(project, 'readme-example.mjs'), example.replace("'http://127.0.0.1:2468'", JSON.stringify(baseUrl)));
    const { stdout } = await run(process.execPath, ['readme-example.mjs'], { cwd: project, timeout: 60_000, env: { ...process.env, AGENTWIRE_TOKEN: token! } });
    expect(stdout).toContain('the agent asks to write_file');
    expect(stdout).toContain('completed Permission granted; wrote notes.txt.');
    expect(stdout).toMatch(/\d+ permission\.resolved/);
    expect(stdout).not.toContain('agent.unparsed');
  }, 120_000);

  it('runs examples/turn-with-hitl.mjs', async () => {
    const { baseUrl } = await startClientDaemon(['--token', 'example-token-0123456789']);
    copyFileSync(join(ROOT, 'examples/turn-with-hitl.mjs'), join(project, 'turn-with-hitl.mjs'));
    const { stdout } = await run(process.execPath, ['turn-with-hitl.mjs'], {
      cwd: project,
      timeout: 60_000,
      env: { ...process.env, AGENTWIRE_URL: baseUrl, AGENTWIRE_TOKEN: 'example-token-0123456789' },
    });
    expect(stdout).toContain('permission asked: write_file');
    expect(stdout).toContain('turn turn_1: completed: Permission granted; wrote notes.txt.');
    expect(stdout).toContain('turn turn_2: completed: You answered: green');
    expect(stdout).not.toContain('agent.unparsed');
  }, 120_000);
});
