// The hermetic agent harness: the pinned CLI table, the CLIs `.ci/run` installs before the suite
// (a missing one fails here, loudly, and never skips), and the installer itself, exercised with a
// tiny real npm package (json5: no dependencies, a `--version` flag) in a temp dir.
import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needAgents } from '../support/test-agents.js';
import {
  defaultAgentsDir,
  InstallError,
  installPackage,
  resolveInstalled,
  resolveInstalledPackage,
  type InstallProgress,
  type PackageSpec,
} from '../../src/agents/install.js';
import { currentPlatform, INSTALLABLE_AGENTS, PINNED_AGENTS } from '../../src/agents/versions.js';
import { EXACT_VERSION } from '../../src/schema/agents.js';

describe('pinned agent table', () => {
  it('pins an exact version (no range) for claude, codex, opencode, amp, gemini and qwen', () => {
    expect([...INSTALLABLE_AGENTS].sort()).toEqual(['amp', 'claude', 'codex', 'gemini', 'opencode', 'qwen']);
    for (const agent of INSTALLABLE_AGENTS) {
      const pinned = PINNED_AGENTS[agent];
      expect(pinned.version, `${agent} version`).toMatch(EXACT_VERSION);
      expect(pinned.version, `${agent} version`).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
      expect(pinned.package, `${agent} package`).toMatch(/^(@[a-z0-9-]+\/)?[a-z0-9-]+$/);
      expect(pinned.executables(currentPlatform()).length, `${agent} executables`).toBeGreaterThan(0);
    }
  });

  it('names the native executable of each platform package, with the npm bin last', () => {
    const linux = { os: 'linux' as const, arch: 'x64', musl: false };
    expect(PINNED_AGENTS.claude.executables(linux)[0]).toBe('node_modules/@anthropic-ai/claude-code-linux-x64/claude');
    expect(PINNED_AGENTS.claude.executables({ ...linux, musl: true })[0]).toBe('node_modules/@anthropic-ai/claude-code-linux-x64-musl/claude');
    expect(PINNED_AGENTS.codex.executables(linux)[0]).toBe('node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
    expect(PINNED_AGENTS.opencode.executables(linux).slice(0, 2)).toEqual(['node_modules/opencode-linux-x64/bin/opencode', 'node_modules/opencode-linux-x64-baseline/bin/opencode']);
    expect(PINNED_AGENTS.amp.executables({ os: 'darwin', arch: 'arm64', musl: false })[0]).toBe('node_modules/@ampcode/cli-darwin-arm64/amp');
    // Bundled JavaScript: the package's own bin script, the same on every platform.
    expect(PINNED_AGENTS.gemini.executables(linux)[0]).toBe('node_modules/@google/gemini-cli/bundle/gemini.js');
    expect(PINNED_AGENTS.qwen.executables(linux)[0]).toBe('node_modules/@qwen-code/qwen-code/cli-entry.js');
    for (const agent of INSTALLABLE_AGENTS) expect(PINNED_AGENTS[agent].executables(linux).at(-1)).toBe(`node_modules/.bin/${PINNED_AGENTS[agent].bin}`);
  });
});

describe('installed agent CLIs (installed for this suite on first use, test/support/test-agents.ts)', () => {
  needAgents();
  const dir = defaultAgentsDir();
  const home = mkdtempSync(join(tmpdir(), 'agentwire-cli-home-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  for (const agent of INSTALLABLE_AGENTS) {
    const { package: pkg, version } = PINNED_AGENTS[agent];
    it(`${agent}: ${pkg}@${version} is installed and --version prints ${version}`, async () => {
      const installed = await resolveInstalled({ agent, dir });
      if (!installed) {
        expect.fail(`${agent} CLI ${pkg}@${version} is not installed in ${dir} (AGENTWIRE_AGENTS_DIR chooses the directory).`);
      }
      expect(installed.version).toBe(version);
      // A throwaway HOME: some CLIs write config and logs there even for --version.
      const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache'), XDG_DATA_HOME: join(home, '.local/share') };
      const run = await execa(installed.path, ['--version'], { env, reject: false, stdin: 'ignore', timeout: 15_000, all: true });
      expect(run.exitCode, `${installed.path} --version:\n${run.all}`).toBe(0);
      expect(run.all).toContain(version);
    });
  }
});

describe('installer (with a tiny real npm package)', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'agentwire-install-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const json5: PackageSpec = { name: 'json5', package: 'json5', version: '2.2.3', executables: ['node_modules/json5/lib/cli.js'] };
  const progressLog = () => {
    const seen: InstallProgress[] = [];
    return { seen, onProgress: (p: InstallProgress) => void seen.push(p), npmRuns: () => seen.filter((p) => p.stage === 'npm').length };
  };
  /** Everything in <dir>/<name>/: only complete installs may be there once an install settled. */
  const entries = (dir: string, name: string) => (existsSync(join(dir, name)) ? readdirSync(join(dir, name)).sort() : []);

  it('coalesces concurrent installs into one npm run, then reuses the install without npm', async () => {
    const dir = join(root, 'fresh');
    const log = progressLog();
    const first = installPackage(json5, { dir, onProgress: log.onProgress });
    const second = installPackage(json5, { dir, onProgress: log.onProgress });
    expect(second).toBe(first);
    const result = await first;
    expect(log.npmRuns()).toBe(1);
    expect(result).toMatchObject({ name: 'json5', version: '2.2.3', reused: false, dir: join(dir, 'json5', '2.2.3') });
    expect(result.path).toBe(join(dir, 'json5', '2.2.3', 'node_modules/json5/lib/cli.js'));
    expect(result.versionOutput).toBe('2.2.3');
    expect(entries(dir, 'json5')).toEqual(['2.2.3']);
    expect(await resolveInstalledPackage(json5, dir)).toMatchObject({ path: result.path, version: '2.2.3' });

    const again = progressLog();
    const reused = await installPackage(json5, { dir, onProgress: again.onProgress });
    expect(reused).toMatchObject({ reused: true, path: result.path });
    expect(again.npmRuns()).toBe(0);
    expect(again.seen.map((p) => p.stage)).toEqual(['reused']);

    const reinstalled = await installPackage(json5, { dir, reinstall: true });
    expect(reinstalled).toMatchObject({ reused: false, path: result.path });
    expect(entries(dir, 'json5')).toEqual(['2.2.3']);
  });

  it('leaves nothing in place and throws with npm stderr when the version does not exist', async () => {
    const dir = join(root, 'missing');
    const spec = { ...json5, version: '999.999.999' };
    const error = await installPackage(spec, { dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InstallError);
    expect((error as InstallError).message).toMatch(/npm install json5@999\.999\.999 exited with \d+/);
    expect((error as InstallError).stderrTail).toMatch(/ETARGET|No matching version/);
    expect(entries(dir, 'json5')).toEqual([]);
    expect(await resolveInstalledPackage(spec, dir)).toBeUndefined();
  });

  it('refuses ranges, tags and path-like versions without running npm', async () => {
    const dir = join(root, 'ranges');
    for (const version of ['^2.2.3', '2.x', 'latest', '>=2', '../../2.2.3', '2.2.3 || 3']) {
      const log = progressLog();
      await expect(installPackage({ ...json5, version }, { dir, onProgress: log.onProgress })).rejects.toThrow(/exact version/);
      expect(log.npmRuns()).toBe(0);
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('does not commit an install whose executable does not answer --version', async () => {
    const dir = join(root, 'unverified');
    const spec = { ...json5, executables: ['node_modules/json5/no-such-cli.js', 'node_modules/json5/package.json'] };
    await expect(installPackage(spec, { dir })).rejects.toThrow(/no executable answered --version with 2\.2\.3/);
    expect(entries(dir, 'json5')).toEqual([]);
  });

  it('never uses a half-finished install: replaces it, and clears staging dirs of dead processes', async () => {
    const dir = join(root, 'half');
    const target = join(dir, 'json5', '2.2.3');
    mkdirSync(join(target, 'node_modules', 'json5'), { recursive: true });
    writeFileSync(join(target, 'node_modules', 'json5', 'package.json'), '{}');
    mkdirSync(join(dir, 'json5', '.2.2.3.tmp-999999999-dead'), { recursive: true });
    expect(await resolveInstalledPackage(json5, dir)).toBeUndefined();

    const result = await installPackage(json5, { dir });
    expect(result.reused).toBe(false);
    expect(entries(dir, 'json5')).toEqual(['2.2.3']);
    expect(await resolveInstalledPackage(json5, dir)).toMatchObject({ path: result.path });
  });
});
