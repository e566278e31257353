// The inspector with hostile agent output and with a token, in real Chromium (registered by
// inspector-browser.test.ts). An agent's text is data: markup in it must not run, a javascript:
// link must not become a link, a huge line must not freeze or widen the page. The token is asked
// for, taken from ?token= (then removed from the address), kept for the tab, and a wrong one is
// refused without the page falling over.
import { describe, expect, it } from 'vitest';
import { PWNED, screenshot, type BrowserTestContext } from './browser.js';
import { call } from './daemon-process.js';
import { createSession, send, transcript } from './inspector-steps.js';

export function safetyTests(ctx: BrowserTestContext): void {
  describe('hostile agent output', { timeout: 90_000 }, () => {
    it('shows markup as text: an <img onerror> never loads or runs', async () => {
      const { page: p } = await ctx.open();
      await createSession(p);
      const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> **bold**';
      await send(p, `echo ${evil}`);
      const reply = transcript(p).getByRole('article', { name: 'Assistant message' });
      await reply.getByText('<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>', { exact: false }).waitFor();
      await reply.locator('strong', { hasText: 'bold' }).waitFor(); // markdown still renders
      expect(await p.evaluate(PWNED)).toBeUndefined();
      expect(await transcript(p).locator('img, script').count()).toBe(0);
    });

    it('never turns a javascript: link into a link; real links open in a new tab without opener', async () => {
      const { page: p } = await ctx.open();
      await createSession(p);
      await send(p, 'echo [click me](javascript:window.__pwned=3) and [docs](https://example.invalid/x) and <javascript:alert(1)>');
      const reply = transcript(p).getByRole('article', { name: 'Assistant message' });
      await reply.getByRole('link', { name: 'docs' }).waitFor();
      expect(await reply.locator('a[href^="javascript:" i]').count()).toBe(0);
      expect(await reply.getByRole('link', { name: 'click me' }).count()).toBe(0);
      await reply.getByText('click me', { exact: false }).click();
      expect(await p.evaluate(PWNED)).toBeUndefined();
      expect(new URL(p.url()).pathname).toMatch(/^\/ui\/sessions\//);
      const link = reply.getByRole('link', { name: 'docs' });
      expect(await link.getAttribute('target')).toBe('_blank');
      expect(await link.getAttribute('rel')).toContain('noopener');
    });

    it('stays responsive and keeps its width with a 300,000-character line', async () => {
      const { page: p } = await ctx.open();
      const id = await createSession(p);
      // Sent by another client: typing 300,000 characters would test the browser's typing, not the page.
      await call(ctx.port, 'POST', `/v1/sessions/${id}/messages`, { message: `echo ${'A'.repeat(300_000)}` });
      const reply = transcript(p).getByRole('article', { name: 'Assistant message' });
      // Drawn cut at first (50,000 characters), whole on request.
      await reply.getByRole('button', { name: 'Show all 300,000 characters' }).click();
      await expect.poll(() => reply.evaluate((el) => el.textContent?.length ?? 0)).toBeGreaterThanOrEqual(300_000);
      const started = Date.now();
      await p.getByRole('tab', { name: 'Events' }).click();
      await p.getByRole('table', { name: 'Events' }).waitFor();
      await p.getByRole('tab', { name: 'Transcript' }).click();
      expect(Date.now() - started).toBeLessThan(10_000);
      const widths = await p.evaluate<{ page: number; view: number }>('({ page: document.documentElement.scrollWidth, view: window.innerWidth })');
      expect(widths.page).toBeLessThanOrEqual(widths.view);
    });
  });

  describe('the token', { timeout: 90_000 }, () => {
    it('is asked for, then kept for the tab', async () => {
      const { page: p, allow } = await ctx.open('/', ctx.locked);
      const form = p.getByRole('form', { name: 'Connect' });
      await screenshot(p, 'connect');
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
      const { page: p } = await ctx.open('/', ctx.locked);
      // The daemon answers the page's first calls with 401 (and Chromium logs each): expected here.
      ctx.current()!.allow(/^http 401: GET /);
      ctx.current()!.allow(/^console: Failed to load resource: the server responded with a status of 401/);
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
  });
}
