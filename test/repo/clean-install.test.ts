// `npm ci` of this repository prints no engine warning on the Node running the suite (CI runs it on
// Node 20 and 24; issue 28): the lock file's tree is checked against this Node the way `npm ci`
// checks it, in a copy of the files it reads, without installing anything (--dry-run).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

describe('npm ci on this Node', () => {
  it('warns of no engine mismatch (EBADENGINE) and runs no unapproved install script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwire-clean-install-'));
    try {
      mkdirSync(join(dir, 'client'));
      mkdirSync(join(dir, 'scripts'));
      // The lock's inputs, and agentwire's postinstall, which npm runs even for a dry run.
      for (const file of ['package.json', 'package-lock.json', 'client/package.json', 'scripts/check-sqlite.js']) copyFileSync(join(ROOT, file), join(dir, file));
      const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
      const output = stdout + stderr;
      expect(output).not.toContain('EBADENGINE');
      // npm 11.19 and later name every dependency whose install script the project has not
      // approved (package.json's allowScripts); this repository has decided on each of them.
      expect(output).not.toMatch(/install scripts? not yet covered by allowScripts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
