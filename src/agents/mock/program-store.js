// The mock agent's own session store, as a real agent keeps one: one transcript file per native
// session id, so a later process can resume the conversation (`--resume <id>`) the way the daemon
// resumes Claude, Codex, OpenCode and Amp after a restart.
//
//   where:  $MOCK_AGENT_HOME/sessions/<id>.jsonl, MOCK_AGENT_HOME defaulting to
//           ${XDG_STATE_HOME:-$HOME/.local/state}/agentwire-mock
//   lines:  {"type":"session","session","model","cwd"}   first line, written when the session starts
//           {"type":"prompt","text"}                     when a prompt arrives, before any answer
//           {"type":"steer","text"}                      a message given to the running turn
//           {"type":"id","id"}                           each id the mock hands out (msg_3, call_1 …)
//           {"type":"reply","id","text","interrupted"?} each assistant message, when it ends
//           {"type":"done","reason"}                     when the turn ends
//
// Every line is one synchronous append of a whole line, so a crash (even SIGKILL) mid-turn leaves
// the earlier lines intact; a torn last line is skipped when the file is read back.
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Texts are kept to this many characters: a `flood` reply must not grow the file by megabytes. */
export const MAX_TEXT_CHARS = 2000;
/** `history` lists at most this many of the latest prompts; older ones are counted, not kept. */
export const MAX_PROMPTS_KEPT = 100;
/** Session ids are file names: nothing that could climb out of the sessions directory. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** @param {NodeJS.ProcessEnv} env */
export function sessionsDir(env) {
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(env.MOCK_AGENT_HOME || join(state, 'agentwire-mock'), 'sessions');
}

/** @param {string} text */
function capped(text) {
  return text.length <= MAX_TEXT_CHARS ? text : `${text.slice(0, MAX_TEXT_CHARS)}… [${text.length} chars]`;
}

export class Transcript {
  /** Prompts of this session so far, resumed ones included. */
  turns = 0;
  /** The latest prompts (at most MAX_PROMPTS_KEPT), oldest first. */
  /** @type {string[]} */
  recent = [];
  /**
   * The highest number handed out per id prefix. A resumed process goes on from here, so native
   * ids stay unique within the native session, as a real agent's are: the daemon maps item ids
   * by native id, and a second `msg_1` would be taken for the first one. Each id is written as it
   * is handed out, so even a turn killed halfway leaves no id to be handed out twice.
   * @type {Record<string, number>}
   */
  highest = {};

  /**
   * @param {string} id the native session id
   * @param {number | null} fd null: nothing is written (the store could not be opened or written)
   * @param {(message: string) => void} complain
   */
  constructor(id, fd, complain) {
    this.id = id;
    this.fd = fd;
    this.complain = complain;
  }

