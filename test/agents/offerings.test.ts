// GET /v1/agents/{agent}/models and /modes, and the check of a create request against them:
// asked of the agent itself where the driver can (Claude: the real pinned CLI), cached, with the
// built-in lists whenever asking fails; agentMode / permissionMode / variant refused with a 400
// that lists the valid values; defaults filled in from the agent's own first mode.
import { afterEach, describe, expect, it } from 'vitest';
import type { App, AppDeps } from '../../src/app.js';
import { claudeArgs } from '../../src/agents/claude/driver.js';
import { createMockDriver } from '../../src/agents/mock/driver.js';
import type { ModeInfo, ModelList } from '../../src/schema/api.js';
import type { AgentDriver } from '../../src/agents/types.js';
import { Config } from '../../src/config.js';
import type { ModelsResponse, ModesResponse } from '../../src/schema/api.js';
import { expectProblem, sessionStarted } from '../support/http-problems.js';
import { createMock, getEvents, makeApp, post } from '../support/helpers.js';

let app: App | undefined;
afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

const get = async <T>(url: string) => {
  const res = await app!.app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() as T, res };
};

/** A mock driver whose agent "answers" with the given lists (counting the asks). */
function askingMock(over: Partial<AgentDriver> & { answer?: ModelList; extraModes?: ModeInfo[]; hang?: boolean }) {
  const asks = { models: 0, modes: 0 };
  const base = createMockDriver(Config.parse({}));
  const never = new Promise<never>(() => {});
  const driver: AgentDriver = {
    ...base,
    listModels: async () => (asks.models++, over.hang ? never : (over.answer ?? { models: [{ id: 'asked-1' }] })),
    listModes: async () => (asks.modes++, over.hang ? never : (over.extraModes ?? [])),
    ...over,
  };
  return { driver, asks };
}

async function appWith(driver: AgentDriver, deps: AppDeps = {}) {
  app = await makeApp({ ...deps, registry: { mock: driver } });
  return app;
}

