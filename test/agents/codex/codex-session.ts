// One daemon with one Codex session, for the end-to-end tests: a throwaway sandbox (HOME, TMPDIR,
// XDG_* and the work dir), the fake model, and CODEX_HOME inside the sandbox holding a config.toml
// for the fake provider (codexConfig), so nothing reads or writes the machine's own config.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { App } from '../../../src/app.js';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';
import { startFakeModel, type FakeModel, type Scenario } from '../../fake-model/server.js';
import { makeApp, post } from '../../support/helpers.js';
import { codexConfig, FAKE_KEY_ENV } from './harness.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';

export interface CodexSession {
  app: App;
  fake: FakeModel;
  sandbox: Sandbox;
  /** The env the session was created with (CODEX_HOME and the fake key included). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The CODEX_HOME (with config.toml) and env for a Codex talking to `fake` from `sandbox`. */
export function codexSessionEnv(sandbox: Sandbox, fake: FakeModel): Record<string, string> {
  const codexHome = join(sandbox.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, 'config.toml'), codexConfig(fake));
  return { ...sandbox.env, CODEX_HOME: codexHome, [FAKE_KEY_ENV]: 'sk-agentwire-fake' };
}

/** Starts the daemon and creates session `sid` (agent codex) with `body` added to the request. */
export async function startCodexSession(sid: string, scenario: Scenario, body: Record<string, unknown> = {}): Promise<CodexSession> {
  const sandbox = makeSandbox('codex-e2e');
  const fake = await startFakeModel({ scenario });
  const app = await makeApp({ baseDir: sandbox.work });
  const env = codexSessionEnv(sandbox, fake);
  const close = async () => {
    await app.app.close();
    await fake.close();
    sandbox.cleanup();
  };
  const res = await post(app, `/v1/sessions/${sid}`, { agent: 'codex', cwd: sandbox.work, env, permissionMode: 'bypass', ...body });
  if (res.statusCode !== 200) await close();
  expect(res.statusCode, res.body).toBe(200);
  return { app, fake, sandbox, env, close };
}

export const completed = (events: UniversalEvent[]): UniversalItem[] => events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
export const textOf = (item: UniversalItem | undefined) => (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
export const lastAssistantText = (events: UniversalEvent[]) => textOf(completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant').at(-1));
/** The model requests that carried the conversation (Codex's own tool-less side requests excluded). */
export const modelRequests = (s: CodexSession) => s.fake.requests.filter((r) => r.method === 'POST' && Array.isArray((r.body as { tools?: unknown })?.tools));
