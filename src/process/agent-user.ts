// --agent-user: agents (and every tool they run) as another OS user, so that they can read neither
// the daemon's environment (/proc/<pid>/environ), nor its memory, nor its token file and data dir.
// Switching users at spawn needs root or CAP_SETUID + CAP_SETGID (and CAP_KILL to end the agents,
// CAP_CHOWN to hand them files); the daemon checks that at start instead of failing at the first
// session. docs/security.md says what the user must be able to use.
import { readFileSync, statSync, type Stats } from 'node:fs';
import { chmod, chown, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '../config-error.js';

export interface AgentUser {
  name: string;
  uid: number;
  /** The user's primary group; supplementary groups are dropped. */
  gid: number;
  /** The user's home from /etc/passwd: the agent's HOME unless the session's env sets one. */
  home: string;
}

/** What the daemon does across users: start agents as another uid/gid (SETUID, SETGID), signal
 *  their process groups (KILL), and hand them the files and throwaway dirs it makes (CHOWN). */
const NEEDED_CAPABILITIES = { CAP_CHOWN: 0n, CAP_KILL: 5n, CAP_SETGID: 6n, CAP_SETUID: 7n } as const;

/** The passwd entry of a user name or uid, or undefined. */
export function lookupUser(spec: string, passwd: string): AgentUser | undefined {
  const byUid = /^\d+$/.test(spec);
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid, , home] = line.split(':');
    if (!name || uid === undefined || gid === undefined || home === undefined) continue;
    if (byUid ? uid === spec : name === spec) return { name, uid: Number(uid), gid: Number(gid), home };
  }
  return undefined;
}

/** The capabilities agents as another user need that the effective set (CapEff of
 *  /proc/self/status) lacks; root normally has them all. */
export function missingCapabilities(procStatus: string): string[] {
  const hex = /^CapEff:\s*([0-9a-f]+)$/im.exec(procStatus)?.[1];
  const caps = hex ? BigInt(`0x${hex}`) : 0n;
  return Object.entries(NEEDED_CAPABILITIES).filter(([, bit]) => ((caps >> bit) & 1n) === 0n).map(([name]) => name);
}

/**
 * The user agents run as, checked the way the daemon starts: the user exists, is not the daemon's
 * own nor root (either would make the boundary a no-op), and the daemon may switch to it.
 * ConfigError (a start-up refusal) otherwise. `system` is injectable for tests.
 */
export function resolveAgentUser(
  spec: string,
  system: { passwd?: string; procStatus?: string; uid?: number } = {},
): AgentUser {
  const passwd = system.passwd ?? readFileSync('/etc/passwd', 'utf8');
  const user = lookupUser(spec, passwd);
  if (!user) throw new ConfigError(`--agent-user ${spec}: no such user in /etc/passwd (create it, e.g. useradd --create-home ${/^\d+$/.test(spec) ? 'agent' : spec})`);
  const self = system.uid ?? process.getuid?.() ?? -1;
  if (user.uid === 0 || user.uid === self) {
    throw new ConfigError(`--agent-user ${spec}: that is ${user.uid === 0 ? 'root' : "the daemon's own user"}; agents must run as another, unprivileged user`);
  }
  const missing = missingCapabilities(system.procStatus ?? readProcStatus());
  if (missing.length > 0) {
    throw new ConfigError(
      `--agent-user ${spec}: the daemon cannot switch users; run it as root or give it CAP_SETUID, CAP_SETGID, CAP_KILL and CAP_CHOWN (it runs as uid ${self}, without ${missing.join(', ')})`,
    );
  }
  return user;
}

function readProcStatus(): string {
  try {
    return readFileSync('/proc/self/status', 'utf8');
  } catch {
    return ''; // not Linux: no capabilities to read, so no switching
  }
}

/**
 * True when the agent user may read and search `dir` (and search every directory above it).
 * Without this, an agent would start (the daemon enters its cwd before it switches users) and only
 * its tools would fail.
 */
