// The inspector in real Chromium (Debian's, through playwright-core) against real daemon
// processes running the mock agent: one install, one browser and two daemons (one started with
// --no-token, one with the token a default daemon makes and announces) for every browser test, which inspector-flows.ts, inspector-live.ts, inspector-queue-fork.ts and inspector-safety.ts define. Each test gets
// a fresh browser context, and fails on any console error, uncaught exception, failed request or
// HTTP error it did not announce (test/support/browser.ts). Screenshots: test-artifacts/inspector/.
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchChromium, openPage, type BrowserTestContext, type Watched } from '../support/browser.js';
import { killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { flowTests } from '../support/inspector-flows.js';
import { liveListTests } from '../support/inspector-live.js';
import { queueForkTests } from '../support/inspector-queue-fork.js';
import { safetyTests } from '../support/inspector-safety.js';

let browser: Browser;
let watched: Watched | undefined;
const ctx: BrowserTestContext = {
  base: '',
  port: 0,
  locked: '',
  token: '',
  announced: '',
  open: async (path = '/', origin = ctx.base) => {
    watched = await openPage(browser, origin + path);
    return watched;
  },
  current: () => watched,
};

beforeAll(async () => {
  const [b] = await Promise.all([launchChromium(), setUpInstall()]);
  browser = b;
  const [open, locked] = await Promise.all([startDaemon(['--persist', 'off', '--no-token']), startDaemon(['--persist', 'off'])]);
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
