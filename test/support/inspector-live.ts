// The inspector's session list follows the daemon-wide feed (registered by
// test/inspector/browser.test.ts): sessions created, run and deleted by someone else appear, change
// status and disappear live, and the page polls nothing: over several of the old poll intervals it
// asks for the session list and the health once each, and otherwise only streams.
import { describe, expect, it } from 'vitest';
import type { BrowserTestContext } from './browser.js';
import { call } from './daemon-process.js';

export function liveListTests(ctx: BrowserTestContext): void {
  describe('the inspector follows the feed', { timeout: 90_000 }, () => {
    it('shows sessions made elsewhere appear, run and disappear, without polling', async () => {
      // Every request from before the page loaded: its first list, health and feed head included.
      const { page, requests: asked } = await ctx.open();
      const list = page.getByRole('region', { name: 'Sessions' });
      await list.getByText(/None yet\.|·/).first().waitFor();
      const link = () => list.getByRole('link', { name: /feed-live/ });

      await call(ctx.port, 'POST', '/v1/sessions/feed-live', { agent: 'mock', title: 'feed-live' });
      await link().waitFor();
      await call(ctx.port, 'POST', '/v1/sessions/feed-live/messages', { message: 'slow 40' });
      await link().getByText('running').waitFor();
      await link().getByText('idle').waitFor({ timeout: 30_000 });
      await call(ctx.port, 'DELETE', '/v1/sessions/feed-live');
      await link().waitFor({ state: 'detached' });

      // Longer than two of the old list polls (3 s) and one of the old health polls (10 s would be too long to wait: a drop is what asks again now).
      await page.waitForTimeout(7_000);
      const polls = asked.filter((a) => a === 'GET /v1/sessions' || a === 'GET /v1/health' || a === 'GET /v1/events');
      expect(polls.sort()).toEqual(['GET /v1/events', 'GET /v1/health', 'GET /v1/sessions']);
      expect(asked.filter((a) => a === 'GET /v1/events/sse')).toHaveLength(1);
      // The one request the list made for the new session: its title and details.
      expect(asked.filter((a) => a === 'GET /v1/sessions/feed-live')).toHaveLength(1);
    });
  });
}
