// One turn of the mock agent: the only place that writes message lines, so the
// start → text… → end pattern, the per-process id counters and interrupt handling hold for every
// command without each command having to get them right.

/** @typedef {import('./native.js').MockOut} MockOut */
/** @typedef {import('./native.js').MockPart} MockPart */
/** @typedef {{ path: string, mime?: string | undefined }} Attachment */
/** @typedef {'msg' | 'call' | 'res' | 'perm' | 'q' | 'prog' | 'art'} IdPrefix */
/** @typedef {'once' | 'always' | 'reject'} PermissionReply */
/**
 * @typedef {{ kind: 'permission', id: string, resolve: (reply: PermissionReply) => void }
 *   | { kind: 'question', id: string, resolve: (answers: string[][] | null) => void }
 *   | { kind: 'step', resolve: () => void }} Pending
 */
/**
 * What outlives a turn: the process's id counters, the "always" permission grants, and the
 * session's transcript on disk (what a resumed process reads back).
 * @typedef {{
 *   cwd: string,
 *   counters: Record<IdPrefix, number>,
 *   alwaysAllowed: Set<string>,
 *   transcript: import('./program-store.js').Transcript,
 * }} MockSession
 */
/**
 * The process's output side; `write` returns false when stdout wants the caller to wait.
 * @typedef {{
 *   write: (line: MockOut) => boolean,
 *   raw: (text: string) => boolean,
 *   drain: () => Promise<void>,
 *   exit: (code: number, stderrText?: string) => void,
 * }} MockIo
 */
/**
 * @typedef {{ role?: 'assistant' | 'system', before?: MockPart[], after?: MockPart[], final?: boolean }} SayOptions
 */

/** @param {import('./program-store.js').Transcript} transcript @returns {MockSession} */
export function newSession(transcript) {
  const from = (/** @type {IdPrefix} */ prefix) => transcript.highest[prefix] ?? 0;
  return {
    cwd: process.cwd(),
    // A resumed session goes on counting where its earlier processes stopped.
    counters: { msg: from('msg'), call: from('call'), res: from('res'), perm: from('perm'), q: from('q'), prog: from('prog'), art: from('art') },
    alwaysAllowed: new Set(),
    transcript,
  };
}

/** @param {Attachment} a @returns {MockPart} */
function attachmentPart(a) {
  if (a.mime !== undefined && a.mime.startsWith('image/')) return { kind: 'picture', path: a.path, mime: a.mime };
  return { kind: 'file', path: a.path, op: 'read' };
}

export class Turn {
  /** Once false, every write is dropped, so a late timer or loop cannot leak into the next turn. */
  active = true;
  /** @type {{ id: string, role: 'assistant' | 'system', text: string } | null} */
  open = null;
  /** @type {Pending | null} */
  pending = null;
  /** @type {Set<NodeJS.Timeout>} */
  timers = new Set();
  /** @type {Set<() => void>} */
  aborts = new Set();

  /**
   * @param {MockSession} session
   * @param {MockIo} io
   * @param {Attachment[]} attachments
   * @param {() => void} onEnd called once, when the turn ends by done, crash or exit
   */
  constructor(session, io, attachments, onEnd) {
    this.session = session;
    this.io = io;
    this.attachments = attachments;
    this.onEnd = onEnd;
  }

  /** @param {IdPrefix} prefix */
  id(prefix) {
    this.session.counters[prefix] += 1;
    const id = `${prefix}_${this.session.counters[prefix]}`;
    this.session.transcript.handedOut(id);
    return id;
  }

  /** @param {MockOut} line @returns {boolean} false: wait for drain before writing more */
  emit(line) {
    return this.active ? this.io.write(line) : true;
  }

  /** @param {string} text */
  raw(text) {
    if (this.active) this.io.raw(text);
  }

  /** @param {'assistant' | 'system'} [role] */
  start(role = 'assistant') {
    const id = this.id('msg');
    this.open = { id, role, text: '' };
    this.emit({ type: 'message_start', id, role });
    return id;
  }

  /** @param {string} chunk */
  chunk(chunk) {
    if (this.open === null || !this.active) return true;
    this.open.text += chunk;
    return this.emit({ type: 'text', id: this.open.id, chunk });
  }

  /** @param {SayOptions} [options] */
  end({ before = [], after = [], final = false } = {}) {
    const open = this.open;
    if (open === null) return '';
    this.open = null;
    const extra = final ? this.attachments.map(attachmentPart) : [];
    const parts = [...before, { kind: /** @type {const} */ ('text'), value: open.text }, ...after, ...extra];
    this.emit({ type: 'message_end', id: open.id, role: open.role, parts });
    if (open.role === 'assistant' && this.active) this.session.transcript.reply(open.id, open.text, false);
    return open.id;
  }

  /**
   * A whole message at once. The final message of a turn carries the prompt's attachments.
   * @param {string | string[]} chunks
   * @param {SayOptions} [options]
   */
  say(chunks, options = {}) {
    this.start(options.role);
    for (const c of typeof chunks === 'string' ? [chunks] : chunks) this.chunk(c);
    return this.end(options);
  }

  /** @param {string | string[]} chunks @param {SayOptions} [options] */
  reply(chunks, options = {}) {
    return this.say(chunks, { ...options, final: true });
  }

  /** @param {number} ms @param {() => void} fn */
  later(ms, fn) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.active) fn();
    }, ms);
    this.timers.add(timer);
  }

  /**
   * Runs `fn` if the turn is interrupted or stopped before the returned function is called: how
   * work outside the turn (a tool's child process) is cancelled with it. On interrupt the turn is
   * still active while `fn` runs, so it may report; on stop (crash, exit) it may not.
   * @param {() => void} fn
   */
  onAbort(fn) {
    this.aborts.add(fn);
    return () => void this.aborts.delete(fn);
  }

  abort() {
    const fns = [...this.aborts];
    this.aborts.clear();
    for (const fn of fns) fn();
  }

  /** @param {Pending} pending */
  wait(pending) {
    this.pending = pending;
  }

  /**
   * @param {'completed' | 'interrupted'} [reason]
   * @param {{ input_tokens: number, output_tokens: number, cache_read_input_tokens?: number }} [usage] the turn's total, if it reports one
   */
  done(reason = 'completed', usage = undefined) {
    if (!this.active) return;
    this.emit(usage ? { type: 'done', reason, usage } : { type: 'done', reason });
    this.session.transcript.done(reason);
    this.stop();
  }

  /**
   * A message for this turn (steer): kept in the transcript, and answered where the turn is, so a
   * reader sees where it went in: a line in the message being written, or a message of its own.
   * @param {string} text
   */
  steer(text) {
    if (!this.active) return;
    this.session.transcript.steer(text);
    const line = `[steered: ${text}]\n`;
    if (this.open !== null) this.chunk(line);
    else this.say(`Noted while working: ${JSON.stringify(text)}`);
  }

  interrupt() {
    if (!this.active) return;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pending = null;
    this.abort();
    if (this.open !== null) {
      const { id, role, text } = this.open;
      this.open = null;
      this.emit({ type: 'message_end', id, role, parts: [{ kind: 'text', value: text }], interrupted: true });
      if (role === 'assistant') this.session.transcript.reply(id, text, true);
    }
    this.done('interrupted');
  }

  /** Ends the turn without `done` (crash, end); later writes from this turn are dropped. */
  stop() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pending = null;
    this.active = false;
    this.abort();
    this.onEnd();
  }
}
