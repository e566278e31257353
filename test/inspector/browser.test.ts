// The inspector in real Chromium (Debian's, through playwright-core) against real daemon
// processes running the mock agent: one install, one browser and two daemons (one started with
// --no-token, one with the token a default daemon makes, keeps in its data dir and announces) for every browser test, which inspector-flows.ts, inspector-live.ts, inspector-queue-fork.ts, inspector-safety.ts and inspector-token.ts define. Each test gets
// a fresh browser context, and fails on any console error, uncaught exception, failed request or
// HTTP error it did not announce (test/support/browser.ts). Screenshots: test-artifacts/inspector/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchChromium, openPage, type BrowserTestContext, type Watched } from '../support/browser.js';
import { killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { flowTests } from '../support/inspector-flows.js';
import { liveListTests } from '../support/inspector-live.js';
import { queueForkTests } from '../support/inspector-queue-fork.js';
import { safetyTests } from '../support/inspector-safety.js';
import { tokenTests } from '../support/inspector-token.js';

let browser: Browser;
let watched: Watched | undefined;
const ctx: BrowserTestContext = {
  base: '',
  port: 0,
  locked: '',
  token: '',
  announced: '',
  lockedDir: '',
  open: async (path = '/', origin = ctx.base, prepare) => {
    watched = await openPage(browser, origin + path, prepare);
    return watched;
  },
  current: () => watched,
};

beforeAll(async () => {
  const [b] = await Promise.all([launchChromium(), setUpInstall()]);
  browser = b;
  // The locked daemon persists, in a data dir of its own (never the user's): its token file is the
  // one whose path its 401s name.
  ctx.lockedDir = mkdtempSync(join(tmpdir(), 'agentwire-inspector-'));
  const [open, locked] = await Promise.all([startDaemon(['--persist', 'off', '--no-token']), startDaemon(['--data-dir', ctx.lockedDir])]);
  ctx.port = open.port;
  ctx.base = `http://127.0.0.1:${open.port}`;
  ctx.locked = `http://127.0.0.1:${locked.port}`;
  ctx.token = locked.token!;
  ctx.announced = /open (http:\S+) /.exec(locked.daemon.stderr)![1]!;
}, 300_000);
afterAll(async () => {
  await browser?.close();
  killDaemons();
  removeInstall();
  if (ctx.lockedDir) rmSync(ctx.lockedDir, { recursive: true, force: true });
});
afterEach(async () => {
  const w = watched;
  watched = undefined;
  await w?.context.close();
  w?.check();
});

flowTests(ctx);
liveListTests(ctx);
queueForkTests(ctx);
safetyTests(ctx);
tokenTests(ctx);