describe('GET /v1/agents/{agent}/models and /modes', () => {
  it('the mock: its built-in lists, every permission mode, defaults first', async () => {
    app = await makeApp();
    const models = await get<ModelsResponse>('/v1/agents/mock/models');
    expect(models.status).toBe(200);
    expect(models.body).toEqual({ models: [{ id: 'mock-1', name: 'Mock 1' }], defaultModel: 'mock-1', source: 'builtin' });
    const modes = await get<ModesResponse>('/v1/agents/mock/modes');
    expect(modes.body).toEqual({
      modes: [expect.objectContaining({ id: 'default' }), expect.objectContaining({ id: 'build' }), expect.objectContaining({ id: 'plan' })],
      defaultMode: 'default',
      permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
      source: 'builtin',
    });
  });

  it('claude: asked of the real pinned CLI (models with effort variants, its agents as modes)', async () => {
    app = await makeApp();
    const models = await get<ModelsResponse>('/v1/agents/claude/models');
    expect(models.status).toBe(200);
    expect(models.body.source).toBe('agent');
    expect(models.body.defaultModel).toBe('default');
    const ids = models.body.models.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['default', 'sonnet', 'opus', 'haiku']));
    expect(models.body.models.find((m) => m.id === 'sonnet')?.variants).toEqual(expect.arrayContaining(['low', 'high']));
    const modes = await get<ModesResponse>('/v1/agents/claude/modes');
    expect(modes.body.source).toBe('agent');
    expect(modes.body.defaultMode).toBe('default');
    expect(modes.body.modes[0]?.id).toBe('default');
    expect(modes.body.modes.map((m) => m.id)).toEqual(expect.arrayContaining(['Explore']));
  }, 30_000);

  it('claude without an executable: the built-in list, not an error', async () => {
    app = await makeApp({ config: { claudeBin: '/nonexistent/claude' } });
    const models = await get<ModelsResponse>('/v1/agents/claude/models');
    expect(models.status).toBe(200);
    expect(models.body.source).toBe('builtin');
    expect(models.body.models.map((m) => m.id)).toEqual(['default', 'opus', 'sonnet', 'haiku']);
  });

  it('asks once and caches; concurrent requests share the ask', async () => {
    const { driver, asks } = askingMock({ answer: { models: [{ id: 'asked-1', variants: ['fast'] }], defaultModel: 'asked-1' } });
    await appWith(driver);
    const [a, b] = await Promise.all([get<ModelsResponse>('/v1/agents/mock/models'), get<ModelsResponse>('/v1/agents/mock/models')]);
    const c = await get<ModelsResponse>('/v1/agents/mock/models');
    for (const r of [a, b, c]) expect(r.body).toEqual({ models: [{ id: 'asked-1', variants: ['fast'] }], defaultModel: 'asked-1', source: 'agent' });
    expect(asks.models).toBe(1);
  });

  it('an agent that does not answer in time gets the built-in list after the query timeout', async () => {
    const { driver } = askingMock({ hang: true });
    await appWith(driver, { config: { agentQueryTimeoutMs: 200 } });
    const started = Date.now();
    const models = await get<ModelsResponse>('/v1/agents/mock/models');
    expect(models.body).toEqual({ models: [{ id: 'mock-1', name: 'Mock 1' }], defaultModel: 'mock-1', source: 'builtin' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('unknown agents are 400, agents without an adapter 501', async () => {
    await appWith(createMockDriver(Config.parse({})));
    expectProblem((await get('/v1/agents/gpt/models')).res, 400, 'invalid_request');
    expectProblem((await get('/v1/agents/claude/modes')).res, 501, 'agent_not_available');
  });
});

describe('session create checks modes against the agent', () => {
  it('an unknown agentMode is 400 listing the valid ones; a listed one is passed to the agent', async () => {
    app = await makeApp();
    const bad = expectProblem(await post(app, '/v1/sessions/s1', { agent: 'mock', agentMode: 'nope' }), 400, 'invalid_request');
    expect(bad.detail).toBe("agentMode 'nope' is not one mock accepts; valid: default, build, plan.");
    expect(bad).toMatchObject({ field: 'agentMode', valid: ['default', 'build', 'plan'], agent: 'mock' });
    await createMock(app, 's1', { agentMode: 'plan' });
    expect(sessionStarted(await getEvents(app, 's1')).metadata).toMatchObject({ mode: 'plan' });
  });

  it("a mode only the agent knows (asked at create) is accepted; defaults are the agent's first", async () => {
    const { driver, asks } = askingMock({
      modes: [{ id: 'medium', name: 'Medium', description: '' }],
      permissionModes: ['bypass', 'default'],
      extraModes: [{ id: 'reviewer', name: 'Reviewer', description: 'a custom agent' }],
    });
    await appWith(driver);
    expect((await post(app!, '/v1/sessions/d', { agent: 'mock' })).statusCode).toBe(200);
    expect(asks.modes).toBe(0); // the default needs no ask
    const info = (await app!.app.inject({ method: 'GET', url: '/v1/sessions/d' })).json();
    expect(info).toMatchObject({ agentMode: 'medium', permissionMode: 'bypass' });
    expect((await post(app!, '/v1/sessions/r', { agent: 'mock', agentMode: 'reviewer' })).statusCode).toBe(200);
    expect(asks.modes).toBe(1);
    const bad = expectProblem(await post(app!, '/v1/sessions/p', { agent: 'mock', permissionMode: 'plan' }), 400, 'invalid_request');
    expect(bad.detail).toBe("permissionMode 'plan' is not one mock accepts; valid: bypass, default.");
  });

  it('a variant for an agent without variants is 400', async () => {
    app = await makeApp();
    const bad = expectProblem(await post(app, '/v1/sessions/s1', { agent: 'mock', variant: 'high' }), 400, 'invalid_request');
    expect(bad.detail).toBe("Agent 'mock' has no variants; leave 'variant' out.");
    expect(app.sessions.list()).toEqual([]);
  });

  it("a variant must be one of the model's (the default model's when none is named); unknown models are the agent's business", async () => {
    const base = createMockDriver(Config.parse({}));
    const { driver } = askingMock({
      capabilities: { ...base.capabilities, variants: true },
      answer: { models: [{ id: 'asked-1', variants: ['fast', 'slow'] }, { id: 'plain' }], defaultModel: 'asked-1' },
    });
    await appWith(driver);
    const bad = expectProblem(await post(app!, '/v1/sessions/a', { agent: 'mock', variant: 'medium' }), 400, 'invalid_request');
    expect(bad.detail).toBe("variant 'medium' is not one mock accepts; valid: fast, slow (model asked-1).");
    expect(bad).toMatchObject({ field: 'variant', valid: ['fast', 'slow'], model: 'asked-1' });
    expect((await post(app!, '/v1/sessions/b', { agent: 'mock', variant: 'slow' })).statusCode).toBe(200);
    expect((await post(app!, '/v1/sessions/c', { agent: 'mock', model: 'plain', variant: 'any' })).statusCode).toBe(200);
    expect((await post(app!, '/v1/sessions/d', { agent: 'mock', model: 'some-full-model-id', variant: 'any' })).statusCode).toBe(200);
  });

  it('claude: an effort the real CLI does not list is 400 before anything runs', async () => {
    app = await makeApp();
    const bad = expectProblem(await post(app, '/v1/sessions/c', { agent: 'claude', variant: 'superhigh' }), 400, 'invalid_request');
    expect(bad.detail).toBe("variant 'superhigh' is not one claude accepts; valid: low, medium, high, xhigh, max (model default).");
  }, 30_000);

  it('claude: variant becomes --effort, a non-default agentMode --agent', () => {
    const args = claudeArgs({ variant: 'low', agentMode: 'Explore', permissionMode: 'default' });
    expect(args.slice(-4)).toEqual(['--effort', 'low', '--agent', 'Explore']);
    expect(claudeArgs({ agentMode: 'default', permissionMode: 'default' })).not.toContain('--agent');
  });
});
