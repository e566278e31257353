// What the mock does for each prompt. Every command ends its turn with `done` (or deliberately
// without: crash, end), so the daemon's turn handling is exercised on every path.

import { shell } from './program-shell.js';
import { HELP, MARKDOWN, NOTES_PATCH_DIFF, NOTES_WRITE_DIFF } from './program-texts.js';

/** @typedef {import('./program-turn.js').Turn} Turn */
/** @typedef {import('./native.js').MockPart} MockPart */
/** @typedef {(turn: Turn, arg: string, text: string) => void} Command */

/** Words with their trailing space, so the chunks concatenate back to the exact text. @param {string} text */
function words(text) {
  return text.match(/\S+\s*/g) ?? [text];
}

/**
 * A digit string clamped into range; anything else means "use the default".
 * @param {string} arg @param {number} fallback @param {number} min @param {number} max
 */
function count(arg, fallback, min, max) {
  if (!/^\d+$/.test(arg)) return fallback;
  return Math.min(max, Math.max(min, Number(arg)));
}

/**
 * The mock pretends to write notes.txt; it never touches the filesystem. `call`: the id the
 * permission that asked for it named, so the request points at its tool call.
 * @param {Turn} turn @param {string} parent @param {string} [call]
 */
function writeNotes(turn, parent, call = turn.id('call')) {
  turn.emit({ type: 'tool_call', id: call, parent, tool: 'write_file', input: { path: 'notes.txt', content: 'hello\n' } });
  turn.emit({
    type: 'tool_result',
    id: turn.id('res'),
    call,
    parent,
    output: 'wrote 6 bytes to notes.txt',
    files: [
      { kind: 'file', path: 'notes.txt', op: 'read' },
      { kind: 'file', path: 'notes.txt', op: 'write', diff: NOTES_WRITE_DIFF },
      { kind: 'file', path: 'notes.txt', op: 'patch', diff: NOTES_PATCH_DIFF },
    ],
  });
}

/** @param {Turn} turn */
function picture(turn) {
  return /** @type {MockPart} */ ({ kind: 'picture', path: `${turn.session.cwd}/mock-image.png`, mime: 'image/png' });
}

/** @param {Turn} turn */
function reasoning(turn) {
  turn.reply(words('The answer is 42, because 6 × 7 = 42.'), {
    before: [
      { kind: 'thinking', value: 'The user wants a short answer with the reasoning shown.' },
      { kind: 'thinking', value: 'Private scratchpad: 6 × 7 = 42.', private: true },
    ],
    after: [{ kind: 'data', value: { answer: 42, confidence: 'high' } }],
  });
  turn.done();
}

/** @param {Turn} turn @param {string} parent @param {string} [call] */
function permissionGranted(turn, parent, call) {
  writeNotes(turn, parent, call);
  turn.reply('Permission granted; wrote notes.txt.');
  turn.done();
}

/**
 * Proves the conversation survived a resume: the prompts before this one, read back from the
 * transcript (the one running this command is the last prompt recorded, so it is left out).
 * @param {Turn} turn
 */
function history(turn) {
  const { turns, recent } = turn.session.transcript;
  const earlier = recent.slice(0, -1);
  if (earlier.length === 0) return turn.reply('No earlier prompts in this session.'), turn.done();
  const first = turns - recent.length + 1;
  const omitted = first > 1 ? [`(${first - 1} older prompts not shown)`] : [];
  const lines = earlier.map((text, i) => `${first + i}. ${JSON.stringify(text)}`);
  // One delta per line, like `help`.
  turn.reply([`Earlier prompts in this session (${turns - 1}):`, ...omitted, ...lines].join('\n').split(/(?<=\n)/));
  turn.done();
}

/**
 * A sub-agent's work: a `delegate` call whose sub-agent (lines marked `agent`) says something,
 * lists the files and reports back; the call's result is its summary.
 * @param {Turn} turn
 */
