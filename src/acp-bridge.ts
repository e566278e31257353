// The stdio side of `agentwire acp` (acp-command.ts): newline-delimited JSON-RPC from an editor on
// stdin, relayed frame for frame to a daemon's GET /v1/acp WebSocket, whose frames go to stdout.
// The ACP mapping is all in the daemon (src/acp-server/); the bridge only keeps what it needs to
// survive a cut without the editor noticing (docs/acp-server.md, "Resume"):
//   - the last sequence seen per session (`_meta.agentwire.sequence` on every update), so that after
//     reconnecting it sends initialize again and session/load with `_meta.agentwire.after_sequence`,
//     swallowing their answers: the editor gets the updates it missed, once;
//   - the session/prompt requests in flight: a prompt cut off from its answer is answered by the
//     bridge when its turn's turn.ended (an `_agentwire/event`) arrives on the resumed stream;
//     other requests in flight are answered with an error to retry, as their answer is lost;
//   - the daemon's own requests (permissions) under ids of the bridge: at a cut they are withdrawn
//     from the editor ($/cancel_request) and a late answer is dropped, since the new connection
//     asks again whatever is still open.
// It asks the daemon for `_agentwire/event` (it needs turn.ended to answer a prompt across a cut)
// and passes them on only to an editor that asked for them too. While no daemon answers (not up
// yet, or gone) it holds the editor's messages and retries, for `waitMs`; then it gives up with
// one error. Its stdin closing is a normal close of the WebSocket: the daemon ends the sessions
// made through it (unless `keepSessions`: session/new then carries `_meta.agentwire.keep`).
import { WebSocket } from 'ws';
import { promptOutcome } from './acp-server/requests.js';
import { readLines } from './process/line-reader.js';
import type { TurnEndedData } from './schema/events.js';
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

type Message = Record<string, unknown> & { id?: string | number; method?: string; params?: unknown };

/** Messages from the editor held while the daemon is unreachable. */
const MAX_QUEUED = 1000;
/** An editor line longer than this is refused (frames on the daemon are bounded too). */
const MAX_LINE = 16 * 1024 * 1024;
const INTERNAL = 'agentwire-bridge:';

export class AcpBridge {
  private ws: WebSocket | undefined;
  private open = false;
  private generation = 0;
  private stopped = false;
  private backoffMs = 250;
  /** Editor messages held while the daemon is unreachable, noted as in flight once sent. */
  private readonly queue: { text: string; message: Message | undefined }[] = [];
  /** Since when no connection is open (undefined while one is). */
  private unreachableSince: number | undefined = Date.now();
  private waitingSaid = false;
  private initialize: unknown;
  /** The editor asked for `_agentwire/event` itself. */
  private editorWantsEvents = false;
  /** Session id → the message of the last `error` event, for a prompt answered across a cut. */
  private readonly lastError = new Map<string, string>();
  /** Session id → the last sequence the editor has been sent. */
  private readonly sessions = new Map<string, number>();
  /** The editor's requests the daemon has not answered: id → method and session. */
  private readonly inflight = new Map<string | number, { method: string; sessionId?: string }>();
  /** Prompts whose connection was cut: answered at their session's next turn.ended. */
  private readonly orphans = new Map<string, (string | number)[]>();
  /** Daemon requests under the bridge's ids → the connection and id they came with. */
  private readonly daemonRequests = new Map<number, { generation: number; id: string | number }>();
  private nextId = 0;
  /** Resolves when the editor closed stdin, or the daemon refused the bridge (exit code 1). */
  readonly done: Promise<void>;
  private refused!: () => void;