export function agentCanUse(dir: string, user: AgentUser): Promise<boolean> {
  return testAs(user, 'test -r "$1" && test -x "$1"', dir);
}

/** True when the agent user may read `path` (the token file must not be). */
export function agentCanRead(path: string, user: AgentUser): Promise<boolean> {
  return testAs(user, 'test -r "$1"', path);
}

/** True when the agent user may list or enter `dir` (the data dir must allow neither). */
export function agentCanEnter(dir: string, user: AgentUser): Promise<boolean> {
  return testAs(user, 'test -r "$1" || test -x "$1"', dir);
}

/** Asks the kernel, by running `test` as the user: permission bits, ACLs and mounts all count. */
async function testAs(user: AgentUser, script: string, path: string): Promise<boolean> {
  const { execa } = await import('execa');
  const run = await execa('/bin/sh', ['-c', script, 'sh', path], { ...asAgent(user), reject: false, timeout: 5_000 });
  return run.exitCode === 0;
}

/** How a helper runs as the agent user: its uid and gid, in `/`, a bare PATH and nothing else. */
function asAgent(user: AgentUser) {
  return { uid: user.uid, gid: user.gid, cwd: '/', env: { PATH: '/usr/bin:/bin' }, extendEnv: false, stdin: 'ignore' } as const;
}

/** A fresh temporary directory the agent user owns (a throwaway cwd or HOME for a helper run). */
export async function agentTempDir(prefix: string, user: AgentUser | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (user) await chown(dir, user.uid, user.gid);
  return dir;
}

/**
 * Lets the agent user read (and, with the mode's group bits, run or connect to) a file the daemon
 * wrote for it, without letting it change it: the daemon keeps the owner, the agent's group gets
 * `mode`'s group bits. Without an agent user the file just gets `mode`.
 */
export async function shareWithAgent(path: string, mode: number, user: AgentUser | undefined): Promise<void> {
  if (user) await chown(path, process.getuid?.() ?? 0, user.gid);
  await chmod(path, mode);
}

/**
 * Whether the agent user may read the file at `path` (a real path: no symbolic links), as the
 * permission bits say: read on the file, search on every directory above it. Synchronous, so a
 * message's attachments are checked before its turn opens (session-paths.ts). The agent runs
 * with its primary group only, so owner, group and other bits are the whole answer; an ACL that
 * grants more is not counted (the attachment is refused), and the daemon's own read goes through
 * readAsAgent, so an ACL that grants less is still honoured.
 */
export function agentMayRead(path: string, user: AgentUser): boolean {
  const allows = (st: Stats, bit: number) => ((st.mode >> (st.uid === user.uid ? 6 : st.gid === user.gid ? 3 : 0)) & bit) !== 0;
  try {
    if (!allows(statSync(path), 4)) return false;
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      if (!allows(statSync(dir), 1)) return false;
      if (dir === dirname(dir)) return true;
    }
  } catch {
    return false;
  }
}

/**
 * A file's bytes, read with the agent's rights: by a `cat` running as the agent user when there is
 * one (so the kernel decides, ACLs included, and a file swapped for a symbolic link after the
 * check is still read only if the agent could read it), else by the daemon (it is the agent's
 * user). What drivers send an agent inline (an image) is read here, never with the daemon's rights.
 */
export async function readAsAgent(path: string, user: AgentUser | undefined, maxBytes: number): Promise<Buffer> {
  if (!user) return readFile(path);
  const { execa } = await import('execa');
  const run = await execa('/bin/cat', ['--', path], {
    ...asAgent(user),
    encoding: 'buffer',
    maxBuffer: maxBytes + 1,
    reject: false,
    timeout: 30_000,
  });
  if (run.exitCode !== 0) throw Object.assign(new Error(`the agent user '${user.name}' cannot read it`), { code: 'EACCES' });
  return Buffer.from(run.stdout);
}