  /**
   * A new session's transcript. A store that cannot be written does not stop the mock (it is a
   * demo agent and must run in a read-only sandbox); it says so once, and the session simply
   * cannot be resumed.
   * @param {string} dir @param {string} id @param {{ model: string, cwd: string }} meta
   * @param {(message: string) => void} complain
   */
  static create(dir, id, meta, complain) {
    let fd = null;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      fd = openSync(join(dir, `${id}.jsonl`), 'wx', 0o600);
    } catch (err) {
      complain(`cannot keep a transcript in ${dir}: ${/** @type {Error} */ (err).message}; this session cannot be resumed`);
    }
    const transcript = new Transcript(id, fd, complain);
    transcript.append({ type: 'session', session: id, model: meta.model, cwd: meta.cwd });
    return transcript;
  }

  /**
   * An earlier session, to continue under the same id.
   * @param {string} dir @param {string} id @param {(message: string) => void} complain
   * @returns {Transcript | string} the transcript, or why there is none
   */
  static resume(dir, id, complain) {
    if (!SESSION_ID.test(id)) return 'not a mock session id';
    const path = join(dir, `${id}.jsonl`);
    let text;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      return code === 'ENOENT' ? `no transcript at ${path}` : `cannot read ${path}: ${/** @type {Error} */ (err).message}`;
    }
    const lines = text.split('\n').flatMap((line) => {
      try {
        const value = JSON.parse(line);
        return typeof value === 'object' && value !== null ? [/** @type {Record<string, unknown>} */ (value)] : [];
      } catch {
        return []; // a line torn by a crash, or the empty string after the last newline
      }
    });
    const header = lines[0];
    if (header?.type !== 'session' || header.session !== id) return `${path} is not a transcript of session ${id}`;
    let fd;
    try {
      fd = openSync(path, 'a');
    } catch (err) {
      return `cannot append to ${path}: ${/** @type {Error} */ (err).message}`;
    }
    const transcript = new Transcript(id, fd, complain);
    // A crash mid-write can leave a line without its newline: end it, so the next line stays whole.
    if (text !== '' && !text.endsWith('\n')) transcript.write('\n');
    for (const line of lines) {
      if ((line.type === 'prompt' || line.type === 'steer') && typeof line.text === 'string') transcript.remember(line.text);
      const id = line.type === 'id' && typeof line.id === 'string' ? /^([a-z]+)_(\d+)$/.exec(line.id) : null;
      if (id !== null) transcript.highest[id[1] ?? ''] = Math.max(transcript.highest[id[1] ?? ''] ?? 0, Number(id[2]));
    }
    return transcript;
  }

  /**
   * A fork of session `from` under the new id `id` (`--fork`): a copy of its transcript up to the
   * end of its `turns`-th turn (all of it when null), so the new session remembers that much.
   * @param {string} dir @param {string} from @param {string} id @param {number | null} turns
   * @param {(message: string) => void} complain
   * @returns {Transcript | string} the new transcript, or why there is none
   */
  static fork(dir, from, id, turns, complain) {
    const source = Transcript.resume(dir, from, complain);
    if (typeof source === 'string') return source;
    source.close();
    const lines = readFileSync(join(dir, `${from}.jsonl`), 'utf8').split('\n').filter((l) => l !== '');
    const kept = [];
    let done = 0;
    for (const line of lines.slice(1)) {
      if (turns !== null && done >= turns) break;
      kept.push(line);
      if (/^\{"type":"done"/.test(line)) done++;
    }
    if (turns !== null && done < turns) return `session ${from} has ${done} finished turns, not ${turns}`;
    const header = JSON.parse(lines[0] ?? '{}');
    const transcript = Transcript.create(dir, id, { model: header.model, cwd: header.cwd }, complain);
    if (kept.length > 0) transcript.write(kept.join('\n') + '\n');
    transcript.append({ type: 'forked', from, turns: done });
    const copy = Transcript.resume(dir, id, complain);
    transcript.close();
    return copy;
  }

  /** @param {string} text */
  steer(text) {
    this.remember(capped(text));
    this.append({ type: 'steer', text: capped(text) });
  }

  /** @param {string} text */
  prompt(text) {
    this.remember(capped(text));
    this.append({ type: 'prompt', text: capped(text) });
  }

  /** @param {string} id */
  handedOut(id) {
    this.append({ type: 'id', id });
  }

  /** @param {string} id @param {string} text @param {boolean} interrupted */
  reply(id, text, interrupted) {
    this.append({ type: 'reply', id, text: capped(text), ...(interrupted ? { interrupted: true } : {}) });
  }

  /** @param {'completed' | 'interrupted'} reason */
  done(reason) {
    this.append({ type: 'done', reason });
  }

  close() {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  /** @param {string} text */
  remember(text) {
    this.turns += 1;
    this.recent.push(text);
    if (this.recent.length > MAX_PROMPTS_KEPT) this.recent.shift();
  }

  /** @param {Record<string, unknown>} record */
  append(record) {
    this.write(JSON.stringify(record) + '\n');
  }

  /** @param {string} text */
  write(text) {
    if (this.fd === null) return;
    const bytes = Buffer.from(text);
    try {
      // A short write only happens when the disk is full; treat it like the error it is.
      if (writeSync(this.fd, bytes) < bytes.length) throw new Error('short write (disk full?)');
    } catch (err) {
      // A full disk: keep answering, but stop writing, so no later line lands after a torn one.
      this.complain(`transcript of ${this.id} no longer written: ${/** @type {Error} */ (err).message}`);
      this.close();
    }
  }
}
