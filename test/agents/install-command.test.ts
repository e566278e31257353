// `agentwire install-agent`: the command a user (or the Docker image) runs to get an agent CLI.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveInstalled } from '../../src/agents/install.js';
import { PINNED_AGENTS } from '../../src/agents/versions.js';
import { installCommand } from '../../src/install-command.js';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function capture() {
  const out: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  return out;
}

describe('agentwire install-agent', () => {
  it('installs a pinned CLI into the given directory, then reuses it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aw-install-'));
    dirs.push(dir);
    const out = capture();
    expect(await installCommand(['amp', '--agents-dir', dir])).toBe(0);
    const installed = await resolveInstalled({ agent: 'amp', dir });
    expect(installed?.version).toBe(PINNED_AGENTS.amp.version);
    expect(out.join('\n')).toMatch(/amp installed in \d+\.\ds: .*\/amp$/m);
    out.length = 0;
    expect(await installCommand(['amp', '--agents-dir', dir])).toBe(0);
    expect(out.join('\n')).toMatch(/amp already installed/);
  }, 120_000);

  it('fails with exit 1 and npm’s reason for a version that does not exist, leaving nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aw-install-'));
    dirs.push(dir);
    const out = capture();
    expect(await installCommand(['amp', '--version', '0.0.1-does-not-exist', '--agents-dir', dir])).toBe(1);
    expect(out.join('\n')).toMatch(/installing amp failed: .*(ETARGET|No matching version|notarget)/is);
    expect(await resolveInstalled({ agent: 'amp', version: '0.0.1-does-not-exist', dir })).toBeUndefined();
  }, 120_000);

  it('refuses unknown agents and bad arguments with exit 2 and the usage', async () => {
    const out = capture();
    expect(await installCommand([])).toBe(2);
    expect(await installCommand(['claude-desktop'])).toBe(2);
    expect(await installCommand(['codex', '--frobnicate'])).toBe(2);
    expect(await installCommand(['codex', 'amp', '--version', '1.0.0'])).toBe(2);
    expect(out.join('\n')).toMatch(/unknown agent claude-desktop/);
    expect(out.join('\n')).toMatch(/Usage: agentwire install-agent/);
  });
});
