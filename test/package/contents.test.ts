// What the daemon's tarball holds is what docs/install.md says: the bundle, the inspector, the files
// run as separate processes (the mock agent, Amp's delegate) and openapi.json; not the tsc output
// the bundle was made from, nor its source maps (issue 42: it once packed 474 files, 224 of them
// maps). And `npm pack`'s tarballs are ignored by git, so they never sit untracked in a clone.
// test/package/install.test.ts installs and runs this same tarball.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeInstall, setUpInstall, sharedInstallDir } from '../support/daemon-process.js';
import { packDaemon, type Packed } from '../support/pack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let packed: Packed;

beforeAll(async () => {
  await setUpInstall();
  packed = await packDaemon(sharedInstallDir());
}, 600_000);
afterAll(() => {
  packed?.remove();
  removeInstall();
});

describe("the daemon's tarball", () => {
  it('holds the bundle, the inspector, the mock agent, the delegate, openapi.json and the SQLite install check, nothing else', () => {
    const outside = packed.files.filter(
      (f) =>
        !['package.json', 'README.md', 'LICENSE', 'openapi.json', 'bin/agentwire.js', 'dist/agentwire.mjs', 'dist/agents/amp/delegate.js', 'scripts/check-sqlite.js'].includes(f) &&
        !/^dist\/web\/(ui|docs)\//.test(f) &&
        !/^dist\/agents\/mock\/program(-[a-z]+)?\.js$/.test(f),
    );
    expect(outside).toEqual([]);
    expect(packed.files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(packed.files).toEqual(expect.arrayContaining(['dist/agentwire.mjs', 'dist/web/ui/index.html', 'dist/web/docs/index.html', 'dist/agents/mock/program.js', 'dist/agents/amp/delegate.js', 'openapi.json']));
    // Every module the mock program imports is there (it runs from the package, unbundled).
    expect(packed.files.filter((f) => f.startsWith('dist/agents/mock/')).sort()).toEqual(
      ['commands', 'shell', 'store', 'texts', 'turn'].map((n) => `dist/agents/mock/program-${n}.js`).concat('dist/agents/mock/program.js').sort(),
    );
    expect(packed.files.length).toBeLessThan(40);
  });

  it("npm pack's tarballs are ignored by git in a clone", () => {
    for (const name of ['agentwire-0.1.0.tgz', 'client/agentwire-client-0.1.0.tgz']) {
      expect(execFileSync('git', ['check-ignore', '--no-index', name], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe(name);
    }
  });
});
