// The one table of agent CLI versions agentwire is built and tested against. `npm run
// agents:install` (scripts/agents-install.js) installs exactly these, and the daemon's install
// command uses the same table through src/agents/install.ts. Versions are exact on purpose: a
// range once resolved to a much older Claude Code.
//
// Each package is a small wrapper whose platform-specific optionalDependency carries the native
// executable. The wrappers' own `bin` is a shell stub until their postinstall script copies the
// native binary over it (claude, opencode, amp) or a Node launcher that stays resident on Node 20
// (codex). The installer runs npm with --ignore-scripts and points straight at the native
// executable, so an install behaves the same whether or not npm runs dependency scripts, and no
// postinstall fallback (opencode's runs a nested `npm install`) can reach out.
import type { BuiltinAgentId } from '../schema/agents.js';

export type InstallableAgentId = Exclude<BuiltinAgentId, 'mock'>;

export interface Platform {
  os: NodeJS.Platform;
  arch: string;
  /** Linux with musl libc (Alpine) rather than glibc. */
  musl: boolean;
}

export interface PinnedAgent {
  /** npm package name. */
  package: string;
  /** Exact version (never a range). */
  version: string;
  /** The package's npm bin name (node_modules/.bin/<bin>); usable only after its postinstall. */
  bin: string;
  /** Executables relative to the install dir, best first; the installer keeps the first one that
   *  exists and answers `--version` (so a CPU without AVX2 falls through to a baseline build). */
  executables(platform: Platform): string[];
}

export function currentPlatform(): Platform {
  const report = process.platform === 'linux' ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }) : undefined;
  return { os: process.platform, arch: process.arch, musl: report !== undefined && !report.header?.glibcVersionRuntime };
}

const exe = (p: Platform, name: string) => (p.os === 'win32' ? `${name}.exe` : name);
/** The `.bin` entry, last: it works only when the wrapper needs no postinstall. */
const binLink = (bin: string) => `node_modules/.bin/${bin}`;

const CODEX_TRIPLES: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

export const PINNED_AGENTS: Record<InstallableAgentId, PinnedAgent> = {
  claude: {
    package: '@anthropic-ai/claude-code',
    version: '2.1.337',
    bin: 'claude',
    executables: (p) => [
      `node_modules/@anthropic-ai/claude-code-${p.os}-${p.arch}${p.musl ? '-musl' : ''}/${exe(p, 'claude')}`,
      binLink('claude'),
    ],
  },
  codex: {
    package: '@openai/codex',
    version: '0.171.0',
    bin: 'codex',
    executables: (p) => [
      `node_modules/@openai/codex-${p.os}-${p.arch}/vendor/${CODEX_TRIPLES[`${p.os}-${p.arch}`] ?? 'unsupported'}/bin/${exe(p, 'codex')}`,
      binLink('codex'),
    ],
  },
  opencode: {
    package: 'opencode-ai',
    version: '1.18.33',
    bin: 'opencode',
    executables: (p) => {
      const base = `opencode-${p.os === 'win32' ? 'windows' : p.os}-${p.arch}`;
      const variants = p.musl ? ['-musl', '-baseline-musl', '', '-baseline'] : ['', '-baseline', '-musl', '-baseline-musl'];
      return [...variants.map((v) => `node_modules/${base}${v}/bin/${exe(p, 'opencode')}`), binLink('opencode')];
    },
  },
  amp: {
    package: '@ampcode/cli',
    version: '0.0.1790142911-g7618fb',
    bin: 'amp',
    executables: (p) => [`node_modules/@ampcode/cli-${p.os}-${p.arch}/${exe(p, 'amp')}`, binLink('amp')],
  },
  // Gemini CLI and Qwen Code are bundled JavaScript with no native executable and no postinstall:
  // the executable is the package's own bin script (a `#!/usr/bin/env node` file), run by the
  // `node` on PATH.
  gemini: {
    package: '@google/gemini-cli',
    version: '0.61.0',
    bin: 'gemini',
    executables: () => ['node_modules/@google/gemini-cli/bundle/gemini.js', binLink('gemini')],
  },
  qwen: {
    package: '@qwen-code/qwen-code',
    version: '0.24.4',
    bin: 'qwen',
    executables: () => ['node_modules/@qwen-code/qwen-code/cli-entry.js', binLink('qwen')],
  },
};

export const INSTALLABLE_AGENTS = Object.keys(PINNED_AGENTS) as InstallableAgentId[];
