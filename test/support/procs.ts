// The process table as /proc shows it (Linux only, which is what agentwire targets), for tests that
// check no agent process, nor anything an agent started, outlives its session.
import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  /** R, S, D, Z (zombie), T … */
  state: string;
  comm: string;
}

/** One snapshot of every process; ones that exit while it is taken are skipped. */
export function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // comm may hold spaces and parentheses; everything after its last ')' is space-separated.
    const close = stat.lastIndexOf(')');
    const [state = '?', ppid, pgid] = stat.slice(close + 2).split(' ');
    out.push({ pid: Number(name), comm: stat.slice(stat.indexOf('(') + 1, close), state, ppid: Number(ppid), pgid: Number(pgid) });
  }
  return out;
}

/** Members of process group `pgid`, plus anything descended from one of them (even if it left the group). */
export function groupTree(pgid: number, table = processes()): Proc[] {
  const found = new Map(table.filter((p) => p.pgid === pgid).map((p) => [p.pid, p]));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...found.values()];
}

/**
 * What is left of an agent's process group that someone still owes a cleanup for: every live
 * process, and every zombie whose parent is one of `owners` (the test, the daemon) or is itself
 * left over, since those parents should have reaped it. A zombie already handed to init (or a
 * subreaper) is the system's to collect and holds nothing but a pid, so it does not count; how
 * fast it goes depends on the machine's init, not on agentwire.
 */
export function leftovers(pgid: number, owners: number[] = [process.pid]): Proc[] {
  const tree = groupTree(pgid);
  const pids = new Set(tree.map((p) => p.pid));
  return tree.filter((p) => p.state !== 'Z' || owners.includes(p.ppid) || pids.has(p.ppid));
}

/** Polls until nothing of the group is left; resolves with how long that took, or rejects listing what remains. */
export async function allGone(pgid: number, timeoutMs = 3000, owners?: number[]): Promise<number> {
  const start = Date.now();
  for (;;) {
    const left = leftovers(pgid, owners);
    if (left.length === 0) return Date.now() - start;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`process group ${pgid} still has ${JSON.stringify(left)} after ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** SIGKILLs whatever a failed test left behind in these groups, so nothing outlives the run. */
export function killGroups(pgids: Iterable<number>): void {
  for (const pgid of pgids) {
    for (const p of groupTree(pgid)) {
      if (p.pid === process.pid) continue;
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

/** Running, as opposed to gone or a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
