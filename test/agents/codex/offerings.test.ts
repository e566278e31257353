// The Codex driver's listModels / listModes against the real pinned binary (0.171.0), with the
// fake-model environment (CODEX_HOME in a sandbox, the fake provider): what `model/list` and
// `collaborationMode/list` answer, that the static fallbacks are that answer, and that the
// short-lived app-server never outlives the call.
import { afterEach, describe, expect, it } from 'vitest';
import { codexLocator, createCodexDriver } from '../../../src/agents/codex/driver.js';
import { CODEX_MODES } from '../../../src/agents/codex/modes.js';
import type { AgentDriver, QueryContext } from '../../../src/agents/types.js';
import { startFakeModel, type FakeModel } from '../../fake-model/server.js';
import { codexSessionEnv } from './codex-session.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import { groupTree } from '../../support/procs.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['codex']);

const LIMITS = { maxLineChars: 1_000_000, killGraceMs: 1_000, startTimeoutMs: 20_000, stderrHeadLines: 20, stderrTailLines: 50 };
const logger = { debug: () => {}, info: () => {}, warn: () => {} };

let fake: FakeModel | undefined;
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await fake?.close();
  sandbox?.cleanup();
  fake = sandbox = undefined;
});

/** A driver with the installed codex, the fake-model env, and the pids of the processes it spawns. */
async function setup(timeoutMs = 15_000): Promise<{ driver: AgentDriver; ctx: QueryContext; pids: (number | undefined)[] }> {
  sandbox = makeSandbox('codex-offerings');
  fake = await startFakeModel({ scenario: [[{ text: 'unused' }]] });
  const pids: (number | undefined)[] = [];
  const driver = createCodexDriver(LIMITS, codexLocator(), (pid) => pids.push(pid));
  return { driver, ctx: { boundary: { env: { ...process.env, ...codexSessionEnv(sandbox, fake) } }, logger, timeoutMs }, pids };
}

const alive = (pid: number | undefined) => (pid === undefined ? [] : groupTree(pid).filter((p) => p.state !== 'Z'));

describe('codex listModels / listModes (real CLI)', () => {
  it('model/list: every model with its reasoning efforts as variants; the static fallback is the same list', async () => {
    const { driver, ctx, pids } = await setup();
    const t0 = Date.now();
    const list = await driver.listModels!(ctx);
    console.log(`[codex catalogue] listModels: ${Date.now() - t0} ms`);
    expect(list).toEqual(driver.models);
    expect(list.defaultModel).toBe('gpt-6.2-sol');
    expect(list.models.find((m) => m.id === 'gpt-5.5')).toEqual({ id: 'gpt-5.5', name: 'GPT-5.5', variants: ['low', 'medium', 'high', 'xhigh'], defaultVariant: 'medium' });
    // Answered from the bundled catalogue: nothing was asked of the model server.
    expect(fake!.requests).toEqual([]);
    expect(pids).toHaveLength(1);
    expect(alive(pids[0])).toEqual([]);
  });

  it('collaborationMode/list: default and plan; the static modes are the same', async () => {
    const { driver, ctx, pids } = await setup();
    const modes = await driver.listModes!(ctx);
    expect(modes.map((m) => [m.id, m.name])).toEqual([
      ['default', 'Default'],
      ['plan', 'Plan'],
    ]);
    expect(modes).toEqual(CODEX_MODES);
    expect(driver.modes).toEqual(CODEX_MODES);
    expect(alive(pids[0])).toEqual([]);
  });

  it('gives up after ctx.timeoutMs and kills the process', async () => {
    const { driver, ctx, pids } = await setup(5);
    await expect(driver.listModels!(ctx)).rejects.toThrow(/did not answer within 5 ms/);
    expect(pids).toHaveLength(1);
    expect(alive(pids[0])).toEqual([]);
  });

  it('without an executable rejects with agent_not_available, spawning nothing', async () => {
    const pids: (number | undefined)[] = [];
    const driver = createCodexDriver(LIMITS, codexLocator({ codexBin: '/nonexistent/codex' }), (pid) => pids.push(pid));
    await expect(driver.listModels!({ boundary: { env: process.env }, logger, timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'agent_not_available' });
    expect(pids).toEqual([]);
  });
});
