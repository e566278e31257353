// Every example in the docs runs (issue 42): each fenced ```sh block of README.md and docs/*.md is
// read from its page, never copied here, and run command by command in sh against ONE real daemon
// process (the built install) for the whole file, page after page; each command must exit 0 and
// show what the page shows under it (`# → …`). A block that cannot run here (it installs packages,
// needs Docker, PostgreSQL, a key, or holds the terminal as a server) says so on the line before
// its fence, `<!-- not-runnable: why -->`; an unmarked block is run, so a new example is either
// tested or marked, never silently neither. How a command is run (the port rewritten, Ctrl-C, a
// GET run again until it shows its answer) is test/support/doc-examples.ts, the runner the README
// walkthrough's own test uses too.
//
// Every request the examples make goes through a validating proxy (test/support/validating-proxy.ts,
// issue 41): the commands are given the proxy's address, never the daemon's, and each exchange is
// checked against the committed openapi.json (operation, status, content type, JSON body, stream
// frames, the body and query of an accepted request). A command whose exchanges break the document
// fails, naming the operation, the page and the command. WebSocket upgrades (`agentwire acp`'s
// `GET /v1/acp`) pass through unchecked.
//
// The commands run in a directory laid out like a clone: bin/ and dist/ are the test install's
// build (what `npm start` builds), src/ and node_modules/ the repository's, and examples/ and
// client/ copies (so `npm run build -w client` builds a client/dist of its own, never the
// repository's). Their environment is a reader's who started the daemon and exported the token as
// the README does: AGENTWIRE_TOKEN, AGENTWIRE_DATA_DIR (the daemon's, so `agentwire token` and
// `agentwire acp` find it) and AGENTWIRE_PORT (its port, which `agentwire acp` and the examples'
// scripts read), the proxy's; an address written in a command, 127.0.0.1:2468, becomes the proxy's.
// Each page starts from that environment, and the assignments of its blocks carry to its later
// blocks, as in one terminal.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';
import { call, cleanEnv, killDaemons, removeInstall, setUpInstall, sharedInstallDir, startDaemon, type DaemonProcess } from '../support/daemon-process.js';
import { pagesBlocks, runStep, shBlocks, shows, steps, type ShBlock } from '../support/doc-examples.js';
import { startValidatingProxy, violationReport, type ValidatingProxy } from '../support/validating-proxy.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const blocks = pagesBlocks(ROOT, PAGES);

