// The bench's agents against the fake model (test/fake-model/): one sandbox (HOME, XDG dirs, work
// dir) and one environment under which Claude Code, Codex and OpenCode all talk to the fake model
// on loopback and to nothing else, given to the daemon itself, so that its sessions (and its warm
// spares, which never get a session env) need no env of their own. bench/start.js bundles this file
// with esbuild at run time: the bench is plain JS, the harness TypeScript.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultAgentsDir } from '../src/agents/install.js';
import { startFakeModel, type FakeModel } from '../test/fake-model/server.js';
import { claudeEnv } from '../test/agents/claude/harness.js';
import { codexConfig, FAKE_KEY_ENV } from '../test/agents/codex/harness.js';
import { opencodeConfig, seedConfigDir } from '../test/agents/opencode/harness.js';
import { makeSandbox } from '../test/support/sandbox.js';

/** The harness's key variable starts with AGENTWIRE_, which never reaches an agent from the daemon. */
const KEY_ENV = 'FAKE_MODEL_API_KEY';

export interface FakeAgents {
  fake: FakeModel;
  /** The daemon's environment additions. */
  env: Record<string, string>;
  /** The daemon's working directory: its default session cwd. */
  work: string;
  /** Where the pinned CLIs are installed (the real one, read before HOME moves into the sandbox). */
  agentsDir: string;
  close(): Promise<void>;
}

export async function fakeAgents(): Promise<FakeAgents> {
  const agentsDir = defaultAgentsDir();
  const sandbox = makeSandbox('bench-start');
  const fake = await startFakeModel({ scenario: [[{ text: 'Hello from the fake model, in a few pieces.' }]] });
  const codexHome = join(sandbox.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, 'config.toml'), codexConfig(fake).replace(FAKE_KEY_ENV, KEY_ENV));
  seedConfigDir(sandbox);
  const opencodeJson = join(sandbox.root, 'opencode.json');
  writeFileSync(opencodeJson, JSON.stringify(opencodeConfig(fake)));
  const env = {
    ...claudeEnv(fake, sandbox, false),
    CODEX_HOME: codexHome,
    [KEY_ENV]: 'sk-agentwire-fake',
    OPENCODE_CONFIG: opencodeJson,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    npm_config_offline: 'true',
  };
  return {
    fake,
    env,
    work: sandbox.work,
    agentsDir,
    close: async () => {
      await fake.close();
      sandbox.cleanup();
    },
  };
}
