// The README's curl walkthrough, run as written (issue 28), twice, with a restart in between: its
// ```sh block is read from README.md, never copied here, and each command runs in sh against a
// real daemon; what the README shows under a command (`# → …`) must be what it answers. The runner
// is the one every docs example goes through (test/support/doc-examples.ts: the port rewritten,
// Ctrl-C, a GET run again until it shows its answer); test/daemon/docs-examples.test.ts runs the
// block once with the others. This file adds what only the walkthrough promises: it runs again
// after a restart on the same data dir. The commands run where the built daemon is (the shared
// install has the clone's layout: bin/agentwire.js, dist/), with AGENTWIRE_DATA_DIR naming the
// daemon's data dir, so `agentwire token` reads its token. The commands reach the daemon through
// the validating proxy the docs' examples go through (test/support/validating-proxy.ts): each run's
// exchanges must match openapi.json, and a command whose exchange does not fails, named.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, killDaemons, removeInstall, setUpInstall, sharedInstallDir, startDaemon, type DaemonProcess } from '../support/daemon-process.js';
import { runStep, shows, steps, type Step } from '../support/doc-examples.js';
import { startValidatingProxy, violationReport } from '../support/validating-proxy.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The walkthrough's steps, from the first ```sh block after its heading. */
function walkthrough(): Step[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A walkthrough with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README.md has no ```sh block under "## A walkthrough with curl"');
  return steps(block);
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
      const proxy = await startValidatingProxy(await daemon.port());
      const env: Record<string, string> = { ...cleanEnv(), AGENTWIRE_DATA_DIR: dataDir };
      try {
        for (const step of walkthrough()) {
          proxy.label = `README.md (run ${run}): ${step.command}`;
          const { output, code } = await runStep(step, { cwd: sharedInstallDir(), env, port: proxy.port });
          expect(shows(output, step.expected), `${step.command}\nanswered:\n${output.slice(0, 2000)}\nexpected:\n${step.expected.join('\n')}`).toBe(true);
          expect(code, `${step.command}: ${output}`).toBe(0);
          expect(output).not.toContain('agent.unparsed');
          const broke = await proxy.settle();
          expect(broke, violationReport(broke)).toEqual([]);
        }
        expect(proxy.checked).toBeGreaterThanOrEqual(14);
      } finally {
        await proxy.close();
      }
      expect(env.AGENTWIRE_TOKEN).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }, 120_000);
  }
});