  constructor(private readonly options: BridgeOptions) {
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
      if (this.generation > 0) this.resume();
      for (const { text, message } of this.queue.splice(0)) this.sendNow(text, message);
    });
    ws.on('message', (data) => this.fromDaemon(String(data)));
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
    this.generation++;
    for (const [id, request] of this.inflight) {
      if (request.method === 'session/prompt' && request.sessionId) {
        this.orphans.set(request.sessionId, [...(this.orphans.get(request.sessionId) ?? []), id]);
      } else if (typeof id !== 'string' || !id.startsWith(INTERNAL)) {
        this.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message: 'The connection to the agentwire daemon was cut before it answered; send the request again.' } });
      }
    }
    this.inflight.clear();
    // The daemon's open requests (permissions) died with their connection: withdrawn from the
    // editor; the resumed connection asks again those still open.
    for (const [id, origin] of this.daemonRequests) {
      if (origin.generation === this.generation - 1) this.toEditor({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
    }
    this.daemonRequests.clear();
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
    const held = [...this.queue.splice(0).map((q) => q.message?.id), ...this.inflight.keys(), ...[...this.orphans.values()].flat()];
    for (const id of held) if (id !== undefined && !(typeof id === 'string' && id.startsWith(INTERNAL))) this.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message } });
    this.inflight.clear();
    this.orphans.clear();
    process.exitCode = 1;
    this.refused();
  }

  /** On a new connection: initialize as the editor did, then load each session after what it has. */
  private resume(): void {
    const send = (method: string, params: unknown) => {
      const id = `${INTERNAL}${++this.nextId}`;
      this.inflight.set(id, { method });
      this.ws!.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    };
    if (this.initialize !== undefined) send('initialize', this.initialize);
    for (const [sessionId, after] of this.sessions) {
      const id = `${INTERNAL}${++this.nextId}`;
      this.inflight.set(id, { method: 'session/load', sessionId });
      this.ws!.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'session/load', params: { sessionId, cwd: process.cwd(), mcpServers: [], _meta: { agentwire: { after_sequence: after } } } }));
    }
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
      const rewritten = this.noteEditorMessage(message);
      if (rewritten === null) return;
      text = rewritten ?? text;
    }
    if (this.open) this.sendNow(text, message);
    else if (this.queue.length < MAX_QUEUED) this.queue.push({ text, message });
    else if (message?.id !== undefined) this.toEditor({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'The agentwire daemon is unreachable and the bridge holds no more messages.' } });
  }

  /** Sends to the daemon; an editor request is in flight from now on (a held one never was). */
  private sendNow(text: string, message: Message | undefined): void {
    if (message && typeof message.method === 'string' && message.id !== undefined) {
      const params = isObject(message.params) ? message.params : {};
      const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
      this.inflight.set(message.id, { method: message.method, ...(sessionId ? { sessionId } : {}) });
    }
    this.ws!.send(text);
  }

  /** Remembers what a resume needs; returns the text to send when the message is rewritten, null to drop it. */
  private noteEditorMessage(message: Message): string | null | undefined {
    const params = isObject(message.params) ? message.params : {};
    if (typeof message.method === 'string' && message.id !== undefined) {
      const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
      if ((message.method === 'session/load' || message.method === 'session/resume') && sessionId) this.sessions.set(sessionId, 0);
      if (message.method === 'session/close' && sessionId) this.sessions.delete(sessionId);
      if (message.method === 'initialize') {
        this.initialize = withEventsAsked(params, (asked) => (this.editorWantsEvents = asked));
        return JSON.stringify({ ...message, params: this.initialize });
      }
      if (message.method === 'session/new' && this.options.keepSessions) return JSON.stringify({ ...message, params: withMeta(params, { keep: true }) });
      return undefined;
    }
    // An answer to a request of the daemon's, under the bridge's id.
    if (message.method === undefined && typeof message.id === 'number' && this.daemonRequests.has(message.id)) {
      const origin = this.daemonRequests.get(message.id)!;
      this.daemonRequests.delete(message.id);
      if (origin.generation !== this.generation) return null; // its connection is gone; the new one asks again
      return JSON.stringify({ ...message, id: origin.id });
    }
    return undefined;
  }

  private fromDaemon(text: string): void {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    const params = isObject(message.params) ? message.params : {};
    if (message.method === undefined && message.id !== undefined) {
      const request = this.inflight.get(message.id);
      this.inflight.delete(message.id);
      if (request?.method === 'session/load' && request.sessionId) this.loaded(request.sessionId, message.result);
      if (request?.method === 'session/new' && isObject(message.result) && typeof message.result.sessionId === 'string') this.sessions.set(message.result.sessionId, 0);
      if (typeof message.id === 'string' && message.id.startsWith(INTERNAL)) {
        if (message.error) this.options.log(`agentwire acp: resuming (${request?.method ?? 'request'}) failed: ${JSON.stringify(message.error)}`);
        return;
      }
      return this.toEditor(message);
    }
    if (message.method !== undefined && message.id !== undefined) {
      const id = ++this.nextId;
      this.daemonRequests.set(id, { generation: this.generation, id: message.id });
      return this.toEditor({ ...message, id });
    }
    const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
    if (sessionId) {
      const event = isObject(params.event) ? params.event : undefined;
      const meta = isObject(params._meta) && isObject(params._meta.agentwire) ? params._meta.agentwire : {};
      const sequence = typeof meta.sequence === 'number' ? meta.sequence : undefined;
      if (sequence !== undefined && sequence > (this.sessions.get(sessionId) ?? 0)) this.sessions.set(sessionId, sequence);
      if (event?.type === 'error' && isObject(event.data) && typeof event.data.message === 'string') this.lastError.set(sessionId, event.data.message);
      if (event?.type === 'turn.ended' && sequence !== undefined) this.answerOrphan(sessionId, event.data as TurnEndedData, sequence);
      if (event?.type === 'turn.started') this.lastError.delete(sessionId);
    }
    if (message.method === '_agentwire/event' && !this.editorWantsEvents) return;
    this.toEditor(message);
  }

  /**
   * A load answers after its replay: a prompt still waiting then, in a session with no turn
   * running, never reached the daemon (the cut came first). It is told to send again.
   */
  private loaded(sessionId: string, result: unknown): void {
    const meta = isObject(result) && isObject(result._meta) && isObject(result._meta.agentwire) ? result._meta.agentwire : {};
    if (meta.status === 'running' || meta.status === 'waiting') return;
    for (const id of this.orphans.get(sessionId) ?? []) {
      this.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message: 'The prompt did not reach the agentwire daemon before the connection was cut; send it again.' } });
    }
    this.orphans.delete(sessionId);
  }

  private answerOrphan(sessionId: string, data: TurnEndedData, sequence: number): void {
    const waiting = this.orphans.get(sessionId);
    const id = waiting?.shift();
    if (id === undefined) return;
    if (waiting!.length === 0) this.orphans.delete(sessionId);
    const outcome = promptOutcome(data, sequence, this.lastError.get(sessionId));
    this.toEditor('error' in outcome ? { jsonrpc: '2.0', id, error: outcome.error.body() } : { jsonrpc: '2.0', id, result: outcome.result });
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

/** `_meta.agentwire` of a request's params with `fields` added. */
function withMeta(params: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(params._meta) ? params._meta : {};
  const agentwire = isObject(meta.agentwire) ? meta.agentwire : {};
  return { ...params, _meta: { ...meta, agentwire: { ...agentwire, ...fields } } };
}

/** initialize's params asking for `_agentwire/event`; `asked` learns whether the editor did. */
function withEventsAsked(params: Record<string, unknown>, asked: (yes: boolean) => void): Record<string, unknown> {
  const caps = isObject(params.clientCapabilities) ? params.clientCapabilities : {};
  const meta = isObject(caps._meta) && isObject(caps._meta.agentwire) ? caps._meta.agentwire : {};
  asked(meta.events === true);
  return { ...params, clientCapabilities: withMeta(caps, { events: true }) };
}
