// The mock coding agent: a real child process with its own NDJSON dialect (native.ts), so the
// daemon drives and converts it exactly like a third-party CLI. Plain JavaScript on purpose: it
// runs as `node src/agents/mock/program.js` with no build step, from source or from a package.
//
//   stdin:  MockIn lines (prompt, permission_reply, question_reply, interrupt, steer, continue)
//   stdout: MockOut lines, starting with `ready`; every turn ends with `done` (except crash/end)
//   argv:   [--model <m>] [--mode <agentMode>] [--resume <session id>] [--fork <session id> [--fork-turns <n>]]
//   state:  one transcript per session under $MOCK_AGENT_HOME/sessions (program-store.js)
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { runCommand } from './program-commands.js';
import { Transcript, sessionsDir } from './program-store.js';
import { Turn, newSession } from './program-turn.js';

/** @typedef {import('./native.js').MockIn} MockIn */
/** @typedef {import('./native.js').MockOut} MockOut */
/** @typedef {import('./program-turn.js').MockIo} MockIo */

/** @param {string[]} argv */
function parseArgs(argv) {
  let model = 'mock-1';
  let mode = 'default';
  /** @type {string | undefined} */
  let resume;
  /** @type {string | undefined} */
  let fork;
  /** @type {number | null} */
  let forkTurns = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (arg === '--model' && next !== undefined) model = (i++, next);
    else if (arg.startsWith('--model=')) model = arg.slice('--model='.length);
    else if (arg === '--mode' && next !== undefined) mode = (i++, next);
    else if (arg === '--resume' && next !== undefined) resume = (i++, next);
    else if (arg === '--fork' && next !== undefined) fork = (i++, next);
    else if (arg === '--fork-turns' && next !== undefined && /^\d+$/.test(next)) forkTurns = (i++, Number(next));
  }
  return { model, mode, resume, fork, forkTurns };
}