/** A clone's layout around the install's build (see the top of this file). */
function cloneLayout(install: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-docs-clone-'));
  for (const built of ['bin', 'dist', 'openapi.json']) symlinkSync(join(install, built), join(dir, built));
  symlinkSync(join(ROOT, 'src'), join(dir, 'src'), 'dir');
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
  const client = join(ROOT, 'client');
  cpSync(client, join(dir, 'client'), { recursive: true, filter: (src) => !/^(node_modules|dist)(\/|$)/.test(relative(client, src)) });
  // The workspace's link must name this client, not the repository's: every other package is the repository's.
  mkdirSync(join(dir, 'node_modules'));
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    symlinkSync(entry === 'agentwire-client' ? '../client' : join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

let dataDir: string;
let clone: { dir: string; remove: () => void };
let daemon: DaemonProcess;
let port: number;
let proxy: ValidatingProxy;
let base: Record<string, string>;
const pageEnv = new Map<string, Record<string, string>>();

beforeAll(async () => {
  await setUpInstall();
  dataDir = mkdtempSync(join(tmpdir(), 'agentwire-docs-'));
  clone = cloneLayout(sharedInstallDir());
  // The daemon's defaults but the port: a token of its own, kept in its data dir.
  const started = await startDaemon(['--data-dir', dataDir]);
  ({ daemon, port } = started);
  proxy = await startValidatingProxy(port);
  base = cleanEnv({ AGENTWIRE_TOKEN: started.token!, AGENTWIRE_DATA_DIR: dataDir, AGENTWIRE_PORT: String(proxy.port) });
}, 600_000);
afterAll(async () => {
  await proxy?.close();
  killDaemons();
  removeInstall();
  clone?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function run(block: ShBlock): Promise<void> {
  if (!pageEnv.has(block.page)) pageEnv.set(block.page, { ...base });
  const shell = { cwd: clone.dir, env: pageEnv.get(block.page)!, port: proxy.port };
  for (const step of steps(block.text)) {
    proxy.label = `${block.page}:${block.line}: ${step.command}`;
    const { output, code } = await runStep(step, shell);
    const where = `${block.page}:${block.line}: ${step.command}\nanswered (exit ${code}):\n${output.slice(0, 3000)}`;
    expect(code, where).toBe(0);
    expect(shows(output, step.expected), `${where}\nexpected:\n${step.expected.join('\n')}`).toBe(true);
    expect(output, where).not.toContain('agent.unparsed');
    const broke = await proxy.settle();
    expect(broke, violationReport(broke)).toEqual([]);
  }
}

describe("the docs' ```sh examples", () => {
  it('splits a page into blocks and a block into commands, each with its comment and its answers', () => {
    const page = [
      '<!-- not-runnable: needs Docker, and builds an image -->',
      '```sh',
      'docker build .',
      '```',
      '',
      '````md',
      '```sh',
      'inside a longer fence: not a block',
      '```',
      '````',
      '```sh',
      '# make one (Ctrl-C to stop)',
      "curl -d '{",
      '  "a": 1',
      "}' \\",
      '  http://127.0.0.1:2468/x',
      '# → {"ok":true,…',
      'id=$(echo x)',
      '{',
      '  echo "$id"',
      '} | cat',
      '# → x',
      '```',
    ].join('\n');
    const found = shBlocks('docs/x.md', page);
    expect(found.map((b) => [b.line, b.notRunnable])).toEqual([
      [2, 'needs Docker, and builds an image'],
      [11, undefined],
    ]);
    expect(steps(found[1]!.text)).toEqual([
      { comment: '# make one (Ctrl-C to stop)\n', command: "curl -d '{\n  \"a\": 1\n}' \\\n  http://127.0.0.1:2468/x", expected: ['{"ok":true,…'] },
      { comment: '', command: 'id=$(echo x)', expected: [] },
      { comment: '', command: '{\n  echo "$id"\n} | cat', expected: ['x'] },
    ]);
    expect(shows('{"ok":true,"n":1}', ['{"ok":true,…'])).toBe(true);
    expect(shows('{"ok":false}', ['{"ok":true,…'])).toBe(false);
  });

  it('reads every page, and each block it does not run says why', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.filter((b) => b.page === 'README.md').length).toBeGreaterThanOrEqual(3);
    // The pages: each has an example that runs, not only marked ones.
    for (const page of ['docs/queue-steer-fork.md', 'docs/budgets.md', 'docs/feed.md', 'docs/acp-server.md', 'docs/client.md']) {
      expect(blocks.filter((b) => b.page === page && b.notRunnable === undefined).length, `${page} has a runnable sh block`).toBeGreaterThan(0);
    }
    for (const block of blocks.filter((b) => b.notRunnable !== undefined)) {
      expect(block.notRunnable!.length, `${block.page}:${block.line}: a not-runnable marker says why`).toBeGreaterThan(10);
    }
  });

  for (const page of PAGES) {
    const runnable = blocks.filter((b) => b.page === page && b.notRunnable === undefined);
    if (runnable.length === 0) continue;
    describe(page, () => {
      for (const block of runnable) it(`runs the block at line ${block.line}`, () => run(block), 90_000);
    });
  }

  it('sent every request through the validating proxy, which found nothing more', async () => {
    const late = await proxy.settle(5000);
    expect(late, violationReport(late)).toEqual([]);
    expect(proxy.checked).toBeGreaterThan(50); // the curls, `agentwire acp`'s calls and the client's examples
    expect(proxy.upgrades).toBeGreaterThan(0); // docs/acp-server.md's bridge, piped through unchecked
  });

  it('left the daemon running, and no agent wrote a line the daemon could not parse', async () => {
    expect(daemon.child.exitCode).toBeNull();
    const page = (await call(port, 'GET', '/v1/events?types=agent.unparsed&limit=10')) as { entries: { event: UniversalEvent }[] };
    expect(page.entries).toEqual([]);
    const all = (await call(port, 'GET', '/v1/events?limit=1')) as { lastCursor: number };
    expect(all.lastCursor).toBeGreaterThan(100); // the examples did run sessions through it
  });
});
