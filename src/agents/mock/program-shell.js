// The mock's `shell <command>` tool: a real `sh -c` child, so tests can see what happens to the
// processes an agent starts. The shell is an ordinary child (not detached): like a real agent's
// tool it stays in the agent's process group, which is what the daemon kills when the session ends.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** @typedef {import('./program-turn.js').Turn} Turn */
/** @typedef {import('node:child_process').ChildProcess} ChildProcess */

/** Only the end of a long output is kept: that is where errors usually are. */
const MAX_OUTPUT_CHARS = 64 * 1024;
/** How long to wait for the output pipes to close once the shell exited (a background job may hold them). */
const CLOSE_GRACE_MS = 200;

/** @param {Turn} turn @param {string} command */
export function shell(turn, command) {
  if (command === '') return turn.reply('Usage: shell <command>'), turn.done();
  const parent = turn.say(`Running: ${command}`);
  const call = turn.id('call');
  turn.emit({ type: 'tool_call', id: call, parent, tool: 'shell', input: { command } });
  // stdin is /dev/null: the mock's own stdin is the daemon's channel and must not be read by a tool.
  const child = spawn('sh', ['-c', command], { cwd: turn.session.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = new OutputTail(MAX_OUTPUT_CHARS);
  for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (c) => output.push(c));

  /** @param {string} text @param {boolean} failed */
  const result = (text, failed) =>
    turn.emit({ type: 'tool_result', id: turn.id('res'), call, parent, output: text, ...(failed ? { failed: true } : {}) });

  let finished = false;
  // Interrupt, crash or the mock's own exit: the tool goes too, and the call still gets its result.
  const unregister = turn.onAbort(() => {
    finished = true;
    killTree(child);
    if (turn.active) result(`${output.text()}[interrupted]\n`, true);
  });
  /** @param {number | null} code @param {string | null} signal @param {string} [error] */
  const finish = (code, signal, error) => {
    if (finished) return;
    finished = true;
    unregister();
    child.stdout.destroy();
    child.stderr.destroy();
    if (!turn.active) return;
    result(output.text() + (error ? `${error}\n` : ''), error !== undefined || code !== 0);
    const how = error ?? (signal ? `The command was killed by ${signal}.` : `The command exited with code ${code}.`);
    turn.reply(how);
    turn.done();
  };

  child.on('error', (err) => finish(null, null, `The command could not be run: ${err.message}`));
  child.on('exit', (code, signal) => {
    const timer = setTimeout(() => finish(code, signal), CLOSE_GRACE_MS);
    child.on('close', () => (clearTimeout(timer), finish(code, signal)));
  });
}

/**
 * SIGTERM to the shell and everything it started. Signalling only the shell would orphan its
 * children (dash does not exec the last command of `sh -c`), and the mock cannot signal its own
 * process group without hitting itself, so the descendants are found through /proc. The shell
 * goes first: were its command killed first, it would go on with the next one (`sleep 9; rm x`).
 * @param {ChildProcess} child
 */
function killTree(child) {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const tree = descendants(pid);
  signal(pid);
  for (const p of tree) signal(p);
}

/** @param {number} pid */
function signal(pid) {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

/** Descendants of `root`, parents before children; empty where there is no /proc. @param {number} root */
function descendants(root) {
  /** @type {Map<number, number[]>} */
  const children = new Map();
  let names = /** @type {string[]} */ ([]);
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // The command name may contain spaces and parentheses; the fields after its last ')' do not.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const siblings = children.get(ppid) ?? [];
    siblings.push(Number(name));
    children.set(ppid, siblings);
  }
  /** @type {number[]} */
  const found = [];
  for (let queue = [root]; queue.length > 0; ) {
    const kids = children.get(/** @type {number} */ (queue.shift())) ?? [];
    found.push(...kids);
    queue.push(...kids);
  }
  return found;
}

/** The last `max` characters of everything pushed, with a note of how much was dropped. */
class OutputTail {
  /** @type {string[]} */
  chunks = [];
  length = 0;
  dropped = 0;

  /** @param {number} max */
  constructor(max) {
    this.max = max;
  }

  /** @param {string} chunk */
  push(chunk) {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length > this.max) {
      const first = /** @type {string} */ (this.chunks[0]);
      const cut = Math.min(first.length, this.length - this.max);
      this.dropped += cut;
      this.length -= cut;
      if (cut === first.length) this.chunks.shift();
      else this.chunks[0] = first.slice(cut);
    }
  }

  text() {
    const all = this.chunks.join('');
    return this.dropped > 0 ? `[${this.dropped} earlier characters omitted]\n${all}` : all;
  }
}
