// Whether an install in the agents dir may be run: its marker names the executable the daemon runs,
// often as root, so a marker or an executable another user could have put there (a data dir that
// was world-writable before the daemon made it private, an --agents-dir somewhere shared) must
// never be believed. The rule (src/util/trusted-path.ts) holds for every install, the daemon's own
// and those it did not make (another --agents-dir): the agents dir and every directory on the way
// to it owned by the daemon's user or root and not open to others, then every level from it down
// to the marker and to the executable's real file owned the same way, not a symlink, one link.
// An install that fails is not an install (GET /v1/agents does not list it, a session does not run
// it); installing again moves it aside (`.untrusted-…`, kept for whoever wants to look at it, and
// never read: names starting with a dot are no version) and installs afresh.
import { realpathSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { untrustedBelow, untrustedDir, untrustedWayTo } from '../util/trusted-path.js';

export type Distrust = { path: string; why: string };

/** Why the agents dir `dir` (and the way to it) is not trusted. */
function untrustedRoot(dir: string): Distrust | undefined {
  const way = untrustedWayTo(dirname(dir));
  if (way) return way;
  const why = untrustedDir(dir);
  return why ? { path: dir, why } : undefined;
}

/** Why the install at `<dir>/<name>/<version>` with marker `marker` may not be believed. */
export function untrustedInstall(dir: string, target: string, marker: string): Distrust | undefined {
  return untrustedRoot(dir) ?? untrustedBelow(dir, target, 'dir') ?? untrustedBelow(dir, marker, 'file');
}

/**
 * Why the executable `path` a trusted marker names may not be run: its real file (npm's `.bin`
 * entries are symlinks into the package) must be inside the install and trusted all the way.
 */
export function untrustedExecutable(target: string, path: string): Distrust | undefined {
  let real: string;
  let realTarget: string;
  try {
    real = realpathSync(path);
    realTarget = realpathSync(target);
  } catch (err) {
    return { path, why: `cannot be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (!real.startsWith(`${realTarget}/`)) return { path, why: `leads outside the install, to ${real}` };
  return untrustedBelow(realTarget, real, 'file');
}

/**
 * Makes the way to `<dir>/<name>` safe to install into, before anything is written: the agents dir
 * created if missing, then each level (the agents dir itself when its parent is trusted, `<name>`,
 * `<name>/<version>`) that is not trusted renamed aside in its trusted parent. Throws, naming the
 * path and the fix, when the agents dir is not trusted and cannot be set aside (its parent is
 * not ours either: an --agents-dir another user prepared). `onAside` hears each move.
 */
export async function clearWayToInstall(dir: string, name: string, version: string, onAside: (moved: Distrust & { to: string }) => void): Promise<void> {
  await mkdir(dir, { recursive: true });
  const root = untrustedRoot(dir);
  if (root && (root.path !== dir || untrustedRoot(dirname(dir)))) {
    throw new Error(`${root.path} is ${root.why}; an install there could be replaced by another user: chown it to uid ${process.geteuid?.() ?? 0} (mode 0755) or choose another --agents-dir`);
  }
  if (root) {
    await setAside(root, onAside);
    await mkdir(dir, { recursive: true });
  }
  for (const level of [join(dir, name), join(dir, name, version)]) {
    const why = untrustedDir(level);
    if (why && !why.startsWith('cannot be read (ENOENT')) await setAside({ path: level, why }, onAside);
  }
}

async function setAside(distrust: Distrust, onAside: (moved: Distrust & { to: string }) => void): Promise<void> {
  const to = join(dirname(distrust.path), `.untrusted-${basename(distrust.path)}-${Date.now()}`);
  await rename(distrust.path, to);
  onAside({ ...distrust, to });
}