function sessionId() {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return 'mock-' + Array.from(randomBytes(12), (b) => alphabet[b % alphabet.length]).join('');
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** @param {unknown} v @returns {v is string[]} */
function isStrings(v) {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/**
 * Hand-written twin of native.ts's MockIn: the program may not load the TypeScript schema at run
 * time, and zod alone would not save writing the shape out again.
 * @param {string} line
 * @returns {MockIn | string} the message, or why it was rejected
 */
function parseInput(line) {
  /** @type {unknown} */
  let v;
  try {
    v = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (!isObject(v)) return 'not a JSON object';
  switch (v.type) {
    case 'prompt': {
      const { text, attachments } = v;
      if (typeof text !== 'string') return 'prompt.text must be a string';
      if (attachments === undefined) return { type: 'prompt', text };
      const valid =
        Array.isArray(attachments) &&
        attachments.every((a) => isObject(a) && typeof a.path === 'string' && (a.mime === undefined || typeof a.mime === 'string'));
      if (!valid) return 'prompt.attachments must be [{path, mime?}]';
      return { type: 'prompt', text, attachments: /** @type {{ path: string, mime?: string }[]} */ (attachments) };
    }
    case 'permission_reply': {
      const { id, reply } = v;
      if (typeof id !== 'string') return 'permission_reply.id must be a string';
      if (reply !== 'once' && reply !== 'always' && reply !== 'reject') return 'permission_reply.reply must be once|always|reject';
      return { type: 'permission_reply', id, reply };
    }
    case 'question_reply': {
      const { id, answers } = v;
      if (typeof id !== 'string') return 'question_reply.id must be a string';
      if (answers === null) return { type: 'question_reply', id, answers };
      if (!Array.isArray(answers) || !answers.every(isStrings)) return 'question_reply.answers must be string[][] or null';
      return { type: 'question_reply', id, answers: /** @type {string[][]} */ (answers) };
    }
    case 'interrupt':
      return { type: 'interrupt' };
    case 'continue':
      return { type: 'continue' };
    case 'steer':
      if (typeof v.text !== 'string') return 'steer.text must be a string';
      return { type: 'steer', text: v.text };
    default:
      return `unknown type ${JSON.stringify(v.type) ?? 'undefined'}`;
  }
}

/** @param {string} message */
function complain(message) {
  process.stderr.write(`mock: ${message}\n`);
}

const { model, mode, resume, fork, forkTurns } = parseArgs(process.argv.slice(2));
const dir = sessionsDir(process.env);
const transcript =
  resume !== undefined
    ? Transcript.resume(dir, resume, complain)
    : fork !== undefined
      ? Transcript.fork(dir, fork, sessionId(), forkTurns, complain)
      : Transcript.create(dir, sessionId(), { model, cwd: process.cwd() }, complain);
if (typeof transcript === 'string') {
  // Like a real agent whose store is gone: fail before `ready`, so the daemon's start fails.
  const what = resume !== undefined ? `no session ${resume} to resume` : `cannot fork session ${fork}`;
  await new Promise((resolve) => process.stderr.write(`mock: ${what}: ${transcript}\n`, resolve));
  process.exit(1);
}
const session = newSession(transcript);
const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
let exiting = false;
/** @type {Turn | null} */
let current = null;

// What one tick writes leaves in one write: a reply the mock has whole (its start, text, end) is one
// pipe write, as an agent printing a buffered answer would make, not a system call per line.
let corked = false;
const uncork = () => {
  corked = false;
  process.stdout.uncork();
};
/** @param {string} text */
const out = (text) => {
  if (!corked) {
    corked = true;
    process.stdout.cork();
    process.nextTick(uncork);
  }
  return process.stdout.write(text);
};

/** @type {MockIo} */
const io = {
  write: (line) => (exiting ? true : out(JSON.stringify(line) + '\n')),
  raw: (text) => (exiting ? true : out(text + '\n')),
  drain: () => new Promise((resolve) => process.stdout.once('drain', () => resolve())),
  exit(code, stderrText = '') {
    if (exiting) return;
    exiting = true;
    current?.stop();
    input.close();
    // Exit only once both streams have flushed: a pipe reader must see every line we wrote.
    process.stdout.write('', () => process.stderr.write(stderrText, () => process.exit(code)));
  },
};

/** @param {MockIn} message */
function handle(message) {
  switch (message.type) {
    case 'prompt': {
      if (current !== null) return complain('a turn is already running; prompt ignored');
      session.transcript.prompt(message.text);
      const turn = new Turn(session, io, message.attachments ?? [], () => {
        if (current === turn) current = null;
      });
      current = turn;
      return runCommand(turn, message.text);
    }
    case 'interrupt':
      return current?.interrupt();
    case 'steer':
      if (current === null) return complain('no turn is running; steer ignored');
      return current.steer(message.text);
    case 'permission_reply': {
      const pending = current?.pending;
      if (pending?.kind !== 'permission' || pending.id !== message.id) {
        return complain(`no pending permission ${message.id}; reply ignored`);
      }
      if (current !== null) current.pending = null;
      return pending.resolve(message.reply);
    }
    case 'continue': {
      const pending = current?.pending;
      if (pending?.kind !== 'step') return complain('no turn waits after a step; continue ignored');
      if (current !== null) current.pending = null;
      return pending.resolve();
    }
    case 'question_reply': {
      const pending = current?.pending;
      if (pending?.kind !== 'question' || pending.id !== message.id) {
        return complain(`no pending question ${message.id}; reply ignored`);
      }
      if (current !== null) current.pending = null;
      return pending.resolve(message.answers);
    }
  }
}

// The reader went away: nobody is left to tell anything, but a running tool must not outlive us.
process.stdout.on('error', () => {
  current?.stop();
  process.exit(0);
});

// A resumed (or forked) session says so, with how many prompts it had been sent before this process.
const resumed = resume === undefined && fork === undefined ? {} : { resumed: true, turns: transcript.turns, ...(fork ? { forked_from: fork } : {}) };
io.write({ type: 'ready', session: transcript.id, model, mode, cwd: session.cwd, pid: process.pid, ...resumed });

input.on('line', (line) => {
  if (exiting || line.trim() === '') return;
  const message = parseInput(line);
  if (typeof message === 'string') return complain(`ignored stdin line: ${message}`);
  handle(message);
});
input.on('close', () => io.exit(0));
