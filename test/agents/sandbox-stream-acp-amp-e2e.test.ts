// POST /stream against the agents test/agents/sandbox-stream-e2e.test.ts does not run: the real
// pinned Gemini CLI and Qwen Code (`--acp`) through the fake model, a configured ACP agent
// (test/support/acp-test-agent.mjs given with --acp-agent) and Amp through its stand-in CLI
// (test/support/amp-standin; the real one cannot run a turn without Amp's servers), each read by
// the chat backend's consumer (test/support/envelope-consumer.ts) over a real socket: a turn
// renders as its steps and one result, with nothing but the four line types. One app (configured
// with the ACP agent and the stand-in), one fake model and one sandbox for the file; each dispatch
// picks its fake-model scenario with a marker in its prompt (the ACP agent and the stand-in take
// their script from the prompt), and ends its session (and agent) with the stream.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { startFakeModel, type FakeModel } from '../fake-model/server.js';
import { dispatch, type Rendered } from '../support/envelope-consumer.js';
import { makeApp } from '../support/helpers.js';
import { makeSandbox, type Sandbox } from '../support/sandbox.js';
import { portOf } from '../support/sse-client.js';
import { expectEndedCleanly } from '../support/stream-e2e.js';
import { SETTLE_SHELL } from './acp/harness.js';

const ACP_AGENT = new URL('../support/acp-test-agent.mjs', import.meta.url).pathname;
const AMP_STANDIN = new URL('../support/amp-standin/amp', import.meta.url).pathname;

let sandbox: Sandbox;
let fake: FakeModel;
let app: App;
let base: string;

