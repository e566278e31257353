// "Use Codex" on a fresh machine: `agentwire install-agent codex` and then a session create just
// works; without the install step the create installs the pinned CLI itself (autoInstall), unless
// --no-auto-install says not to. Each test starts from an empty agents dir and a PATH without any
// agent, so only the daemon's own install can be what runs; npm reuses the machine's npm cache.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { PINNED_AGENTS } from '../../src/agents/versions.js';
import type { AgentInfo } from '../../src/schema/api.js';
import { installCommand } from '../../src/install-command.js';
import { sendTurn } from '../support/e2e-turns.js';
import { startFakeModel, type FakeModel } from '../fake-model/server.js';
import { codexSessionEnv } from './codex/codex-session.js';
import { makeSandbox, type Sandbox } from '../support/sandbox.js';
import { expectProblem } from '../support/http-problems.js';
import { expectNoUnparsed, makeApp, post } from '../support/helpers.js';

let app: App | undefined;
let fake: FakeModel | undefined;
let sandbox: Sandbox | undefined;
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
  app = fake = sandbox = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `aw-${name}-`));
  dirs.push(d);
  return d;
};

/** A daemon that can only see `agentsDir` (PATH holds no agent), logging into `lines`. */
async function daemon(agentsDir: string, lines: string[], extra: Record<string, unknown> = {}) {
  sandbox = makeSandbox('autoinstall');
  fake = await startFakeModel({ scenario: [[{ text: 'Installed and answering.' }]] });
  app = await makeApp({
    baseDir: sandbox.work,
    config: { agentsDir, ...extra },
    agentEnv: { env: { PATH: tempDir('empty-path') }, home: tempDir('home') },
    logStream: { write: (line) => void lines.push(line) },
  });
  return codexSessionEnv(sandbox, fake);
}

async function codexInfo(): Promise<AgentInfo> {
  const res = await app!.app.inject({ method: 'GET', url: '/v1/agents' });
  return (res.json() as { agents: AgentInfo[] }).agents.find((a) => a.id === 'codex')!;
}

/** Creates a codex session and runs one turn; returns the assistant's text. */
async function oneTurn(env: Record<string, string>): Promise<string> {
  const res = await post(app!, '/v1/sessions/c1', { agent: 'codex', cwd: sandbox!.work, env, permissionMode: 'bypass' });
  expect(res.statusCode, res.body).toBe(200);
  const { events } = await sendTurn(app!, 'c1', 'Say something.');
  expectNoUnparsed(events);
  expect(events.at(-1), JSON.stringify(events.slice(-3))).toMatchObject({ type: 'turn.ended', data: { metadata: { status: 'completed' } } });
  return events
    .flatMap((e) => (e.type === 'item.completed' && e.data.item.role === 'assistant' ? e.data.item.content : []))
    .flatMap((p) => (p.type === 'text' ? [p.text] : []))
    .join('');
}

describe('installing codex for a session', () => {
  it('`agentwire install-agent codex`, then a codex session just works', async () => {
    const agentsDir = tempDir('agents');
    vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await installCommand(['codex', '--agents-dir', agentsDir])).toBe(0);
    const lines: string[] = [];
    const env = await daemon(agentsDir, lines);
    expect(await codexInfo()).toMatchObject({ installed: true, source: 'install-dir', version: PINNED_AGENTS.codex.version });
    expect(await oneTurn(env)).toBe('Installed and answering.');
    expect(lines.some((l) => l.includes('autoInstall'))).toBe(false);
  }, 180_000);

  it('without it, the create installs the pinned CLI itself (autoInstall) and the turn works', async () => {
    const agentsDir = tempDir('agents');
    const lines: string[] = [];
    const env = await daemon(agentsDir, lines);
    expect(await codexInfo()).toMatchObject({ installed: false });
    expect(await oneTurn(env)).toBe('Installed and answering.');
    expect(lines.filter((l) => l.includes('installing it for this session (autoInstall)'))).toHaveLength(1);
    expect(await codexInfo()).toMatchObject({ installed: true, source: 'install-dir', version: PINNED_AGENTS.codex.version });
  }, 180_000);

  it('--no-auto-install: 501 agent_not_available saying how to install, and nothing installed', async () => {
    const agentsDir = tempDir('agents');
    const env = await daemon(agentsDir, [], { noAutoInstall: true });
    const res = await post(app!, '/v1/sessions/c1', { agent: 'codex', cwd: sandbox!.work, env });
    const problem = expectProblem(res, 501, 'agent_not_available');
    expect(problem.detail).toContain('agentwire install-agent codex');
    expect(readdirSync(agentsDir)).toEqual([]);
  });
});
