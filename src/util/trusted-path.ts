// Whether a path another local user could have planted may be trusted (docs/security.md, "Planted
// files and hostile agents"). The daemon often runs as root and runs what its data dir names (an
// install's marker names the executable) and writes secrets into what it finds there (the store),
// so a file or directory is used only when nobody but the daemon (or root, who can do anything
// anyway) could have put it there or changed it: owned by the daemon's uid or root, not a symlink
// (a link would redirect the read or write to wherever its maker chose), not writable by other
// users, and, for a file, one hard link (a second name could be another user's path to it, or a
// link of theirs to a file of ours they may not read). Each answer is a reason (a short phrase
// for a one-line refusal) or undefined when the path is trusted.
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

const euid = () => process.geteuid?.() ?? 0;
const egid = () => process.getegid?.() ?? 0;

export interface TrustRule {
  /** Also trust root's files (installs root made for a daemon of another user); default true. */
  root?: boolean;
}

/** Why `stat` (of a directory or a regular file) is not trusted: its owner or who may write it. */
function whyNot(stat: Stats, rule: TrustRule): string | undefined {
  const owners = rule.root === false ? [euid()] : [euid(), 0];
  if (!owners.includes(stat.uid)) return `owned by uid ${stat.uid}, not by this daemon's user (uid ${euid()})`;
  if ((stat.mode & 0o002) !== 0) return 'writable by every user';
  // A group-writable file of the daemon's own group is the user-private-group convention (umask
  // 002); any other group's members could change it.
  if ((stat.mode & 0o020) !== 0 && stat.gid !== egid()) return `writable by group ${stat.gid}`;
  return undefined;
}

/** Why the file at `path` is not trusted (missing counts as a reason too). */
export function untrustedFile(path: string, rule: TrustRule = {}): string | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  return untrustedFileStat(stat, rule);
}

/** The same rule for a file's stat (an open descriptor's fstat: see openTrusted callers). */
export function untrustedFileStat(stat: Stats, rule: TrustRule = {}): string | undefined {
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (!stat.isFile()) return 'not a regular file';
  if (stat.nlink !== 1) return `a file with ${stat.nlink} hard links`;
  return whyNot(stat, rule);
}

/** Why the directory at `path` is not trusted. */
export function untrustedDir(path: string, rule: TrustRule = {}): string | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (!stat.isDirectory()) return 'not a directory';
  return whyNot(stat, rule);
}

/**
 * Why a directory above a trusted root is not trusted: the same owners, but one every user may
 * write is fine when it is sticky (/tmp), since then nobody may rename or remove another's entry.
 */
export function untrustedAncestor(path: string): string | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  if (stat.uid !== euid() && stat.uid !== 0) return `owned by uid ${stat.uid}, not by this daemon's user (uid ${euid()}) or root`;
  const openToOthers = (stat.mode & 0o002) !== 0 || ((stat.mode & 0o020) !== 0 && stat.gid !== egid());
  if (openToOthers && (stat.mode & 0o1000) === 0) return 'writable by other users and not sticky';
  return undefined;
}

/**
 * The first directory from `/` down to `dir` (included) that is not a trusted ancestor, with why.
 * The real path is walked: a symlink on the way leads wherever its maker chose, so its target's
 * levels are the ones that count.
 */
export function untrustedWayTo(dir: string): { path: string; why: string } | undefined {
  const levels: string[] = [];
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (err) {
    return { path: dir, why: `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  for (let at = real; ; at = dirname(at)) {
    levels.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const path of levels) {
    const why = untrustedAncestor(path);
    if (why) return { path, why };
  }
  return undefined;
}

/**
 * The first path from `root` (excluded) down to `path` (included) that is not trusted: every
 * directory between, then `path` itself as a file (`leaf: 'file'`) or a directory. `path` must be
 * inside `root`.
 */
export function untrustedBelow(root: string, path: string, leaf: 'file' | 'dir', rule: TrustRule = {}): { path: string; why: string } | undefined {
  const rel = relative(root, path);
  if (rel === '') return undefined;
  if (rel.startsWith('..') || resolve(root, rel) !== resolve(path)) return { path, why: `outside ${root}` };
  const parts = rel.split(sep);
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = `${at}${sep}${part}`;
    const why = i === parts.length - 1 && leaf === 'file' ? untrustedFile(at, rule) : untrustedDir(at, rule);
    if (why) return { path: at, why };
  }
  return undefined;
}
