// The docs' shell examples as steps a test runs (docs/testing.md, "The docs' examples"): every
// fenced ```sh block of README.md and docs/*.md, split into commands with the comment above each
// and what the page shows it answers (`# → …` lines under it, `…` standing for anything), and a
// runner that does with each command what a reader does, in `sh`:
// - `127.0.0.1:2468` in a command becomes the address the test gives (the only change to a line):
//   the validating proxy's in front of the daemon (./validating-proxy.ts);
// - an assignment (`export X=…`, `X=…`) is kept for the commands after it, as a terminal keeps it;
// - a command whose comment says Ctrl-C is stopped (SIGINT) once it has shown what the page says;
// - a curl GET is run again until it shows it, for at most 10 s (a reader runs it again until the
//   turn has ended); every other command runs once and must exit 0.
// A block a test cannot run (it installs, needs Docker, PostgreSQL or a key) is marked on the line
// before its fence with `<!-- not-runnable: why -->`, which Markdown renders as nothing.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ShBlock {
  /** The page, relative to the repository's root, and the line of the opening fence. */
  page: string;
  line: number;
  text: string;
  /** Why it is not run, from its `<!-- not-runnable: … -->` marker; undefined for a runnable block. */
  notRunnable?: string;
}

export interface Step {
  /** The comment lines above it, for messages and for "Ctrl-C". */
  comment: string;
  command: string;
  /** Each `# →` line under it: `…` stands for anything. */
  expected: string[];
}

const MARKER = /^<!--\s*not-runnable:(.*?)-->\s*$/;

/** Every ```sh block of the markdown `text` (of `page`), with its not-runnable marker, if any. */
export function shBlocks(page: string, text: string): ShBlock[] {
  const lines = text.split('\n');
  const blocks: ShBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(```+|~~~+)\s*(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(fence[1]!));
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that is never closed`);
    if (fence[2] === 'sh') {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const marker = before >= 0 ? MARKER.exec(lines[before]!.trim()) : null;
      blocks.push({ page, line: i + 1, text: lines.slice(i + 1, end).join('\n'), ...(marker ? { notRunnable: marker[1]!.trim() } : {}) });
    }
    i = end;
  }
  return blocks;
}

/** Whether `command` is a whole command for sh (no open quote, group or here-document). */
function complete(command: string): boolean {
  if (command.endsWith('\\')) return false;
  return spawnSync('sh', ['-n', '-c', command]).status === 0;
}

/** A block's commands, each with the comment above it and the `# →` lines under it. */
export function steps(block: string): Step[] {
  const out: Step[] = [];
  let comment = '';
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending) {
      pending += `\n${line}`;
      if (complete(pending)) out.push({ comment, command: pending, expected: [] }), (pending = ''), (comment = '');
    } else if (line.startsWith('# →')) {
      if (!out.at(-1)) throw new Error(`"${line}" follows no command`);
      out.at(-1)!.expected.push(line.slice('# →'.length).trim());
    } else if (line.startsWith('#')) comment += `${line}\n`;
    else if (line.trim() !== '') {
      if (complete(line)) out.push({ comment, command: line, expected: [] }), (comment = '');
      else pending = line;
    }
  }
  if (pending) throw new Error(`a command that never ends: ${pending}`);
  return out;
}

/** Whether `output` shows every expected line, in order, `…` matching anything. */
export function shows(output: string, expected: string[]): boolean {
  let at = 0;
  for (const fragment of expected.flatMap((line) => line.split('…'))) {
    if (fragment === '') continue;
    const found = output.indexOf(fragment, at);
    if (found < 0) return false;
    at = found + fragment.length;
  }
  return true;
}

export interface Shell {
  cwd: string;
  /** The environment every command gets; assignments add to it. */
  env: Record<string, string>;
  /** The port that stands for `127.0.0.1:2468`: the validating proxy's in front of the daemon. */
  port: number;
  /** How long a stopped or repeated command is given to show its output (default 10 s). */
  patienceMs?: number;
}

export interface Ran {
  command: string;
  stdout: string;
  /** stdout and stderr, as a terminal shows them. */
  output: string;
  code: number | null;
  /** Stopped with SIGINT (`until` held, or the patience ran out). */
  stopped: boolean;
}

/** Runs one command in sh; with `until`, stops it (as Ctrl-C would) once `until(output)` holds. */
export function sh(command: string, shell: Shell, until?: (output: string) => boolean): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: shell.cwd, env: shell.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    let stopped = false;
    const stop = () => {
      stopped = true;
      try {
        process.kill(-child.pid!, 'SIGINT');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(stop, until ? (shell.patienceMs ?? 10_000) : 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
      if (until?.(output)) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ command, stdout, output, code, stopped });
    });
  });
}

/** Runs a step as a reader does (see the top of this file); the last run's result. */
export async function runStep(step: Step, shell: Shell): Promise<Ran> {
  const command = step.command.replaceAll('127.0.0.1:2468', `127.0.0.1:${shell.port}`);
  const assigned = /^(?:export\s+)?([A-Za-z_]\w*)=/.exec(command);
  if (assigned) {
    const ran = await sh(`${command}\nprintf '%s' "$${assigned[1]}"`, shell);
    if (ran.code === 0) shell.env[assigned[1]!] = ran.stdout;
    return ran;
  }
  if (step.comment.includes('Ctrl-C')) {
    const ran = await sh(command, shell, (out) => shows(out, step.expected));
    return { ...ran, code: ran.stopped ? 0 : ran.code }; // stopped as the page says: not a failure
  }
  const repeats = /^curl\s/.test(command) && !/\s(-X|-d|--data)\s/.test(command);
  const deadline = Date.now() + (shell.patienceMs ?? 10_000);
  for (;;) {
    const ran = await sh(command, shell);
    if (ran.code === 0 && shows(ran.output, step.expected)) return ran;
    if (!repeats || Date.now() > deadline) return ran;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The ```sh blocks of the pages (paths relative to `root`). */
export function pagesBlocks(root: string, pages: string[]): ShBlock[] {
  return pages.flatMap((page) => shBlocks(page, readFileSync(`${root}/${page}`, 'utf8')));
}
