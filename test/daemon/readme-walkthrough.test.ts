// The README's curl walkthrough, run as written (issue 28): its ```sh block is read from README.md,
// never copied here, and each command runs in bash against a real daemon, twice, with a restart in
// between; what the README shows under a command (`# → …`) must be what it answers. The only
// change made to a line is the port: 127.0.0.1:2468 becomes the test daemon's own. The commands
// run where the built daemon is (the shared install has the clone's layout: bin/agentwire.js,
// dist/), with AGENTWIRE_DATA_DIR naming the daemon's data dir, so `agentwire token` reads its token.
// A person waits before some steps; the test does what that person does: a command whose comment
// says Ctrl-C is stopped once it has shown what the README says, and a GET is run again (as
// "run it again until …" asks) until it shows it, for at most 10 s. Every other command runs once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, killDaemons, removeInstall, setUpInstall, sharedInstallDir, startDaemon, type DaemonProcess } from '../support/daemon-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PATIENCE_MS = 10_000;

interface Step {
  /** The comment lines above it, for messages and for "Ctrl-C". */
  comment: string;
  command: string;
  /** Each `# →` line under it: `…` stands for anything. */
  expected: string[];
}

/** The walkthrough's steps, from the first ```sh block after its heading. */
function walkthrough(): Step[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A walkthrough with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no ```sh block under "## A walkthrough with curl"');
  const steps: Step[] = [];
  let comment = '';
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending) {
      pending += `\n${line}`;
      if (!line.endsWith('\\')) steps.push({ comment, command: pending, expected: [] }), (pending = ''), (comment = '');
    } else if (line.startsWith('# → ')) steps.at(-1)!.expected.push(line.slice('# → '.length));
    else if (line.startsWith('#')) comment += `${line}\n`;
    else if (line.trim() !== '') {
      if (line.endsWith('\\')) pending = line;
      else steps.push({ comment, command: line, expected: [] }), (comment = '');
    }
  }
  return steps;
}

/** Whether `output` shows every expected line, in order, `…` matching anything. */
function shows(output: string, expected: string[]): boolean {
  let at = 0;
  for (const fragment of expected.flatMap((line) => line.split('…'))) {
    if (fragment === '') continue;
    const found = output.indexOf(fragment, at);
    if (found < 0) return false;
    at = found + fragment.length;
  }
  return true;
}

/** Runs one command in bash; with `until`, stops it (as Ctrl-C would) once `until(output)` holds. */
function bash(command: string, env: Record<string, string>, until?: (output: string) => boolean): Promise<{ output: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: sharedInstallDir(), env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const stop = () => {
      try {
        process.kill(-child.pid!, 'SIGINT');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, until ? PATIENCE_MS : 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (until?.(output)) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ output, code });
    });
  });
}

async function runStep(step: Step, env: Record<string, string>, port: number): Promise<string> {
  const command = step.command.replaceAll('127.0.0.1:2468', `127.0.0.1:${port}`);
  const exported = /^export (\w+)=/.exec(command);
  if (exported) {
    const { output, code } = await bash(`${command}\nprintf '%s' "$${exported[1]}"`, env);
    expect(code, `${command}: ${output}`).toBe(0);
    env[exported[1]!] = output;
    return output;
  }
  if (step.comment.includes('Ctrl-C')) return (await bash(command, env, (out) => shows(out, step.expected))).output;
  const isGet = !/\s-X\s/.test(command);
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const { output, code } = await bash(command, env);
    if (code === 0 && shows(output, step.expected)) return output;
    if (!isGet || Date.now() > deadline) return output;
    await new Promise((r) => setTimeout(r, 250));
  }
}

let dataDir: string;
let daemon: DaemonProcess;

beforeAll(async () => {
  await setUpInstall();
  dataDir = mkdtempSync(join(tmpdir(), 'agentwire-walkthrough-'));
}, 600_000);
afterAll(() => {
  killDaemons();
  removeInstall();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("the README's walkthrough", () => {
  it('has the steps it describes, each command with what it answers', () => {
    const steps = walkthrough();
    expect(steps[0]!.command).toBe('export AGENTWIRE_TOKEN=$(node bin/agentwire.js token)');
    expect(steps.length).toBeGreaterThanOrEqual(14);
    for (const step of steps.slice(1)) expect(step.expected.length, step.command).toBeGreaterThan(0);
    expect(steps.at(-1)!.command).toContain('-X DELETE http://127.0.0.1:2468/v1/sessions/demo');
  });

  for (const run of [1, 2]) {
    it(`runs as written (run ${run} of 2${run === 2 ? ', after a restart' : ''})`, async () => {
      if (run === 2) {
        daemon.child.kill('SIGTERM');
        await daemon.exited;
      }
      // The daemon's defaults but the port: a token of its own, kept in its data dir.
      ({ daemon } = { daemon: (await startDaemon(['--data-dir', dataDir])).daemon });
      const port = await daemon.port();
      const env: Record<string, string> = { ...cleanEnv(), AGENTWIRE_DATA_DIR: dataDir };
      for (const step of walkthrough()) {
        const output = await runStep(step, env, port);
        expect(shows(output, step.expected), `${step.command}\nanswered:\n${output.slice(0, 2000)}\nexpected:\n${step.expected.join('\n')}`).toBe(true);
        expect(output).not.toContain('agent.unparsed');
      }
      expect(env.AGENTWIRE_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }, 120_000);
  }
});
