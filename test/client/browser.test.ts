// The client in a real browser: headless Chromium loads examples/follow-in-browser.html (the
// built client, eventsource-parser through the page's import map), which follows a session on a
// real daemon from another origin, with a token in the Authorization header (CORS preflight,
// fetch streams). Its page must come to say the session ended, listing its events 1..N.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { launchChromium, openPage } from '../support/browser.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const TOKEN = 'browser-token-0123456789';
let work: string;
let pages: Server;
let origin: string;

beforeAll(async () => {
  await setUpInstall();
  work = mkdtempSync(join(tmpdir(), 'agentwire-client-browser-'));
  // The client built as the package ships it, into a directory of the test's own.
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'client/tsconfig.json'), '--outDir', join(work, 'dist')]);
  pages = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    // Chromium asks for a favicon; a 404 would be logged as a console error, which fails the page.
    if (path === '/favicon.ico') return void res.writeHead(204).end();
    const file = path.startsWith('/client/dist/') ? join(work, 'dist', path.slice('/client/dist/'.length)) : join(ROOT, path);
    const allowed = path.startsWith('/client/dist/') || path.startsWith('/examples/') || path.startsWith('/node_modules/eventsource-parser/');
    try {
      if (!allowed) throw new Error('not served');
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': extname(file) === '.html' ? 'text/html' : 'text/javascript' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
}, 500_000);
afterAll(() => {
  removeInstall();
  pages?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});
afterEach(killDaemons);

describe('the client in headless Chromium', () => {
  it('examples/follow-in-browser.html follows a session from another origin with a token, to session.ended', async () => {
    const { baseUrl } = await startClientDaemon(['--cors-origin', origin, '--token', TOKEN]);
    const client = createClient({ baseUrl, token: TOKEN });
    const session = await client.sessions.create({ agent: 'mock' });
    const turn = await session.turn('permission', { onPermission: () => 'once' });
    expect(turn.text).toBe('Permission granted; wrote notes.txt.');
    await session.terminate();
    const log = await collect(session.events());
    expectDense(log);
    expectNoUnparsed(log);

    const url = `${origin}/examples/follow-in-browser.html?${new URLSearchParams({ session: session.id, daemon: baseUrl, token: TOKEN })}`;
    // Driven through playwright with a real wait for the page's own status, not a DOM dump after
    // a virtual-time budget: under load the budget could run out before the stream was read.
    const browser = await launchChromium();
    try {
      const watched = await openPage(browser, url);
      await watched.page.locator('#status').getByText('the session ended', { exact: true }).waitFor({ timeout: 60_000 });
      const html = await watched.page.content();
      const shown = [...html.matchAll(/<li>(\d+) ([a-z._]+)/g)].map((m) => ({ sequence: Number(m[1]), type: m[2] }));
      expect(shown).toEqual(log.map((e) => ({ sequence: e.sequence, type: e.type })));
      await watched.context.close();
      watched.check();
    } finally {
      await browser.close();
    }
  }, 180_000);
});
