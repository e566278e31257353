// Real Chromium for the inspector's tests: Debian's /usr/bin/chromium driven by playwright-core
// (which never downloads a browser), headless, with a fresh profile per launch (playwright gives
// every launch its own temporary user-data-dir) and nothing that reaches the network by itself.
// Every page is watched: a console error, an uncaught exception, a failed request or an HTTP error
// fails the test, unless the test said beforehand that it expects exactly that.
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
/** The token of the browser tests' second daemon. */

/** What inspector-browser.test.ts hands the test modules it registers. */
export interface BrowserTestContext {
  /** The daemon started with --no-token (its origin and port), and the origin of a default one,
   *  which made its own token. */
  base: string;
  port: number;
  locked: string;
  /** The locked daemon's token, and the inspector URL with it that the daemon printed at start. */
  token: string;
  announced: string;
  /** The locked daemon's data dir, which holds its token file. */
  lockedDir: string;
  /** Opens `path` on `origin` (default: base) in a fresh context, watched until the test ends;
   *  `prepare` runs before the page loads (to allow what its first requests will answer, to route). */
  open(path?: string, origin?: string, prepare?: Prepare): Promise<Watched>;
  current(): Watched | undefined;
}

/** Evaluated in the page (a string: the tests' TypeScript has no DOM types). */
export const READ_CLIPBOARD = 'navigator.clipboard.readText()';
export const PWNED = 'window.__pwned';
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/inspector/', import.meta.url));

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // playwright adds --headless itself for headless: true; listed here so the set is complete.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    headless: true,
    timeout: 60_000,
  });
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Everything that went wrong, as "kind: detail" lines. */
  problems: string[];
  /** Problems the test announced (allow) and that then happened. */
  expected: string[];
  /** Every request the page made, as "METHOD /path", from before it loaded (a listener added after
   *  `open` would miss the page's first requests). */
  requests: string[];
  /** Problems matching this are expected from now on (until the test ends). */
  allow(pattern: RegExp): void;
  /** Fails the test on any problem that was not allowed. */
  check(): void;
}

/** What a test does to a page before it loads. */
export type Prepare = (page: Page, allow: (pattern: RegExp) => void) => Promise<void>;

export async function openPage(browser: Browser, url: string, prepare?: Prepare): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(url).origin });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  const expected: string[] = [];
  const allowed: RegExp[] = [];
  const requests: string[] = [];
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
  const record = (line: string) => (allowed.some((p) => p.test(line)) ? expected : problems).push(line);
  page.on('console', (m) => {
    if (m.type() === 'error') record(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => record(`exception: ${e.message}`));
  page.on('requestfailed', (r) => {
    // The page closes its event stream when it leaves a session or reopens it with include_raw:
    // Chromium reports that as a failed request (net::ERR_ABORTED). That, and only that, is normal.
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && r.url().includes('/events/sse')) return;
    record(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) record(`http ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  const allow = (pattern: RegExp) => void allowed.push(pattern);
  await prepare?.(page, allow);
  await page.goto(url);
  return {
    page,
    context,
    problems,
    expected,
    requests,
    allow,
    check: () => expect(problems, problems.join('\n')).toEqual([]),
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Presses Tab until `target` has the focus: proof the keyboard reaches it. */
export async function tabTo(page: Page, target: Locator, limit = 60): Promise<void> {
  for (let i = 0; i < limit; i++) {
    // Run in the page; the tests' TypeScript has no DOM types, so the element is described.
    if (await target.evaluate((el: unknown) => el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${target}`);
}

/**
 * A loopback TCP proxy between the browser and the daemon, so a test can drop connections the way
 * a network does: `cut(pattern)` destroys every connection whose current request line matches.
 */
export class CuttableProxy {
  private server: Server;
  private sockets = new Map<Socket, { upstream: Socket; request: string }>();

  constructor(private readonly target: number) {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      const entry = { upstream, request: '' };
      this.sockets.set(client, entry);
      client.on('data', (chunk: Buffer) => {
        const line = /^[A-Z]+ \S+ HTTP\/1\.1/.exec(chunk.toString('latin1', 0, 300));
        if (line) entry.request = line[0];
      });
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  /** Destroys the matching connections (both sides, no FIN handshake); how many it cut. */
  cut(pattern: RegExp): number {
    let n = 0;
    for (const [client, { upstream, request }] of this.sockets) {
      if (!pattern.test(request)) continue;
      client.resetAndDestroy();
      upstream.destroy();
      n++;
    }
    return n;
  }

  close(): Promise<void> {
    for (const [client, { upstream }] of this.sockets) {
      client.destroy();
      upstream.destroy();
    }
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
