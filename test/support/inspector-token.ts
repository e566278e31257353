// The inspector with a daemon that wants a token, in real Chromium (registered by
// test/inspector/browser.test.ts). The Connect form says where the token is and how to print it, in
// the words of the daemon's 401 (the one of the page's first call without a token, or the one that
// refused a token), as text, with words of its own when the 401 does not say; the token is taken
// from ?token= (then removed from the address), kept for the tab, and a wrong one is refused
// without the page falling over, whatever order the daemon answers in.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PWNED, screenshot, type BrowserTestContext, type Prepare } from './browser.js';
import { cleanEnv, installDir } from './daemon-process.js';
import { createSession } from './inspector-steps.js';

/** The 401s a page without the right token gets (and Chromium's console line for each): expected. */
const refusals: Prepare = async (_page, allow) => {
  allow(/^http 401: GET /);
  allow(/^console: Failed to load resource: the server responded with a status of 401/);
};

/** The page's call without a token answered with this detail, as a daemon other than ours would. */
function refusedWith(detail: string): Prepare {
  return async (page, allow) => {
    await refusals(page, allow);
    const problem = { type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthorized', detail };
    await page.route('**/v1/sessions', (route) => route.fulfill({ status: 401, contentType: 'application/problem+json', body: JSON.stringify(problem) }));
  };
}

export function tokenTests(ctx: BrowserTestContext): void {
  describe('the token', { timeout: 90_000 }, () => {
    it('is asked for, then kept for the tab', async () => {
      const { page: p, allow } = await ctx.open('/', ctx.locked, refusals);
      const form = p.getByRole('form', { name: 'Connect' });
      await form.getByLabel('Token').fill(ctx.token);
      await form.getByRole('button', { name: 'Connect' }).click();
      await p.getByText('Healthy').waitFor();
      await createSession(p);
      // The reload aborts whatever the page had in flight (its session list refreshes on a timer):
      // Chromium reports those as failed requests, caused by the test, not the page.
      allow(/^request failed: GET \S+\/v1\/\S* net::ERR_ABORTED$/);
      await p.reload();
      await p.getByRole('status', { name: 'Connection' }).getByText('Live').waitFor();
      expect(await p.getByRole('form', { name: 'Connect' }).count()).toBe(0);
    });

    it('is taken from the URL a default daemon prints at start, and removed from the address', async () => {
      const printed = new URL(ctx.announced);
      expect(printed.origin).toBe(ctx.locked);
      const { page: p } = await ctx.open(printed.pathname + printed.search, ctx.locked);
      await p.getByRole('form', { name: 'New session' }).waitFor();
      await p.getByRole('list', { name: 'Sessions' }).or(p.getByText('None yet.')).first().waitFor();
      expect(p.url()).toBe(`${ctx.locked}/ui/`);
      await createSession(p);
    });

    it('reaches the API reference too, which renders offline under the same CSP', async () => {
      const { page: p } = await ctx.open(`/docs?token=${ctx.token}`, ctx.locked);
      await p.getByText('/v1/sessions/{id}/messages/stream').first().waitFor();
      expect(p.url()).toBe(`${ctx.locked}/docs`);
      await screenshot(p, 'docs');
    });

    it('a wrong token is refused and asked for again', async () => {
      // The daemon answers the page's first calls with 401 (and Chromium logs each): expected here.
      const { page: p } = await ctx.open('/', ctx.locked, refusals);
      // One of the wrong token's calls is answered only after the right token was typed (as on a
      // loaded machine): that late 401 must not send the page back to the form.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let late = 0;
      await p.route('**/v1/agents', async (route) => {
        if (route.request().headers().authorization !== `Bearer ${ctx.token}`) {
          late += 1;
          await held;
        }
        await route.continue();
      });
      await p.getByLabel('Token').fill('not-the-token-at-all');
      await p.getByRole('button', { name: 'Connect' }).click();
      await p.getByRole('alert').getByText('The daemon refused that token.').waitFor();
      await p.getByText(`Its token is in ${join(ctx.lockedDir, 'token')}`).waitFor();
      expect(ctx.current()!.expected.length).toBeGreaterThan(0);
      await p.getByLabel('Token').fill(ctx.token);
      await p.getByRole('button', { name: 'Connect' }).click();
      await p.getByText('Healthy').waitFor();
      expect(late).toBeGreaterThan(0);
      const answered = p.waitForResponse((r) => r.url().endsWith('/v1/agents') && r.status() === 401);
      release();
      await answered;
      await p.getByRole('list', { name: 'Sessions' }).or(p.getByText('None yet.')).first().waitFor();
      expect(await p.getByRole('form', { name: 'Connect' }).count()).toBe(0);
      await p.getByText('Healthy').waitFor();
    });

    it('says where the token is and how to print it, from the 401 of its one call without a token', async () => {
      const { page: p, requests } = await ctx.open('/', ctx.locked, refusals);
      const form = p.getByRole('form', { name: 'Connect' });
      const help = form.getByText(`Its token is in ${join(ctx.lockedDir, 'token')}; print it with: `);
      await help.waitFor();
      await screenshot(p, 'connect');
      const command = /print it with: (.+)$/.exec((await help.textContent()) ?? '')?.[1];
      expect(command).toContain(`token --data-dir ${ctx.lockedDir}`);
      // Run where the daemon was started (its install), the command prints the token.
      const printed = await promisify(execFile)('sh', ['-c', command!], { cwd: installDir(), env: cleanEnv() });
      expect(printed.stdout.trim()).toBe(ctx.token);
      // One call asked, and the page called nothing else of the API.
      expect(requests.filter((r) => r.includes('/v1/'))).toEqual(['GET /v1/sessions']);
    });

    it('says it from the 401 that refused a token from ?token=, without a call of its own', async () => {
      const { page: p, requests } = await ctx.open('/?token=not-the-token-at-all', ctx.locked, refusals);
      const form = p.getByRole('form', { name: 'Connect' });
      await form.getByRole('alert').getByText('The daemon refused that token.').waitFor();
      await form.getByText(`Its token is in ${join(ctx.lockedDir, 'token')}; print it with: `).waitFor();
      // The session list asks GET /v1/sessions only after the feed's head, which was refused.
      expect(requests).not.toContain('GET /v1/sessions');
    });

    it('shows what the daemon says as text, never as markup', async () => {
      const said = 'Its token is in <img src=x onerror="window.__pwned=1">/srv/token; print it with: <b>agentwire</b> token';
      const { page: p } = await ctx.open('/', ctx.locked, refusedWith(`This daemon needs Authorization: Bearer <token>. ${said}`));
      const form = p.getByRole('form', { name: 'Connect' });
      await form.getByText(said).waitFor();
      expect(await form.locator('img, b').count()).toBe(0);
      expect(await p.evaluate(PWNED)).toBeUndefined();
    });

    it('says where to look in its own words when the 401 does not (a daemon from before it did)', async () => {
      const { page: p } = await ctx.open('/', ctx.locked, refusedWith('This daemon needs Authorization: Bearer <token>.'));
      const form = p.getByRole('form', { name: 'Connect' });
      await form.getByText('If the daemon made its own token, it printed a link with it when it started').waitFor();
      await form.getByText('--token, --token-file or AGENTWIRE_TOKEN').waitFor();
    });
  });
}
