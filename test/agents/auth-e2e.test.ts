// Authentication failures, end to end: each real pinned CLI against the fake model answering 401
// (or, for Claude Code, with no key at all), through the daemon's HTTP API. Every agent's own way of
// saying it (Claude's result "Invalid API key" / "Not logged in · Please run /login" with subtype
// `success`, Codex's failed turn with HTTP 401, OpenCode's APIError, Gemini's and Qwen's ACP error
// answer) arrives as one `error` with the code `agent_not_authenticated`, a message naming the
// variable to set, and the agent's own code and words in `details`; the turn still ends.
import { describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';
import type { Scenario } from '../fake-model/server.js';
import { agentE2E, type AgentE2E } from '../support/agent-e2e.js';
import { sendTurn } from '../support/e2e-turns.js';
import { expectNoUnparsed } from '../support/helpers.js';
import { claudeEnv } from './claude/harness.js';
import { codexSessionEnv } from './codex/codex-session.js';
import { e2eEnv as opencodeEnv } from './opencode/harness.js';

const SID = 'auth';
const REFUSED: Scenario = [[{ error: 401, message: 'invalid x-api-key' }]];

const claude = agentE2E({ agent: 'claude', sid: SID, env: ({ fake, sandbox }) => claudeEnv(fake!, sandbox, false) });
const codex = agentE2E({ agent: 'codex', sid: SID, env: ({ fake, sandbox }) => codexSessionEnv(sandbox, fake!) });
const opencode = agentE2E({ agent: 'opencode', sid: SID, env: ({ fake, sandbox }) => opencodeEnv(sandbox, fake!) });
const gemini = agentE2E({
  agent: 'gemini',
  sid: SID,
  env: ({ fake, sandbox }) => ({ ...sandbox.env, GEMINI_API_KEY: 'fake-gemini-key', GOOGLE_GEMINI_BASE_URL: fake!.url }),
  body: { model: 'gemini-2.5-pro' },
});
const qwen = agentE2E({
  agent: 'qwen',
  sid: SID,
  env: ({ fake, sandbox }) => ({ ...sandbox.env, OPENAI_API_KEY: 'sk-fake-qwen', OPENAI_BASE_URL: `${fake!.url}/v1`, OPENAI_MODEL: 'fake-model' }),
});

/** One turn of session SID; its events, after checking the turn ended in an error and nothing was unparsed. */
async function failedTurn(e2e: AgentE2E): Promise<UniversalEvent[]> {
  const { events } = await sendTurn(e2e.app, SID, 'Try.', { timeoutMs: 60_000 });
  expect(events.at(-1), JSON.stringify(events.slice(-3))).toMatchObject({ type: 'turn.ended', data: { metadata: { reason: 'error' } } });
  expectNoUnparsed(await e2e.events());
  return events;
}

/** The turn's `agent_not_authenticated` errors: at least one, each naming `variable`, none of another code. */
function authErrors(events: UniversalEvent[], variable: string, nativeCode: string) {
  const errors = events.flatMap((e) => (e.type === 'error' && e.source === 'agent' ? [e.data] : []));
  const auth = errors.filter((e) => e.code === 'agent_not_authenticated');
  expect(auth.length, JSON.stringify(errors)).toBeGreaterThan(0);
  for (const e of auth) {
    expect(e.message).toContain(variable);
    expect(e.message).toContain('docs/real-agents.md');
    expect(e.details).toMatchObject({ native_code: nativeCode, native_message: expect.any(String) });
  }
  return { errors, auth };
}

describe('an agent whose credentials are refused: agent_not_authenticated', () => {
  it('claude: a key the provider refuses ("Invalid API key", subtype success)', async () => {
    await claude.start({ scenario: REFUSED, permissionMode: 'bypass' });
    const { errors, auth } = authErrors(await failedTurn(claude), 'ANTHROPIC_API_KEY', 'claude_success');
    expect(auth[0]!.details).toMatchObject({ native_message: expect.stringMatching(/Invalid API key/) });
    expect(errors.map((e) => e.code)).not.toContain('claude_success');
  }, 120_000);

  it('claude: no key at all ("Not logged in · Please run /login"), the model never asked', async () => {
    await claude.start({ scenario: [[{ text: 'never reached' }]], permissionMode: 'bypass', env: { ANTHROPIC_API_KEY: '' } });
    const { auth } = authErrors(await failedTurn(claude), 'ANTHROPIC_API_KEY', 'claude_success');
    expect(auth[0]!.details).toMatchObject({ native_message: expect.stringMatching(/login/i) });
    expect(claude.fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
  }, 120_000);

  it('codex: the failed turn and its final error carry the code; the retry notice does not', async () => {
    await codex.start({ scenario: REFUSED, permissionMode: 'bypass' });
    const { errors, auth } = authErrors(await failedTurn(codex), 'OPENAI_API_KEY', expect.stringMatching(/^codex_(error|turn_failed)$/) as unknown as string);
    expect(auth.map((e) => (e.details as { native_code: string }).native_code)).toContain('codex_turn_failed');
    // "Reconnecting... 1/1" (willRetry: true) is not the verdict yet: it keeps codex_error.
    for (const e of errors.filter((x) => x.code === 'codex_error')) expect(e.details).toMatchObject({ willRetry: true });
  }, 120_000);

  it('opencode: the provider\'s 401 (APIError)', async () => {
    await opencode.start({ scenario: REFUSED, permissionMode: 'bypass' });
    const { auth } = authErrors(await failedTurn(opencode), 'OPENAI_API_KEY', 'opencode_APIError');
    expect(auth[0]!.details).toMatchObject({ statusCode: 401 });
  }, 120_000);

  it('gemini: the ACP error answer with code 401 (UNAUTHENTICATED)', async () => {
    await gemini.start({ scenario: REFUSED, permissionMode: 'bypass' });
    const { auth } = authErrors(await failedTurn(gemini), 'GEMINI_API_KEY', 'acp_error');
    expect(auth[0]!.details).toMatchObject({ code: 401 });
  }, 120_000);

  it('qwen: the provider\'s 401 in the ACP error answer', async () => {
    await qwen.start({ scenario: REFUSED, permissionMode: 'bypass' });
    authErrors(await failedTurn(qwen), 'OPENAI_API_KEY', 'acp_error');
  }, 120_000);
});
