// Steps the inspector's browser tests share, written the way a person uses the page: by the
// accessible names issue 18 fixes (form "New session", combobox "Agent", textbox "Message" …).
import type { Locator, Page } from 'playwright-core';

/** Creates a mock session with the New session form; its id, once the page shows it live. */
export async function createSession(page: Page): Promise<string> {
  const form = page.getByRole('form', { name: 'New session' });
  await form.getByRole('combobox', { name: 'Agent' }).selectOption('mock');
  await form.getByRole('button', { name: 'Create' }).click();
  await page.waitForURL(/\/ui\/sessions\/[^/]+$/);
  await page.getByRole('status', { name: 'Connection' }).getByText('Live').waitFor();
  return decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
}

/** Types a message and sends it (Send is enabled only while the session is idle). */
export async function send(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('textbox', { name: 'Message' }).and(page.locator(':placeholder-shown')).waitFor();
}

export function transcript(page: Page): Locator {
  return page.getByRole('log', { name: 'Transcript' });
}