beforeAll(async () => {
  sandbox = makeSandbox('stream-acp-amp-e2e');
  // Gemini CLI sends usage statistics unless a settings file says otherwise (docs/gemini.md).
  mkdirSync(join(sandbox.home, '.gemini'), { recursive: true });
  writeFileSync(join(sandbox.home, '.gemini', 'settings.json'), JSON.stringify({ privacy: { usageStatisticsEnabled: false } }));
  fake = await startFakeModel({
    scenarios: {
      tools: [[{ text: 'Let me run it.' }, { tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]],
      // Qwen Code may report a fast command's output as empty unless it waits a moment after it (SETTLE_SHELL).
      'tools-settled': [[{ text: 'Let me run it.' }, { tool: 'shell', command: `echo hello-from-shell${SETTLE_SHELL}` }], [{ text: 'It printed hello-from-shell.' }]],
      broken: [[{ error: 400, message: 'the fake model refuses this request' }]],
    },
  });
  app = await makeApp({
    baseDir: sandbox.work,
    config: {
      ampBin: AMP_STANDIN,
      acpAgents: [{ name: 'tester', command: process.execPath, args: [ACP_AGENT], env: { ACP_TEST_STORE: join(sandbox.root, 'acp-store') } }],
    },
  });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${portOf(app.app)}`;
});
afterAll(async () => {
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
});

const endedCleanly = (r: Rendered) => expectEndedCleanly(app, sandbox.work, r);
const ask = (content: string) => [{ role: 'user', content }];
const stepsOf = (r: Rendered) => r.steps.map((s) => `${s.name} ${s.status}`);

/** The real CLIs, each with its credentials and the fake model's URL (as their e2e files give them). */
const CLIS = {
  gemini: {
    // A fixed model: the default, `auto`, first asks a classifier model call to pick one.
    body: () => ({ model: 'gemini-2.5-pro', env: { ...sandbox.env, GEMINI_API_KEY: 'fake-gemini-key', GOOGLE_GEMINI_BASE_URL: fake.url } }),
    tools: 'tools',
  },
  qwen: {
    body: () => ({ env: { ...sandbox.env, OPENAI_API_KEY: 'sk-fake-qwen', OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_MODEL: 'fake-model' } }),
    tools: 'tools-settled',
  },
} as const;

describe.each(Object.keys(CLIS) as Array<keyof typeof CLIS>)('POST /stream with %s (real CLI over ACP, fake model)', (agent) => {
  const body = (content: string) => ({ agent, cwd: sandbox.work, permissions: 'allow', messages: ask(content), ...CLIS[agent].body() });

  it('renders a turn with a shell step and one result', { timeout: 120_000 }, async () => {
    const r = await dispatch(base, body(`[scenario:${CLIS[agent].tools}] Run echo.`));
    expect(r.status, JSON.stringify(r.error)).toBe(200);
    expect(r.error, JSON.stringify(r.lines)).toBeUndefined();
    expect(r.steps).toHaveLength(1);
    expect(r.steps[0]).toMatchObject({ status: 'succeeded', result: expect.stringContaining('hello-from-shell') });
    expect(JSON.stringify(r.steps[0]!.args), JSON.stringify(r.lines)).toContain('echo hello-from-shell');
    expect(r.result).toBe('It printed hello-from-shell.');
    expect(r.lines.at(-1)!.type).toBe('result');
    await endedCleanly(r);
  });

  it('turns a model error into one error line with code model_error', { timeout: 120_000 }, async () => {
    const r = await dispatch(base, body('[scenario:broken] Hello.'));
    expect(r.result).toBeUndefined();
    expect(r.error, JSON.stringify(r.lines)).toMatchObject({ code: 'model_error', message: expect.stringContaining('the fake model refuses this request') });
    await endedCleanly(r);
  });
});

describe('POST /stream with a configured ACP agent (--acp-agent, the test agent)', () => {
  const body = (content: string, permissions = 'allow') => ({ agent: 'tester', cwd: sandbox.work, permissions, messages: ask(content) });

  it('renders a turn with a terminal step and one result', { timeout: 60_000 }, async () => {
    const r = await dispatch(base, body('terminal'));
    expect(r.error, JSON.stringify(r.lines)).toBeUndefined();
    expect(r.steps).toEqual([expect.objectContaining({ name: 'execute', args: { command: 'ls' }, status: 'succeeded', result: 'a.txt\nb.txt\n' })]);
    expect(r.result).toBe('Listed.');
    await endedCleanly(r);
  });

  it.each([
    ['allow', 'execute succeeded', 'Ran it (yes).'],
    ['deny', 'execute failed', 'Did not run it.'],
  ] as const)('permissions %s: the decision is a log line, the step runs or fails by it', { timeout: 60_000 }, async (permissions, step, said) => {
    const r = await dispatch(base, body('permission please', permissions));
    expect(stepsOf(r), JSON.stringify(r.lines)).toEqual([step]);
    expect(r.steps[0]!.args).toEqual({ command: 'echo hi' });
    expect(r.logs.map((l) => l.message)).toContain(`permission command_execution ${permissions === 'allow' ? 'approved' : 'denied'} (by policy)`);
    expect(r.result).toBe(said);
    await endedCleanly(r);
  });

  it('an agent that exits mid-turn is one agent_crashed error line after its stderr', { timeout: 60_000 }, async () => {
    const r = await dispatch(base, body('exit'));
    expect(r.error, JSON.stringify(r.lines)).toMatchObject({ code: 'agent_crashed' });
    expect(r.logs.some((l) => l.level === 'error' && l.message.includes('fatal: the test agent exits mid-turn')), JSON.stringify(r.logs)).toBe(true);
    await endedCleanly(r);
  });
});

describe('POST /stream with Amp (the stand-in CLI)', () => {
  const env = () => ({ ...sandbox.env, AMP_API_KEY: 'sgamp_standin', AMP_STANDIN_HOME: join(sandbox.root, 'amp-threads'), AMP_STANDIN_STDIN_TIMEOUT_MS: '3000' });
  const body = (content: string, permissions = 'allow') => ({ agent: 'amp', cwd: sandbox.work, permissions, env: env(), messages: ask(content) });

  it.each([
    ['allow', 'Bash succeeded'],
    ['deny', 'Bash failed'],
  ] as const)('permissions %s: a turn with a Bash step, the decision a log line, and one result', { timeout: 60_000 }, async (permissions, step) => {
    const r = await dispatch(base, body('/bash echo hello-from-shell\n/text It printed hello-from-shell.', permissions));
    expect(r.error, JSON.stringify(r.lines)).toBeUndefined();
    expect(stepsOf(r)).toEqual([step]);
    expect(r.steps[0]!.args).toEqual({ cmd: 'echo hello-from-shell' });
    if (permissions === 'allow') expect(r.steps[0]!.result).toBe('hello-from-shell\n');
    expect(r.logs.map((l) => l.message)).toContain(`permission Bash ${permissions === 'allow' ? 'approved' : 'denied'} (by policy)`);
    expect(r.result).toBe('It printed hello-from-shell.');
    await endedCleanly(r);
  });

  it("an error result is one model_error line with Amp's message", { timeout: 60_000 }, async () => {
    const r = await dispatch(base, body('/error the stand-in gives up'));
    expect(r.result).toBeUndefined();
    expect(r.error, JSON.stringify(r.lines)).toMatchObject({ code: 'model_error', message: expect.stringContaining('the stand-in gives up') });
    await endedCleanly(r);
  });
});
