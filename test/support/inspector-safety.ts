// The inspector with hostile agent output, in real Chromium (registered by
// test/inspector/browser.test.ts). An agent's text is data: markup in it must not run, a javascript:
// link must not become a link, a huge line must not freeze or widen the page. The token: inspector-token.ts.
import { describe, expect, it } from 'vitest';
import { PWNED, type BrowserTestContext } from './browser.js';
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
}
