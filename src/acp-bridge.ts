// The stdio side of `agentwire acp` (acp-command.ts): newline-delimited JSON-RPC from an editor on
// stdin, relayed frame for frame to a daemon's GET /v1/acp WebSocket, whose frames go to stdout.
// The ACP mapping is all in the daemon (src/acp-server/); the bridge only keeps what it needs to
// survive a cut without the editor noticing (acp-bridge-resume.ts; docs/acp-server.md, "Resume").
// This file is the socket and the editor's lines: while no daemon answers (not up yet, or gone) it
// holds the editor's messages and retries, for `waitMs`; then it gives up with one error. Its stdin
// closing is a normal close of the WebSocket: the daemon ends the sessions made through it (unless
// `keepSessions`: session/new then carries `_meta.agentwire.keep`).
import { WebSocket } from 'ws';
import { isInternal, ResumeBook, type Message } from './acp-bridge-resume.js';
import { readLines } from './process/line-reader.js';
import { isObject } from './util/is-object.js';

export interface BridgeOptions {
  /** ws:// or wss:// URL of GET /v1/acp, with `?agent=` if any. */
  url: string;
  token: string | undefined;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  log: (line: string) => void;
  /** How long the daemon may stay unreachable (at start or after a cut) before the bridge gives up. */
  waitMs?: number;
  /** Sessions the editor makes outlive it (`_meta.agentwire.keep` on session/new). */
  keepSessions?: boolean;
}

/** The default of `waitMs`: a daemon started beside the editor has this long to come up. */
export const DEFAULT_WAIT_MS = 60_000;

/** Messages from the editor held while the daemon is unreachable. */
const MAX_QUEUED = 1000;
/** An editor line longer than this is refused (frames on the daemon are bounded too). */
const MAX_LINE = 16 * 1024 * 1024;

export class AcpBridge {
  private ws: WebSocket | undefined;
  private open = false;
  private stopped = false;
  private backoffMs = 250;
  /** Editor messages held while the daemon is unreachable, noted as in flight once sent. */
  private readonly queue: { text: string; message: Message | undefined }[] = [];
  /** Since when no connection is open (undefined while one is). */
  private unreachableSince: number | undefined = Date.now();
  private waitingSaid = false;
  private readonly book: ResumeBook;
  /** Resolves when the editor closed stdin, or the daemon refused the bridge (exit code 1). */
  readonly done: Promise<void>;
  private refused!: () => void;

  constructor(private readonly options: BridgeOptions) {
    this.book = new ResumeBook({ toEditor: (message) => this.toEditor(message), log: options.log, keepSessions: options.keepSessions === true });
    const ended = readLines(options.stdin as never, MAX_LINE, ({ text, truncated }) => this.fromEditor(text, truncated));
    this.done = Promise.race([ended, new Promise<void>((resolve) => (this.refused = resolve))]).then(() => this.stop());
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close(1000, 'the editor closed stdin');
  }

  private connect(): void {
    const headers = this.options.token ? { authorization: `Bearer ${this.options.token}` } : undefined;
    const ws = new WebSocket(this.options.url, { ...(headers ? { headers } : {}), maxPayload: MAX_LINE });
    this.ws = ws;
    ws.on('open', () => {
      this.open = true;
      this.unreachableSince = undefined;
      this.waitingSaid = false;
      this.backoffMs = 250;
      for (const message of this.book.resumeMessages()) ws.send(JSON.stringify(message));
      for (const { text, message } of this.queue.splice(0)) this.sendNow(text, message);
    });
    ws.on('message', (data) => this.book.fromDaemon(String(data)));
    ws.on('unexpected-response', (_req, res) => {
      this.options.log(`agentwire acp: the daemon refused the connection: HTTP ${res.statusCode}${res.statusCode === 401 ? ' (wrong or missing token: --token-file)' : ''}`);
      res.resume();
      this.stopped = true;
      process.exitCode = 1;
      this.refused();
    });
    ws.on('error', (err) => {
      if (this.open || this.waitingSaid || this.stopped) return;
      this.waitingSaid = true;
      this.options.log(`agentwire acp: cannot reach ${this.options.url} (${err.message}); waiting up to ${Math.round(this.waitMs / 1000)} s for the daemon`);
    });
    ws.on('close', () => this.cut());
  }

  /** The connection ended: keep what can be resumed, answer what cannot, and reconnect. */
  private cut(): void {
    const wasOpen = this.open;
    this.open = false;
    if (this.stopped) return;
    if (wasOpen) this.options.log('agentwire acp: the connection to the daemon was cut; reconnecting');
    this.unreachableSince ??= Date.now();
    if (Date.now() - this.unreachableSince >= this.waitMs) return this.giveUp();
    this.book.cut();
    const delay = Math.min(this.backoffMs, Math.max(0, this.unreachableSince + this.waitMs - Date.now()));
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
    setTimeout(() => this.connect(), delay);
  }

  private get waitMs(): number {
    return this.options.waitMs ?? DEFAULT_WAIT_MS;
  }

  /** No daemon within the wait: one line on stderr, an error for each request held, exit code 1. */
  private giveUp(): void {
    this.stopped = true;
    const message = `No agentwire daemon answered at ${this.options.url} within ${Math.round(this.waitMs / 1000)} s (start one with \`agentwire server\`, or point --url at one).`;
    this.options.log(`agentwire acp: ${message} Giving up.`);
    const held = [...this.queue.splice(0).map((q) => q.message?.id), ...this.book.abandon()];
    for (const id of held) if (id !== undefined && !isInternal(id)) this.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message } });
    process.exitCode = 1;
    this.refused();
  }

  private fromEditor(text: string, truncated: boolean): void {
    if (truncated) return this.toEditor({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: a line over ${MAX_LINE} bytes` } });
    let message: Message | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObject(parsed)) message = parsed as Message;
    } catch {
      // Sent on as it is: the daemon answers what it cannot parse.
    }
    if (message) {
      const rewritten = this.book.noteEditorMessage(message);
      if (rewritten === null) return;
      text = rewritten ?? text;
    }
    if (this.open) this.sendNow(text, message);
    else if (this.queue.length < MAX_QUEUED) this.queue.push({ text, message });
    else if (message?.id !== undefined) this.toEditor({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'The agentwire daemon is unreachable and the bridge holds no more messages.' } });
  }

  /** Sends to the daemon; an editor request is in flight from now on (a held one never was). */
  private sendNow(text: string, message: Message | undefined): void {
    this.book.sent(message);
    this.ws!.send(text);
  }

  private toEditor(message: object): void {
    const ok = this.options.stdout.write(`${JSON.stringify(message)}\n`);
    // An editor that does not read stops the daemon's frames here, and the daemon's log cursor there.
    if (!ok && this.ws) {
      const ws = this.ws;
      ws.pause();
      this.options.stdout.once('drain', () => ws.resume());
    }
  }
}
