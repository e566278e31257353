// GET /v1/agents and POST /v1/agents/{agent}/install: discovery precedence (flag, agents dir, PATH),
// versions from `--version`, credentials from env and files (env and HOME injected, never
// process.env), and real installs of a small CLI (amp) into a temp agents dir.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultAgentsDir } from '../../src/agents/install.js';
import { PINNED_AGENTS, INSTALLABLE_AGENTS } from '../../src/agents/versions.js';
import type { AppDeps } from '../../src/app.js';
import { AgentList, type AgentInfo } from '../../src/schema/api.js';
import { VERSION } from '../../src/version.js';
import { makeApp, post } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';
import { needAgents } from '../support/test-agents.js';

needAgents();

const scratch = mkdtempSync(join(tmpdir(), 'agentwire-agents-api-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
const tempDir = (name: string) => {
  const dir = join(scratch, `${name}-${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** A shell script answering `--version` with `output`. */
function fakeCli(dir: string, name: string, output: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo '${output}'; exit 0; fi\nexit 1\n`);
  chmodSync(path, 0o755);
  return path;
}

async function listAgents(deps: AppDeps = {}): Promise<Record<string, AgentInfo>> {
  const app = await makeApp(deps);
  try {
    return await listOf(app);
  } finally {
    await app.app.close();
  }
}

async function listOf(app: Awaited<ReturnType<typeof makeApp>>): Promise<Record<string, AgentInfo>> {
  const res = await app.app.inject({ method: 'GET', url: '/v1/agents' });
  expect(res.statusCode, res.body).toBe(200);
  const { agents } = AgentList.parse(res.json());
  return Object.fromEntries(agents.map((a) => [a.id, a]));
}

/** Nothing installed, nothing on PATH, no credentials: the base every precedence test builds on. */
function bare(extra: { env?: NodeJS.ProcessEnv; config?: AppDeps['config'] } = {}): AppDeps {
  return {
    config: { agentsDir: tempDir('empty-agents'), ...extra.config },
    agentEnv: { env: { PATH: tempDir('empty-path'), ...extra.env }, home: tempDir('home') },
  };
}

describe('GET /v1/agents', () => {
  it('lists all seven agents; the pinned CLIs from the default agents dir, the mock bundled', async () => {
    const app = await makeApp();
    const res = await app.app.inject({ method: 'GET', url: '/v1/agents' });
    await app.app.close();
    expect(res.statusCode, res.body).toBe(200);
    const { agents } = AgentList.parse(res.json());
    expect(agents.map((a) => a.id)).toEqual(['claude', 'codex', 'opencode', 'amp', 'gemini', 'qwen', 'mock']);
    for (const agent of INSTALLABLE_AGENTS) {
      const info = agents.find((a) => a.id === agent)!;
      expect(info, agent).toMatchObject({
        installed: true,
        version: PINNED_AGENTS[agent].version,
        pinnedVersion: PINNED_AGENTS[agent].version,
        source: 'install-dir',
        // Every agent has an adapter in this build.
        adapterAvailable: true,
        credentialsAvailable: expect.any(Boolean),
      });
      expect(info.path!.startsWith(join(defaultAgentsDir(), agent, PINNED_AGENTS[agent].version)), info.path).toBe(true);
    }
    const mock = agents.find((a) => a.id === 'mock')!;
    expect(mock).toMatchObject({ installed: true, version: VERSION, credentialsAvailable: true, adapterAvailable: true, pinnedVersion: null, source: null });
    expect(mock.path).toMatch(/mock[/\\]program\.js$/);
    expect(mock.capabilities).toMatchObject({ textMessages: true });
  });

  it('an explicit --codex-bin wins over the agents dir; its version comes from --version', async () => {
    const script = fakeCli(tempDir('bin'), 'my-codex', 'codex-cli 9.8.7');
    const agents = await listAgents({ config: { codexBin: script } });
    expect(agents.codex).toMatchObject({ installed: true, source: 'flag', path: script, version: '9.8.7' });
    expect(agents.claude).toMatchObject({ installed: true, source: 'install-dir' });
  });

  it('with --agent-user, --version runs as that user in a throwaway HOME it owns', async () => {
    expect(process.getuid?.(), 'this test runs the version check as nobody: run it as root (CI does)').toBe(0);
    chmodSync(scratch, 0o755);
    const path = join(tempDir('bin'), 'user-codex');
    writeFileSync(path, `#!/bin/sh\n[ "$(id -u)" = 65534 ] && [ -O "$HOME" ] && echo 'codex-cli 6.5.4' && exit 0\necho 'codex-cli 0.0.0'\n`);
    chmodSync(path, 0o755);
    const agents = await listAgents({ config: { codexBin: path, agentUser: 'nobody' } });
    expect(agents.codex).toMatchObject({ installed: true, source: 'flag', version: '6.5.4' });
  });

  it('an explicit path that does not exist is reported, not fallen through', async () => {
    const missing = join(scratch, 'no-such-codex');
    const agents = await listAgents({ config: { codexBin: missing } });
    expect(agents.codex).toMatchObject({ installed: false, source: 'flag', path: missing });
    expect(agents.codex!.version).toBeUndefined();
  });

  it('falls back to PATH when the agents dir has nothing', async () => {
    const bin = tempDir('path-bin');
    const script = fakeCli(bin, 'opencode', '1.2.3');
    const agents = await listAgents(bare({ env: { PATH: `${tempDir('other')}:${bin}` } }));
    expect(agents.opencode).toMatchObject({ installed: true, source: 'path', path: script, version: '1.2.3', pinnedVersion: PINNED_AGENTS.opencode.version });
  });

  it('reports not installed when nothing is anywhere', async () => {
    const agents = await listAgents(bare());
    for (const agent of INSTALLABLE_AGENTS) {
      expect(agents[agent], agent).toMatchObject({ installed: false, source: null, credentialsAvailable: false });
      expect(agents[agent]!.path).toBeUndefined();
      expect(agents[agent]!.version).toBeUndefined();
    }
    expect(agents.mock).toMatchObject({ installed: true });
  });

  it('asks --version again when the executable changes (cache by path and mtime)', async () => {
    const bin = tempDir('path-bin');
    const deps = bare({ env: { PATH: bin } });
    const script = fakeCli(bin, 'amp', '0.0.1-a');
    const app = await makeApp(deps);
    try {
      expect((await listOf(app)).amp).toMatchObject({ version: '0.0.1-a', source: 'path' });
      fakeCli(bin, 'amp', '0.0.2-b');
      utimesSync(script, new Date(), new Date(Date.now() + 5_000));
      app.agents.invalidate();
      expect((await listOf(app)).amp).toMatchObject({ version: '0.0.2-b' });
    } finally {
      await app.app.close();
    }
  });

  it('credentials from the environment: true, and the value is never in the answer', async () => {
    const secret = 'sk-ant-very-secret-value';
    const agents = await listAgents(bare({ env: { ANTHROPIC_API_KEY: secret, AMP_API_KEY: '' } }));
    expect(agents.claude!.credentialsAvailable).toBe(true);
    expect(agents.opencode!.credentialsAvailable).toBe(true); // opencode takes any provider's key
    expect(agents.codex!.credentialsAvailable).toBe(false);
    expect(agents.amp!.credentialsAvailable).toBe(false); // empty counts as unset
    expect(JSON.stringify(agents)).not.toContain(secret);
    expect((await listAgents(bare({ env: { CODEX_API_KEY: 'x' } }))).codex!.credentialsAvailable).toBe(true);
    const keyed = await listAgents(bare({ env: { GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o' } }));
    expect([keyed.gemini!.credentialsAvailable, keyed.qwen!.credentialsAvailable]).toEqual([true, true]);
    expect((await listAgents(bare({ env: {} }))).gemini!.credentialsAvailable).toBe(false);
  });

  it("credentials from the CLIs' own files in HOME (and CODEX_HOME)", async () => {
    const home = tempDir('cred-home');
    const put = (rel: string) => {
      mkdirSync(join(home, rel, '..'), { recursive: true });
      writeFileSync(join(home, rel), '{}');
    };
    put('.claude/.credentials.json');
    put('.local/share/opencode/auth.json');
    put('.local/share/amp/secrets.json');
    const deps = bare();
    const agents = await listAgents({ ...deps, agentEnv: { ...deps.agentEnv, home } });
    expect(agents.claude!.credentialsAvailable).toBe(true);
    expect(agents.opencode!.credentialsAvailable).toBe(true);
    expect(agents.amp!.credentialsAvailable).toBe(true);
    expect(agents.codex!.credentialsAvailable).toBe(false);

    const codexHome = tempDir('codex-home');
    writeFileSync(join(codexHome, 'auth.json'), '{}');
    expect((await listAgents(bare({ env: { CODEX_HOME: codexHome } }))).codex!.credentialsAvailable).toBe(true);
    put('.codex/auth.json');
    expect((await listAgents({ ...deps, agentEnv: { ...deps.agentEnv, home } })).codex!.credentialsAvailable).toBe(true);

    // Gemini CLI's Google login and Qwen Code's .env.
    expect([agents.gemini!.credentialsAvailable, agents.qwen!.credentialsAvailable]).toEqual([false, false]);
    put('.gemini/oauth_creds.json');
    put('.qwen/.env');
    const later = await listAgents({ ...deps, agentEnv: { ...deps.agentEnv, home } });
    expect([later.gemini!.credentialsAvailable, later.qwen!.credentialsAvailable]).toEqual([true, true]);
  });
});

describe('POST /v1/agents/{agent}/install', () => {
  it('installs amp into the agents dir; concurrent requests share one npm run; the listing follows', async () => {
    const dir = tempDir('install-agents');
    const lines: string[] = [];
    const app = await makeApp({ ...bare({ config: { agentsDir: dir } }), logStream: { write: (line) => void lines.push(line) } });
    try {
      expect((await listOf(app)).amp).toMatchObject({ installed: false });
      const [a, b] = await Promise.all([post(app, '/v1/agents/amp/install', {}), post(app, '/v1/agents/amp/install')]);
      expect(a.statusCode, a.body).toBe(204);
      expect(b.statusCode, b.body).toBe(204);
      const logs = lines.map((l) => JSON.parse(l) as { msg: string; stage?: string; reqId?: string });
      expect(logs.filter((l) => l.stage === 'npm')).toHaveLength(1);
      expect(logs.filter((l) => l.msg === 'agent install requested').map((l) => l.reqId)).toHaveLength(2);
      // The install cleared the listing cache at once.
      const amp = (await listOf(app)).amp!;
      expect(amp).toMatchObject({ installed: true, source: 'install-dir', version: PINNED_AGENTS.amp.version });
      expect(amp.path!.startsWith(join(dir, 'amp', PINNED_AGENTS.amp.version))).toBe(true);
      // A complete install is reused.
      const again = await post(app, '/v1/agents/amp/install', { version: PINNED_AGENTS.amp.version });
      expect(again.statusCode, again.body).toBe(204);
      expect(lines.map((l) => JSON.parse(l) as { stage?: string }).filter((l) => l.stage === 'reused')).toHaveLength(1);
    } finally {
      await app.app.close();
    }
  }, 180_000);

  it('a version npm cannot find is 502 agent_install_failed with npm stderr tail', async () => {
    const app = await makeApp(bare());
    try {
      const res = await post(app, '/v1/agents/amp/install', { version: '0.0.1-nope' });
      const problem = expectProblem(res, 502, 'agent_install_failed');
      expect(problem).toMatchObject({ agent: 'amp', version: '0.0.1-nope' });
      expect(problem.stderrTail).toEqual(expect.stringMatching(/\S/));
      expect(problem.detail).toContain('@ampcode/cli@0.0.1-nope');
    } finally {
      await app.app.close();
    }
  }, 120_000);

  it('refuses bad versions, unknown fields, the mock and unknown agents', async () => {
    const app = await makeApp(bare());
    try {
      for (const version of ['latest', '^1.2.3', '1.2', '1.2.3 && rm -rf /', '']) {
        const problem = expectProblem(await post(app, '/v1/agents/amp/install', { version }), 400, 'invalid_request');
        expect(problem.detail).toContain('body.version');
      }
      expectProblem(await post(app, '/v1/agents/amp/install', { reinstal: true }), 400, 'invalid_request');
      expectProblem(await post(app, '/v1/agents/amp/install', { reinstall: 'yes' }), 400, 'invalid_request');
      const mock = expectProblem(await post(app, '/v1/agents/mock/install', {}), 400, 'invalid_request');
      expect(mock.detail).toContain('nothing to install');
      const unknown = expectProblem(await post(app, '/v1/agents/cursor/install', {}), 400, 'invalid_request');
      expect(unknown.detail).toContain('path.agent');
      expectProblem(await app.app.inject({ method: 'GET', url: '/v1/agents/amp/install' }), 405, 'method_not_allowed');
    } finally {
      await app.app.close();
    }
  });
});
