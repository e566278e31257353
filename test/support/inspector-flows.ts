// The inspector's flows in real Chromium (registered by inspector-browser.test.ts, which owns the
// daemon, the browser and the checks after each test): what a person runs (create, talk, approve,
// answer, interrupt, terminate, delete), the events table, a stream dropped under the page and
// resumed, and the keyboard alone.
import { describe, expect, it } from 'vitest';
import { CuttableProxy, READ_CLIPBOARD, screenshot, tabTo, type BrowserTestContext } from './browser.js';
import { call } from './daemon-process.js';
import { createSession, send, transcript } from './inspector-steps.js';

export function flowTests(ctx: BrowserTestContext): void {
  describe('the inspector', { timeout: 90_000 }, () => {
    it('creates a mock session and renders every item kind of `demo`', async () => {
      const { page } = await ctx.open();
      await createSession(page);
      await send(page, 'demo');
      const t = transcript(page);
      for (const name of ['User message', 'System message', 'Assistant message', 'Tool call write_file', 'Tool result', 'Status', 'Unknown item']) {
        await t.getByRole('article', { name, exact: true }).first().waitFor();
      }
      const assistant = t.getByRole('article', { name: 'Assistant message' });
      await assistant.getByText('This demo shows every kind of content the mock can produce.').waitFor();
      // Reasoning is folded: its summary shows, its text only once opened.
      const reasoning = assistant.locator('details.reasoning');
      expect(await reasoning.count()).toBe(2);
      await expect.poll(() => reasoning.first().getByText('Showing public reasoning.').isVisible()).toBe(false);
      await reasoning.first().locator('summary').click();
      await reasoning.first().getByText('Showing public reasoning.').waitFor();
      await assistant.getByText('"parts": 7').waitFor(); // json part
      await assistant.getByText('README.md').waitFor(); // file_ref read
      await assistant.getByText('image/png').waitFor(); // image
      await assistant.getByText('all content parts shown').waitFor(); // status part
      await t.getByRole('article', { name: 'Tool call write_file' }).getByText('"path": "notes.txt"').waitFor();
      const result = t.getByRole('article', { name: 'Tool result' });
      await result.getByText('wrote 6 bytes to notes.txt').waitFor();
      expect(await result.locator('.diff-add', { hasText: '+hello' }).count()).toBe(2); // write and patch diffs
      await t.getByRole('article', { name: 'Unknown item' }).getByText('demo-artifact').waitFor();
      await page.getByLabel('Session status').getByText('idle').waitFor();
      // The picture for the README: the tool call, its result with both diffs, status and unknown.
      await t.getByRole('article', { name: 'Tool call write_file' }).evaluate((el: unknown) => (el as { scrollIntoView(): void }).scrollIntoView());
      await screenshot(page, 'transcript-demo');
    });

    it("nests a sub-agent's work under the tool call that launched it, collapsible", async () => {
      const { page } = await ctx.open();
      await createSession(page);
      await send(page, 'subagent');
      const t = transcript(page);
      const call = t.getByRole('article', { name: 'Tool call delegate' });
      const sub = call.getByRole('region', { name: 'Sub-agent explorer: Look around' });
      await sub.getByText('completed', { exact: true }).waitFor();
      await sub.getByText('List the files.').waitFor(); // its prompt
      await sub.getByRole('article', { name: 'Assistant message' }).getByText('Listing the files.').waitFor();
      await sub.getByRole('article', { name: 'Tool call list_files' }).waitFor();
      await sub.getByRole('article', { name: 'Tool result' }).getByText('notes.txt', { exact: true }).waitFor();
      await sub.getByText('Found notes.txt.').first().waitFor(); // its summary
      // Its items are drawn only inside it; the main agent's reply is not.
      expect(await t.getByRole('article', { name: 'Tool call list_files' }).count()).toBe(1);
      expect(await sub.getByText('The sub-agent found notes.txt.').count()).toBe(0);
      await t.getByText('The sub-agent found notes.txt.').waitFor();
      await screenshot(page, 'transcript-subagent');

      const collapse = sub.getByRole('button', { name: 'Collapse sub-agent' });
      expect(await collapse.getAttribute('aria-expanded')).toBe('true');
      await collapse.click();
      const expand = sub.getByRole('button', { name: 'Expand sub-agent' });
      expect(await expand.getAttribute('aria-expanded')).toBe('false');
      await expect.poll(() => sub.getByRole('article', { name: 'Tool call list_files' }).count()).toBe(0);
      await expand.click();
      await sub.getByRole('article', { name: 'Tool call list_files' }).waitFor();
    });

    it('streams text as deltas arrive, and interrupts a slow turn', async () => {
      const { page } = await ctx.open();
      await createSession(page);
      await send(page, 'slow 100');
      const message = transcript(page).getByRole('article', { name: 'Assistant message' });
      await message.getByText('tick 3').waitFor();
      await message.getByText('streaming').waitFor(); // still in progress: text came in pieces
      await page.getByLabel('Session status').getByText('running').waitFor();
      await page.getByRole('button', { name: 'Interrupt' }).click();
      await transcript(page).getByText('Turn ended: interrupted.').waitFor();
      await page.getByLabel('Session status').getByText('idle').waitFor();
      expect(await message.getByText('tick 100').count()).toBe(0);
    });

    it('approves a permission, and drops a card answered elsewhere', async () => {
      const { page } = await ctx.open();
      const id = await createSession(page);
      await send(page, 'permission');
      const card = page.getByRole('region', { name: 'Permission request' });
      await card.getByText('write_file').waitFor();
      await page.getByLabel('Session status').getByText('waiting').waitFor();
      await page.getByRole('list', { name: 'Sessions' }).getByRole('link', { name: new RegExp(id) }).getByText('waiting').waitFor();
      await screenshot(page, 'permission');
      // Answered by another client: the card goes when the stream says it was resolved.
      const { events } = (await call(ctx.port, 'GET', `/v1/sessions/${id}/events?limit=10000`)) as { events: { type: string; data: { permission_id?: string } }[] };
      const pending = events.find((e) => e.type === 'permission.requested')!.data.permission_id!;
      await call(ctx.port, 'POST', `/v1/sessions/${id}/permissions/${pending}/reply`, { reply: 'reject' });
      await card.waitFor({ state: 'detached' });
      await transcript(page).getByText('Permission denied; did not write notes.txt.').waitFor();
      // Answered here.
      await send(page, 'permission');
      await card.getByRole('button', { name: 'Allow once' }).click();
      await card.waitFor({ state: 'detached' });
      await transcript(page).getByText('Permission granted; wrote notes.txt.').waitFor();
      expect(await page.getByRole('region', { name: 'Permission request' }).count()).toBe(0);
    });

    it('answers a question with an option, and rejects another', async () => {
      const { page } = await ctx.open();
      await createSession(page);
      await send(page, 'question');
      const card = page.getByRole('region', { name: 'Question' });
      await card.getByText('Which color do you prefer?').waitFor();
      await card.getByRole('checkbox', { name: 'green' }).check();
      await screenshot(page, 'question');
      await card.getByRole('button', { name: 'Submit answer' }).click();
      await card.waitFor({ state: 'detached' });
      await transcript(page).getByText('You answered: green').waitFor();
      await send(page, 'question');
      await card.getByRole('button', { name: 'Reject' }).click();
      await card.waitFor({ state: 'detached' });
      await transcript(page).getByText('Question rejected.').waitFor();
    });

    it('shows errors and a crash with its exit code and stderr', async () => {
      const { page } = await ctx.open();
      await createSession(page);
      await send(page, 'error');
      await transcript(page).getByRole('article', { name: 'Error' }).getByText('mock error requested').waitFor();
      await page.getByLabel('Session status').getByText('idle').waitFor();
      await send(page, 'crash');
      const ended = transcript(page).getByRole('article', { name: 'Session ended' });
      await ended.getByText('Session ended: error, by the agent, exit code 3').waitFor();
      await ended.getByText('mock: fatal line 5').waitFor();
      await page.getByLabel('Session status').getByText('ended').waitFor();
      expect(await page.getByRole('textbox', { name: 'Message' }).isDisabled()).toBe(true);
    });

    it('terminates, then deletes a session', async () => {
      const { page } = await ctx.open();
      const id = await createSession(page);
      await page.getByRole('button', { name: 'Terminate' }).click();
      await transcript(page).getByText('Session ended: terminated, by the daemon').waitFor();
      await page.getByLabel('Session status').getByText('ended').waitFor();
      await page.getByRole('list', { name: 'Sessions' }).getByRole('link', { name: new RegExp(id) }).getByText('ended').waitFor();
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('button', { name: 'Confirm delete' }).click();
      await page.waitForURL(`${ctx.base}/ui/`);
      await expect.poll(() => page.getByRole('link', { name: new RegExp(id) }).count()).toBe(0);
    });

    it('lists the raw events with filters, include_raw, copy, and the requests as curl', async () => {
      const { page } = await ctx.open();
      const id = await createSession(page);
      await send(page, 'tool');
      await transcript(page).getByText('Done.').waitFor();
      await page.getByRole('tab', { name: 'Events' }).click();
      const table = page.getByRole('table', { name: 'Events' });
      await table.getByRole('cell', { name: 'turn.ended' }).waitFor();
      expect(await table.getByRole('cell', { name: 'item.delta' }).count()).toBeGreaterThan(0);
      await page.getByRole('checkbox', { name: 'item.delta' }).uncheck();
      await expect.poll(() => table.getByRole('cell', { name: 'item.delta' }).count()).toBe(0);
      await table.getByRole('button', { name: 'Copy event 1', exact: true }).click();
      const copied = JSON.parse(await page.evaluate<string>(READ_CLIPBOARD)) as { sequence: number; type: string };
      expect(copied).toMatchObject({ sequence: 1, type: 'session.started', session_id: id });
      await page.getByRole('checkbox', { name: 'include_raw' }).check();
      await table.getByRole('button', { name: 'Show event 1', exact: true }).click();
      await table.getByText('raw (native):').waitFor();
      await table.getByText('"type": "ready"').waitFor(); // the mock's own first line
      await screenshot(page, 'events');
      await page.getByRole('tab', { name: 'Requests' }).click();
      const requests = page.getByRole('table', { name: 'Requests' });
      const create = requests.getByRole('row').filter({ has: page.getByRole('cell', { name: '/v1/sessions', exact: true }) }).filter({ hasText: 'POST' });
      await create.getByRole('button', { name: /Copy curl/ }).click();
      const curl = await page.evaluate<string>(READ_CLIPBOARD);
      expect(curl).toBe(`curl '${ctx.base}/v1/sessions' -H 'content-type: application/json' --data-raw '{"agent":"mock"}'`);
    });

    it('resumes from its last sequence when the daemon drops the stream, and says so', async () => {
      const proxy = new CuttableProxy(ctx.port);
      const proxied = await proxy.listen();
      try {
        const watched = await ctx.open('/', `http://127.0.0.1:${proxied}`);
        const { page } = watched;
        await createSession(page);
        await send(page, 'slow 50');
        const message = transcript(page).getByRole('article', { name: 'Assistant message' });
        await message.getByText('tick 5').waitFor();
        // The stream's connection is reset mid-turn, as a network or a proxy would: Chromium reports
        // that request as failed, which is what this test expects, and nothing else.
        watched.allow(/request failed: GET http:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/[^/]+\/events\/sse/);
        watched.allow(/console: Failed to load resource: net::ERR_(CONNECTION_RESET|INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE)/);
        expect(proxy.cut(/\/v1\/sessions\/[^/]+\/events\/sse/)).toBe(1); // the session's stream, not the list's feed
        await page.getByRole('status', { name: 'Connection' }).getByText(/resumed after sequence \d+/).waitFor();
        await message.getByText('tick 50').waitFor();
        // Every delta once, in order: nothing lost or repeated across the reconnection.
        const ticks = [...(await message.innerText()).matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
        expect(ticks).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
        expect(watched.expected.some((p) => p.startsWith('request failed'))).toBe(true);
      } finally {
        await ctx.current()?.context.close(); // before the proxy goes, or the page's polls would fail
        await proxy.close();
      }
    });

    it('can be driven by the keyboard alone: create, send, approve, interrupt', async () => {
      const { page } = await ctx.open();
      await tabTo(page, page.getByRole('combobox', { name: 'Agent' }));
      await tabTo(page, page.getByRole('form', { name: 'New session' }).getByRole('button', { name: 'Create' }));
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/ui\/sessions\//);
      await page.getByText('Live', { exact: true }).waitFor();
      const message = page.getByRole('textbox', { name: 'Message' });
      await tabTo(page, message);
      await page.keyboard.type('permission');
      await page.keyboard.press('Enter');
      const allow = page.getByRole('region', { name: 'Permission request' }).getByRole('button', { name: 'Always allow' });
      await allow.waitFor();
      await tabTo(page, allow);
      await page.keyboard.press('Enter');
      await transcript(page).getByText('Permission granted; wrote notes.txt.').waitFor();
      await page.getByLabel('Session status').getByText('idle').waitFor();
      await tabTo(page, message);
      await page.keyboard.type('slow 100');
      await page.keyboard.press('Enter');
      await transcript(page).getByText('tick 2').waitFor();
      await tabTo(page, page.getByRole('button', { name: 'Interrupt' }));
      await page.keyboard.press('Space');
      await transcript(page).getByText('Turn ended: interrupted.').waitFor();
      await tabTo(page, page.getByRole('tab', { name: 'Transcript' }));
      await page.keyboard.press('ArrowRight');
      await page.getByRole('table', { name: 'Events' }).waitFor();
    });
  });
}
