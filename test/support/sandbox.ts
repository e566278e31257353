// A throwaway home for one real CLI run: HOME, TMPDIR and the XDG dirs under one temp dir, so no
// CLI reads or writes the machine's own config, caches or credentials, and nothing leaks out.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Sandbox {
  /** The temp dir holding everything below. */
  root: string;
  home: string;
  /** The CLI's working directory (the "project"). */
  work: string;
  /** The base environment: PATH plus HOME, TMPDIR and XDG dirs inside the sandbox, nothing else. */
  env: Record<string, string>;
  cleanup(): void;
}

export function makeSandbox(prefix: string): Sandbox {
  const root = mkdtempSync(join(tmpdir(), `aw-${prefix}-`));
  const home = join(root, 'home');
  const work = join(root, 'work');
  const tmp = join(root, 'tmp');
  for (const dir of [home, work, tmp]) mkdirSync(dir, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    LANG: 'C.UTF-8',
  };
  return { root, home, work, env, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
