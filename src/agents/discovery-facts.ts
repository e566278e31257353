// What the daemon needs to know to find an agent CLI outside its own install directory and to tell
// whether it can authenticate: the one table of per-agent discovery facts. Discovery
// (src/agents/discovery.ts) reads it and never branches on agent ids. Pinned versions and install
// layout live in versions.ts.
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { InstallableAgentId } from './versions.js';

/** A version as CLIs print it: 1.2.3, 1.2.3-pre.4, 0.0.1790142911-g7618fb. */
const SEMVER = /\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?/;

export interface DiscoveryFacts {
  /** The executable name looked up on PATH. */
  bin: string;
  /** The config option (--<agent>-bin) naming an explicit executable. */
  binOption: Extract<keyof Config, `${string}Bin`>;
  /** Finds the version in `<bin> --version` output. */
  versionPattern: RegExp;
  /** Any of these set (non-empty) in the daemon's environment counts as credentials. */
  credentialEnv: string[];
  /** Credential files the CLI itself writes on login; any one existing counts. */
  credentialFiles(home: string, env: NodeJS.ProcessEnv): string[];
}

const xdg = (env: NodeJS.ProcessEnv, name: 'XDG_DATA_HOME' | 'XDG_CONFIG_HOME', home: string, fallback: string) =>
  env[name] ? [env[name]] : [join(home, fallback)];

export const DISCOVERY_FACTS: Record<InstallableAgentId, DiscoveryFacts> = {
  claude: {
    bin: 'claude',
    binOption: 'claudeBin',
    versionPattern: SEMVER,
    credentialEnv: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'],
    credentialFiles: (home, env) => [join(env.CLAUDE_CONFIG_DIR || join(home, '.claude'), '.credentials.json')],
  },
  codex: {
    bin: 'codex',
    binOption: 'codexBin',
    versionPattern: SEMVER,
    credentialEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    credentialFiles: (home, env) => [...(env.CODEX_HOME ? [join(env.CODEX_HOME, 'auth.json')] : []), join(home, '.codex', 'auth.json')],
  },
  opencode: {
    bin: 'opencode',
    binOption: 'opencodeBin',
    versionPattern: SEMVER,
    credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'],
    credentialFiles: (home, env) => xdg(env, 'XDG_DATA_HOME', home, '.local/share').map((d) => join(d!, 'opencode', 'auth.json')),
  },
  amp: {
    bin: 'amp',
    binOption: 'ampBin',
    versionPattern: SEMVER,
    credentialEnv: ['AMP_API_KEY'],
    credentialFiles: (home, env) => [
      ...xdg(env, 'XDG_DATA_HOME', home, '.local/share').map((d) => join(d!, 'amp', 'secrets.json')),
      ...xdg(env, 'XDG_CONFIG_HOME', home, '.config').map((d) => join(d!, 'amp', 'secrets.json')),
    ],
  },
  gemini: {
    bin: 'gemini',
    binOption: 'geminiBin',
    versionPattern: SEMVER,
    // An API key, Vertex AI, or the Google login Gemini CLI keeps in oauth_creds.json; it also
    // loads variables from its own .env (its home is GEMINI_CLI_HOME when set, else HOME).
    credentialEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA'],
    credentialFiles: (home, env) => ['oauth_creds.json', '.env'].map((f) => join(env.GEMINI_CLI_HOME || home, '.gemini', f)),
  },
  qwen: {
    bin: 'qwen',
    binOption: 'qwenBin',
    versionPattern: SEMVER,
    // An OpenAI-compatible key (Qwen Code's usual set-up), or the keys of its other providers, in
    // the environment or in the .env Qwen Code loads from its home (QWEN_HOME, else ~/.qwen).
    credentialEnv: ['OPENAI_API_KEY', 'DASHSCOPE_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY'],
    credentialFiles: (home, env) => [join(env.QWEN_HOME || join(home, '.qwen'), '.env')],
  },
};
