// Codex sessions for the end-to-end tests: a throwaway sandbox (HOME, TMPDIR, XDG_* and the work
// dir), the fake model, and CODEX_HOME inside the sandbox holding a config.toml for the fake
// provider (codexConfig), so nothing reads or writes the machine's own config.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';
import type { FakeModel } from '../../fake-model/server.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { codexConfig, FAKE_KEY_ENV } from './harness.js';
import type { Sandbox } from '../../support/sandbox.js';

/** The CODEX_HOME (with config.toml) and env for a Codex talking to `fake` from `sandbox`. */
export function codexSessionEnv(sandbox: Sandbox, fake: FakeModel): Record<string, string> {
  const codexHome = join(sandbox.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, 'config.toml'), codexConfig(fake));
  return { ...sandbox.env, CODEX_HOME: codexHome, [FAKE_KEY_ENV]: 'sk-agentwire-fake' };
}

/** The end-to-end runner (test/support/agent-e2e.ts) for Codex sessions with id `sid`: a sandbox
 *  named codex-e2e, the fake model, and the env of codexSessionEnv. */
export const codexE2E = (sid: string) => agentE2E({ agent: 'codex', sid, env: ({ sandbox, fake }) => codexSessionEnv(sandbox, fake!) });

export const completed = (events: UniversalEvent[]): UniversalItem[] => events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
export const textOf = (item: UniversalItem | undefined) => (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
export const lastAssistantText = (events: UniversalEvent[]) => textOf(completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant').at(-1));
/** The model requests that carried the conversation (Codex's own tool-less side requests excluded). */
export const modelRequests = (s: { fake: FakeModel }) => s.fake.requests.filter((r) => r.method === 'POST' && Array.isArray((r.body as { tools?: unknown })?.tools));
