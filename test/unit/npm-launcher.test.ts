// src/npm-launcher.ts: which launch is watched, and the ancestry it reads from /proc. The watch
// itself ending a daemon when `npx` is stopped is proven on the packed install
// (test/package/install.test.ts).
import { describe, expect, it } from 'vitest';
import { ancestors, npmLauncher, watchNpmLauncher } from '../../src/npm-launcher.js';

describe('the npm launcher watch', () => {
  it('reads the ancestry from /proc: the parent first', () => {
    const chain = ancestors(process.pid);
    expect(chain[0]).toBe(process.ppid);
    expect(chain).not.toContain(1);
  });

  it('watches only a daemon that `npm exec` (npx) ran as agentwire itself', () => {
    expect(npmLauncher({})).toBeUndefined();
    expect(npmLauncher({ npm_command: 'run-script', npm_lifecycle_script: 'agentwire' })).toBeUndefined();
    expect(npmLauncher({ npm_command: 'exec', npm_lifecycle_script: 'vitest' })).toBeUndefined();
    // Launched as agentwire by npm exec, but no npm among the two nearest ancestors: nothing to watch.
    expect(npmLauncher({ npm_command: 'exec', npm_lifecycle_script: "'agentwire'" })).toBeUndefined();
    const stop = watchNpmLauncher(() => {
      throw new Error('never called');
    }, {});
    stop();
  });

});