function subagent(turn) {
  const parent = turn.say('Delegating to a sub-agent.');
  const call = turn.id('call');
  const agent = `agent_${call}`;
  turn.emit({ type: 'tool_call', id: call, parent, tool: 'delegate', input: { description: 'Look around', prompt: 'List the files.' } });
  turn.emit({ type: 'subagent_start', id: agent, call, description: 'Look around', prompt: 'List the files.', agent_type: 'explorer' });
  const msg = turn.id('msg');
  turn.emit({ type: 'message_start', id: msg, role: 'assistant', agent });
  turn.emit({ type: 'text', id: msg, chunk: 'Listing the files.', agent });
  turn.emit({ type: 'message_end', id: msg, role: 'assistant', parts: [{ kind: 'text', value: 'Listing the files.' }], agent });
  const inner = turn.id('call');
  turn.emit({ type: 'tool_call', id: inner, parent: msg, tool: 'list_files', input: { path: '.' }, agent });
  turn.emit({ type: 'tool_result', id: turn.id('res'), call: inner, parent: msg, output: 'notes.txt', agent });
  turn.emit({ type: 'subagent_end', id: agent, outcome: 'completed', summary: 'Found notes.txt.' });
  turn.emit({ type: 'tool_result', id: turn.id('res'), call, parent, output: 'Found notes.txt.' });
  turn.reply('The sub-agent found notes.txt.');
  turn.done();
}

/** @type {Map<string, Command>} */
const COMMANDS = new Map([
  ['help', (turn) => (turn.reply(HELP.split(/(?<=\n)/)), turn.done())],
  ['markdown', (turn) => (turn.reply(MARKDOWN), turn.done())],
  ['image', (turn) => (turn.reply('Here is an image.', { after: [picture(turn)] }), turn.done())],
  ['echo', (turn, _arg, text) => (turn.reply(text.trimStart().slice(4).replace(/^\s/, '')), turn.done())],
  ['shell', (turn, arg) => shell(turn, arg)],
  ['history', history],
  ['subagent', subagent],
  [
    'demo',
    (turn) => {
      turn.say('Mock demo: one turn with every item kind and content part.', { role: 'system' });
      const parent = turn.reply(words('This demo shows every kind of content the mock can produce.'), {
        after: [
          { kind: 'thinking', value: 'Showing public reasoning.' },
          { kind: 'thinking', value: 'Keeping this private.', private: true },
          { kind: 'data', value: { demo: true, parts: 7 } },
          { kind: 'file', path: 'README.md', op: 'read' },
          picture(turn),
          { kind: 'progress', label: 'Demo', detail: 'all content parts shown' },
        ],
      });
      writeNotes(turn, parent);
      turn.emit({ type: 'progress', id: turn.id('prog'), label: 'Demo', detail: 'all item kinds shown' });
      turn.emit({ type: 'artifact', id: turn.id('art'), payload: { kind: 'demo-artifact', values: [1, 2, 3] } });
      turn.done();
    },
  ],
  [
    'tool',
    (turn) => {
      writeNotes(turn, turn.say('I will write notes.txt.'));
      turn.reply('Done.');
      turn.done();
    },
  ],
  [
    'status',
    (turn) => {
      turn.emit({ type: 'progress', id: turn.id('prog'), label: 'Indexing', detail: '3 of 3 files' });
      turn.reply('Status: everything is indexed.');
      turn.done();
    },
  ],
  [
    'unknown',
    (turn) => {
      turn.emit({ type: 'artifact', id: turn.id('art'), payload: { kind: 'mock-artifact', values: [1, 2, 3] } });
      turn.reply('Emitted one artifact of an unknown kind.');
      turn.done();
    },
  ],
  [
    'permission',
    (turn) => {
      if (turn.session.alwaysAllowed.has('write_file')) {
        permissionGranted(turn, turn.say('Permission to write files was already granted (always); writing notes.txt.'));
        return;
      }
      const parent = turn.say('I need permission to write notes.txt.');
      const id = turn.id('perm');
      const call = turn.id('call');
      turn.emit({ type: 'ask_permission', id, action: 'write_file', input: { path: 'notes.txt' }, call });
      turn.wait({
        kind: 'permission',
        id,
        resolve: (reply) => {
          if (reply === 'reject') return turn.reply('Permission denied; did not write notes.txt.'), turn.done();
          if (reply === 'always') turn.session.alwaysAllowed.add('write_file');
          permissionGranted(turn, parent, call);
        },
      });
    },
  ],
  [
    'question',
    (turn) => {
      const id = turn.id('q');
      turn.emit({ type: 'ask_question', id, prompt: 'Which color do you prefer?', options: ['red', 'green', 'blue'] });
      turn.wait({
        kind: 'question',
        id,
        resolve: (answers) => {
          turn.reply(answers === null ? 'Question rejected.' : `You answered: ${answers.flat().join(', ')}`);
          turn.done();
        },
      });
    },
  ],
  [
    'error',
    (turn) => {
      turn.emit({ type: 'failure', message: 'mock error requested', code: 'mock_error' });
      turn.done();
    },
  ],
  [
    'unparsed',
    (turn) => {
      turn.raw('this line is not JSON {');
      turn.reply('Printed one unparsable line.');
      turn.done();
    },
  ],
  [
    'end',
    (turn) => {
      turn.reply('Goodbye.');
      turn.done();
      turn.io.write({ type: 'bye' });
      turn.io.exit(0);
    },
  ],
  [
    'crash',
    (turn, arg) => {
      const n = count(arg, 5, 0, 10000);
      turn.stop();
      turn.io.exit(3, Array.from({ length: n }, (_, i) => `mock: fatal line ${i + 1}\n`).join(''));
    },
  ],
  [
    'slow',
    (turn, arg) => {
      const n = count(arg, 10, 1, 10000);
      turn.start();
      /** @param {number} i */
      const tick = (i) => {
        turn.chunk(`tick ${i}\n`);
        if (i < n) return turn.later(100, () => tick(i + 1));
        turn.end({ final: true });
        turn.done();
      };
      tick(1);
    },
  ],
  [
    'spend',
    (turn, arg) => {
      const [n = '', input = '', output = ''] = arg.split(/\s+/);
      spend(turn, count(n, 3, 1, 100), count(input, 100, 0, 1_000_000), count(output, 20, 0, 1_000_000));
    },
  ],
  [
    'flood',
    (turn, arg) => {
      const [n = '', mode = '', rate = ''] = arg.split(/\s+/);
      void flood(turn, count(n, 1000, 1, 1000000), mode.toLowerCase() === 'stamped', count(rate, 0, 0, 10_000_000));
    },
  ],
]);

