// The inspector's messages during a turn and forks (registered by test/inspector/browser.test.ts,
// which owns the daemons, the browser and the checks after each test): Queue and Steer while a
// turn runs, the queued list and cancelling from it, Steer refused where the agent cannot, and
// "Fork from here" on an earlier turn opening the fork with the copied transcript.
import { describe, expect, it } from 'vitest';
import { screenshot, type BrowserTestContext } from './browser.js';
import { createSession, send, transcript } from './inspector-steps.js';

export function queueForkTests(ctx: BrowserTestContext): void {
  describe('the inspector: queue, steer, fork', { timeout: 90_000 }, () => {
    it('queues two messages during a turn, cancels one, steers another; the queued one runs next', async () => {
      const { page } = await ctx.open();
      await createSession(page);
      // 10 s of turn: the queueing, cancelling and steering below must all land inside it, also on
      // a loaded machine (3 s was not always enough in CI).
      await send(page, 'slow 100');
      await page.getByLabel('Session status').getByText('running').waitFor();
      const box = page.getByRole('textbox', { name: 'Message' });
      const queue = page.getByRole('button', { name: 'Queue' });
      expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
      await box.fill('echo first');
      await queue.click();
      // The box empties once the daemon took the message: typing before that would be cleared with it.
      await expect.poll(() => box.inputValue(), { timeout: 15_000 }).toBe('');
      await box.fill('echo second');
      await box.press('Enter'); // Enter queues while a turn runs
      const list = page.getByRole('list', { name: 'Queued messages' });
      await expect.poll(() => list.getByRole('listitem').allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('echo first'), expect.stringContaining('echo second')]);
      await screenshot(page, 'queued');
      await list.getByRole('listitem').filter({ hasText: 'echo first' }).getByRole('button', { name: 'Cancel queued message' }).click();
      await expect.poll(() => list.getByRole('listitem').count()).toBe(1);

      await expect.poll(() => box.inputValue(), { timeout: 15_000 }).toBe('');
      await box.fill('use tabs');
      await page.getByRole('button', { name: 'Steer' }).click();
      // Taken (the box empties on the daemon's 202), and nothing refused on the way.
      await expect.poll(() => box.inputValue(), { timeout: 15_000 }).toBe('');
      expect(await page.locator('.feedback').textContent()).toBe('');
      const t = transcript(page);
      const steered = t.getByRole('article', { name: 'Steered message' });
      await steered.getByText('use tabs').waitFor();
      await t.getByRole('article', { name: 'Assistant message' }).first().getByText('[steered: use tabs]').waitFor({ timeout: 30_000 });
      // The queued message runs as the next turn, and leaves the list.
      await t.getByRole('article', { name: 'Assistant message' }).getByText('second', { exact: true }).waitFor({ timeout: 30_000 });
      await list.waitFor({ state: 'detached' });
      await page.getByLabel('Session status').getByText('idle').waitFor();
      // Each message is drawn once: the steered one as such, not again as a user message.
      expect(await t.getByRole('article', { name: 'User message' }).allTextContents()).toEqual([expect.stringContaining('slow 100'), expect.stringContaining('echo second')]);
      expect(await steered.count()).toBe(1);
      expect(await t.getByText('echo first').count()).toBe(0);
    });

    it('offers no Steer where the agent cannot steer, and says why', async () => {
      const { page } = await ctx.open();
      // An agent without capability steer, as GET /v1/agents would describe it.
      await page.route('**/v1/agents', async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { agents: { capabilities: { steer: boolean } | null }[] };
        for (const a of body.agents) if (a.capabilities) a.capabilities.steer = false;
        await route.fulfill({ response, json: body });
      });
      await createSession(page);
      await send(page, 'slow 20');
      await page.getByLabel('Session status').getByText('running').waitFor();
      await page.getByRole('textbox', { name: 'Message' }).fill('use tabs');
      const steer = page.getByRole('button', { name: 'Steer' });
      expect(await steer.getAttribute('title')).toContain('cannot take a message into a running turn');
      expect(await steer.isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Queue' }).isEnabled()).toBe(true);
      await page.getByRole('button', { name: 'Interrupt' }).click();
      await transcript(page).getByText('Turn ended: interrupted.').waitFor();
    });

    it('forks from an earlier turn: the fork opens with the copied transcript and where it came from', async () => {
      const watched = await ctx.open();
      const { page } = watched;
      // No 404 is allowed here: the feed carries the fork's copied events before its agent has
      // started, and the daemon serves a starting session's GET from then on (docs/http-api.md).
      const parent = await createSession(page);
      const t = transcript(page);
      await send(page, 'echo one');
      await t.getByRole('article', { name: 'Assistant message' }).getByText('one', { exact: true }).waitFor();
      await send(page, 'echo two');
      await t.getByRole('article', { name: 'Assistant message' }).getByText('two', { exact: true }).waitFor();
      const forks = t.getByRole('button', { name: 'Fork from here' });
      await expect.poll(() => forks.count()).toBe(2);
      await forks.first().click();
      await page.waitForURL((url) => !url.pathname.endsWith(encodeURIComponent(parent)));
      await page.getByRole('status', { name: 'Connection' }).getByText('Live').waitFor();
      const line = t.getByText(`Forked from ${parent} after turn_1.`);
      await line.waitFor();
      await t.getByRole('article', { name: 'Assistant message' }).getByText('one', { exact: true }).waitFor();
      expect(await t.getByText('two', { exact: true }).count()).toBe(0);
      await send(page, 'history');
      await t.getByText(/Earlier prompts in this session \(1\)/).waitFor();
      expect(await t.getByText('echo two').count()).toBe(0);
      await screenshot(page, 'fork');
      // The line links back to the parent.
      await line.getByRole('link', { name: parent }).click();
      await page.waitForURL((url) => url.pathname.endsWith(encodeURIComponent(parent)));
      await t.getByRole('article', { name: 'Assistant message' }).getByText('two', { exact: true }).waitFor();
    });
  });
}
