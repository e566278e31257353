// A pooled session of each agent end to end (--warm): the daemon's agent environment points the
// real pinned CLIs at the fake model (spares never get a session env, so it has to be the daemon's),
// a spare boots with the daemon's defaults, a create that asks for nothing else adopts it, and a
// real turn runs through the HTTP API. Shutdown leaves nothing of the session's or the refill's
// agents behind.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultAgentsDir } from '../../src/agents/install.js';
import { createRegistry } from '../../src/agents/registry.js';
import type { App } from '../../src/app.js';
import { Config } from '../../src/config.js';
import type { AgentId } from '../../src/schema/agents.js';
import { assistantMessages, expectWellFormedTurn, lastSequence, textOf, type Turn } from '../support/e2e-turns.js';
import type { FakeModel } from '../fake-model/server.js';
import { e2eResources } from '../support/agent-e2e.js';
import { claudeEnv } from './claude/harness.js';
import { codexConfig, FAKE_KEY_ENV } from './codex/harness.js';
import { opencodeConfig, seedConfigDir } from './opencode/harness.js';
import type { Sandbox } from '../support/sandbox.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../support/helpers.js';
import { allGone } from '../support/procs.js';
import { needAgents } from '../support/test-agents.js';

needAgents(['claude', 'codex', 'opencode']);

const REPLY = 'Hello from the fake model, to a pooled session.';
const r = e2eResources();

/** What the daemon's environment needs for `agent` to reach the fake model and nothing else. */
function daemonEnv(agent: AgentId, fake: FakeModel, sandbox: Sandbox): Record<string, string> {
  switch (agent) {
    case 'claude':
      return claudeEnv(fake, sandbox, false);
    case 'codex': {
      // The harness's key variable is an AGENTWIRE_ one, which never reaches an agent from the daemon.
      const codexHome = join(sandbox.home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, 'config.toml'), codexConfig(fake).replace(FAKE_KEY_ENV, 'FAKE_MODEL_API_KEY'));
      return { ...sandbox.env, CODEX_HOME: codexHome, FAKE_MODEL_API_KEY: 'sk-agentwire-fake' };
    }
    case 'opencode': {
      seedConfigDir(sandbox);
      const configPath = join(sandbox.root, 'opencode.json');
      writeFileSync(configPath, JSON.stringify(opencodeConfig(fake)));
      return { ...sandbox.env, OPENCODE_CONFIG: configPath, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', npm_config_offline: 'true' };
    }
    default:
      return sandbox.env;
  }
}

/** The pids of an agent's ready spares (the pool's own bookkeeping). */
function sparePids(agent: AgentId): number[] {
  const pool = (r.app.sessions as unknown as { pool: { ready: Map<string, { handle: { pid: number } }[]> } }).pool;
  return (pool.ready.get(agent) ?? []).map((s) => s.handle.pid);
}

/** sendTurn with room for a loaded machine: a first OpenCode turn has taken 13 s here. */
async function slowTurn(app: App, id: string, message: string): Promise<Turn> {
  const from = await lastSequence(app, id);
  const res = await post(app, `/v1/sessions/${id}/messages`, { message });
  expect(res.statusCode, res.body).toBe(204);
  const events = await waitFor(
    async () => {
      const after = await getEvents(app, id, from);
      return after.some((e) => e.type === 'turn.ended' || e.type === 'session.ended') ? after : undefined;
    },
    90_000,
    'the turn to end',
  );
  return { from, events };
}

function sessionPid(id: string): number {
  return (r.app.sessions as unknown as { get(id: string): { agent: { current: { pid: number } } } }).get(id).agent.current.pid;
}

describe.each(['mock', 'claude', 'codex', 'opencode'] as const)('a pooled %s session (real agent, fake model)', (agent) => {
  it('adopts a warm spare at create and runs a real turn with it', async () => {
    const sandbox = r.makeSandbox(`warm-${agent}`);
    const fake = await r.startFakeModel({ scenario: [[{ text: REPLY }]] });
    const config = Config.parse({ warm: [`${agent}=1`] });
    // The daemon's own environment: what every agent and spare starts from (agent-env.ts).
    const boundary = { env: { ...process.env, ...daemonEnv(agent, fake, sandbox) } };
    const registry = createRegistry({ ...config, agentsDir: defaultAgentsDir(), boundary });
    const app = await r.makeApp({ config, registry, baseDir: sandbox.work });
    await app.app.ready();
    const [spare] = await waitFor(() => (sparePids(agent).length === 1 ? sparePids(agent) : undefined), 60_000, `a ${agent} spare`);

    const res = await post(app, `/v1/sessions/pooled-${agent}`, { agent });
    expect(res.statusCode, res.body).toBe(200);
    expect(sessionPid(`pooled-${agent}`)).toBe(spare);
    const turn = await slowTurn(app, `pooled-${agent}`, 'Say hello.');
    await expectWellFormedTurn(app, `pooled-${agent}`, turn, 'Say hello.', agent === 'codex' ? { userFrom: 'agent' } : {});
    const events = await getEvents(app, `pooled-${agent}`);
    // What the spare printed before it was adopted (its session start) reached the session, once,
    // before the turn.
    const starts = events.flatMap((e, i) => (e.type === 'session.started' ? [i] : []));
    expect(starts).toHaveLength(1);
    expect(starts[0]!).toBeLessThan(events.findIndex((e) => e.type === 'turn.started'));
    if (agent !== 'mock') {
      expect(textOf(assistantMessages(turn.events).at(-1))).toBe(REPLY);
      expect(fake.requests.every((r) => r.status === 200)).toBe(true);
    }
    expectNoUnparsed(events);

    // The refill boots once the turn had its first event; shutdown reaps it and the session's agent.
    const [refill] = await waitFor(() => (sparePids(agent).length === 1 ? sparePids(agent) : undefined), 60_000, `the ${agent} refill`);
    await app.app.close();
    r.dropApp();
    for (const pid of [spare!, refill!]) await allGone(pid, 10_000);
  }, 180_000);
});