/**
 * Single-digit chunks keep the final message_end line small even for a million chunks. Stamped
 * chunks carry the wall-clock time (ms) at which the mock wrote them, `@<ms>;`, so a reader on the
 * same machine can measure the latency the daemon adds (npm run bench). A rate (chunks per second,
 * 0 = as fast as possible) paces the flood, to measure latency below saturation.
 * @param {Turn} turn @param {number} n @param {boolean} stamped @param {number} rate
 */
async function flood(turn, n, stamped, rate) {
  turn.start();
  const started = performance.now();
  for (let i = 1; i <= n && turn.active; i++) {
    if (rate > 0) {
      const due = started + (i * 1000) / rate;
      if (due - performance.now() >= 1) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
    }
    const chunk = stamped ? `@${(performance.timeOrigin + performance.now()).toFixed(3)};` : String(i % 10);
    if (!turn.chunk(chunk)) await turn.io.drain();
  }
  turn.end({ final: true });
  turn.done();
}

/**
 * A turn of `steps` steps, each a message and the `usage` of its "model call" (input tokens, a
 * quarter of them cache reads, and output tokens). After every step but the last the mock waits
 * for the daemon's `continue` (`wait: true`): where a budget pauses it. The turn's total ends it.
 * @param {Turn} turn @param {number} steps @param {number} input @param {number} output
 */
function spend(turn, steps, input, output) {
  const cached = Math.floor(input / 4);
  /** @param {number} i */
  const step = (i) => {
    if (!turn.active) return;
    turn.say(`Step ${i} of ${steps}.`, { final: i === steps });
    const last = i === steps;
    turn.emit({ type: 'usage', input_tokens: input, output_tokens: output, cache_read_input_tokens: cached, ...(last ? {} : { wait: true }) });
    if (!last) return turn.wait({ kind: 'step', resolve: () => step(i + 1) });
    turn.done('completed', { input_tokens: input * steps, output_tokens: output * steps, cache_read_input_tokens: cached * steps });
  };
  step(1);
}

/** @param {Turn} turn @param {string} text the prompt as sent */
export function runCommand(turn, text) {
  const trimmed = text.trim();
  const word = /^Reply with exactly the single word (\S+?)\.?$/i.exec(trimmed);
  if (word !== null) return turn.reply(word[1] ?? ''), turn.done();
  if (/^Answer briefly and include your reasoning\.?$/i.test(trimmed)) return reasoning(turn);
  const first = trimmed.split(/\s/, 1)[0] ?? '';
  const command = COMMANDS.get(first.toLowerCase());
  if (command !== undefined) return command(turn, trimmed.slice(first.length).trim(), text);
  turn.reply(trimmed === '' ? '(empty prompt)' : text);
  turn.done();
}
