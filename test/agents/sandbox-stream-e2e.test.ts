// POST /stream against the real pinned Claude Code, Codex and OpenCode through the fake model,
// read by the chat backend's consumer (test/support/envelope-consumer.ts) over a real socket: each
// agent's turn renders as its steps and one result, with nothing but the four line types. One app,
// one fake model and one sandbox for the file; each dispatch picks its scenario with a marker in
// its prompt, and ends its session (and agent) with the stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startFakeModel, type FakeModel } from '../fake-model/server.js';
import { dispatch, type Rendered } from '../support/envelope-consumer.js';
import { makeApp } from '../support/helpers.js';
import { makeSandbox, type Sandbox } from '../support/sandbox.js';
import { portOf } from '../support/sse-client.js';
import { expectEndedCleanly } from '../support/stream-e2e.js';
import { claudeEnv } from './claude/harness.js';
import { codexSessionEnv } from './codex/codex-session.js';
import { e2eEnv as opencodeEnv } from './opencode/harness.js';
import { needAgents } from '../support/test-agents.js';

needAgents(['claude', 'opencode']);

let sandbox: Sandbox;
let fake: FakeModel;
let app: App;
let base: string;

beforeAll(async () => {
  sandbox = makeSandbox('stream-e2e');
  fake = await startFakeModel({
    scenarios: {
      tools: [[{ text: 'Let me run it.' }, { tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]],
      history: [[{ text: 'Your name is Ada.' }]],
      broken: [[{ error: 400, message: 'the fake model refuses this request' }]],
      write: [[{ tool: 'write', path: 'notes.txt', content: 'notes\n' }], [{ text: 'Finished.' }]],
    },
  });
  app = await makeApp({ baseDir: sandbox.work });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${portOf(app.app)}`;
});
afterAll(async () => {
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
});

const AGENTS = {
  claude: () => ({ env: claudeEnv(fake, sandbox, false), permissionMode: 'bypass' }),
  codex: () => ({ env: codexSessionEnv(sandbox, fake), permissionMode: 'bypass' }),
  opencode: () => ({ env: opencodeEnv(sandbox, fake) }),
} as const;

function body(agent: keyof typeof AGENTS, messages: Array<{ role: string; content: string }>) {
  return { agent, cwd: sandbox.work, permissions: 'allow', messages, ...AGENTS[agent]() };
}

/** The session the stream ran is ended, its events parsed whole, and no process of it works in the sandbox. */
const endedCleanly = (r: Rendered) => expectEndedCleanly(app, sandbox.work, r);

describe.each(Object.keys(AGENTS) as Array<keyof typeof AGENTS>)('POST /stream with %s (real CLI, fake model)', (agent) => {
  it('renders a turn with a shell step and one result', { timeout: 120_000 }, async () => {
    const r = await dispatch(base, body(agent, [{ role: 'user', content: '[scenario:tools] Run echo.' }]));
    expect(r.status, JSON.stringify(r.error)).toBe(200);
    expect(r.error, JSON.stringify(r.lines)).toBeUndefined();
    expect(r.steps).toHaveLength(1);
    expect(r.steps[0]).toMatchObject({ status: 'succeeded', result: expect.stringContaining('hello-from-shell') });
    expect(JSON.stringify(r.steps[0]!.args)).toContain('echo hello-from-shell');
    expect(r.result).toBe('It printed hello-from-shell.');
    expect(r.lines.at(-1)!.type).toBe('result');
    await endedCleanly(r);
  });

  it('gives a fresh session the earlier turns as a preamble the model sees', { timeout: 120_000 }, async () => {
    const r = await dispatch(base, body(agent, [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
      { role: 'user', content: '[scenario:history] What is my name?' },
    ]));
    expect(r.result, JSON.stringify(r.lines)).toBe('Your name is Ada.');
    const asked = fake.requests.filter((q) => JSON.stringify(q.body ?? '').includes('[scenario:history]'));
    expect(asked.length).toBeGreaterThan(0);
    expect(JSON.stringify(asked.at(-1)!.body)).toContain('Nice to meet you, Ada.');
    await endedCleanly(r);
  });
});

describe('permissions by policy through a real agent (Claude Code, default permission mode)', () => {
  it.each(['allow', 'deny'] as const)('%s: the decision is a log line and the step succeeds or fails by it', { timeout: 120_000 }, async (permissions) => {
    const r = await dispatch(base, { ...body('claude', [{ role: 'user', content: '[scenario:write] Write notes.txt.' }]), permissionMode: 'default', permissions });
    expect(r.result, JSON.stringify(r.lines)).toBe('Finished.');
    expect(r.logs.some((l) => /^permission \S+ (approved|denied) \(by policy\)$/.test(l.message) && l.message.includes(permissions === 'allow' ? 'approved' : 'denied')), JSON.stringify(r.logs)).toBe(true);
    expect(r.steps.map((s) => s.status)).toEqual([permissions === 'allow' ? 'succeeded' : 'failed']);
    await endedCleanly(r);
  });
});

describe('a model error through a real agent', () => {
  it('is one error line with code model_error in place of the result (Claude Code)', { timeout: 120_000 }, async () => {
    const r = await dispatch(base, body('claude', [{ role: 'user', content: '[scenario:broken] Hello.' }]));
    expect(r.result).toBeUndefined();
    expect(r.error, JSON.stringify(r.lines)).toMatchObject({ code: 'model_error' });
    await endedCleanly(r);
  });
});
