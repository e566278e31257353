// What the bridge of `agentwire acp` (acp-bridge.ts) keeps about the messages it relays, so that a
// cut of its WebSocket goes unnoticed by the editor (docs/acp-server.md, "Resume"):
//   - the last sequence seen per session (`_meta.agentwire.sequence` on every update), so that after
//     reconnecting it sends initialize again and session/load with `_meta.agentwire.after_sequence`,
//     swallowing their answers: the editor gets the updates it missed, once;
//   - the session/prompt requests in flight: a prompt cut off from its answer is answered here when
//     its turn's turn.ended (an `_agentwire/event`) arrives on the resumed stream; other requests in
//     flight are answered with an error to retry, as their answer is lost;
//   - the daemon's own requests (permissions) under ids of the bridge: at a cut they are withdrawn
//     from the editor ($/cancel_request) and a late answer is dropped, since the new connection
//     asks again whatever is still open.
// It asks the daemon for `_agentwire/event` (turn.ended is what answers a prompt across a cut) and
// passes them on only to an editor that asked for them too. The socket itself, and waiting for a
// daemon, are the bridge's.
import { promptOutcome } from './acp-server/requests.js';
import type { TurnEndedData } from './schema/events.js';
import { isObject } from './util/is-object.js';

export type Message = Record<string, unknown> & { id?: string | number; method?: string; params?: unknown };

/** The prefix of the ids of the bridge's own requests (a resume's initialize and session/load). */
const INTERNAL = 'agentwire-bridge:';

/** A request id of the bridge's own, whose answer the editor never sees. */
export function isInternal(id: unknown): boolean {
  return typeof id === 'string' && id.startsWith(INTERNAL);
}

export interface ResumeBookOptions {
  toEditor: (message: object) => void;
  log: (line: string) => void;
  /** Sessions the editor makes outlive it (`_meta.agentwire.keep` on session/new). */
  keepSessions: boolean;
}

export class ResumeBook {
  /** Counts the connections: a daemon request belongs to the one it came on. */
  private generation = 0;
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

  constructor(private readonly options: ResumeBookOptions) {}

  /** Remembers what a resume needs; returns the text to send when the message is rewritten, null to drop it. */
  noteEditorMessage(message: Message): string | null | undefined {
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

  /** An editor message went to the daemon: a request is in flight from now on (a held one never was). */
  sent(message: Message | undefined): void {
    if (message && typeof message.method === 'string' && message.id !== undefined) {
      const params = isObject(message.params) ? message.params : {};
      const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
      this.inflight.set(message.id, { method: message.method, ...(sessionId ? { sessionId } : {}) });
    }
  }

  /**
   * On a new connection, what to send first: nothing on the first; after a cut, initialize as the
   * editor did, then a load of each session after what it has.
   */
  resumeMessages(): object[] {
    const out: object[] = [];
    if (this.generation === 0) return out;
    if (this.initialize !== undefined) {
      const id = `${INTERNAL}${++this.nextId}`;
      this.inflight.set(id, { method: 'initialize' });
      out.push({ jsonrpc: '2.0', id, method: 'initialize', params: this.initialize });
    }
    for (const [sessionId, after] of this.sessions) {
      const id = `${INTERNAL}${++this.nextId}`;
      this.inflight.set(id, { method: 'session/load', sessionId });
      out.push({ jsonrpc: '2.0', id, method: 'session/load', params: { sessionId, cwd: process.cwd(), mcpServers: [], _meta: { agentwire: { after_sequence: after } } } });
    }
    return out;
  }

  /** The connection was cut (and will be made again): keep what can be resumed, answer what cannot. */
  cut(): void {
    this.generation++;
    for (const [id, request] of this.inflight) {
      if (request.method === 'session/prompt' && request.sessionId) {
        this.orphans.set(request.sessionId, [...(this.orphans.get(request.sessionId) ?? []), id]);
      } else if (!isInternal(id)) {
        this.options.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message: 'The connection to the agentwire daemon was cut before it answered; send the request again.' } });
      }
    }
    this.inflight.clear();
    // The daemon's open requests (permissions) died with their connection: withdrawn from the
    // editor; the resumed connection asks again those still open.
    for (const [id, origin] of this.daemonRequests) {
      if (origin.generation === this.generation - 1) this.options.toEditor({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
    }
    this.daemonRequests.clear();
  }

  /** The bridge gives up: the ids of the requests waiting for an answer (in flight, then cut-off prompts), forgotten. */
  abandon(): (string | number)[] {
    const held = [...this.inflight.keys(), ...[...this.orphans.values()].flat()];
    this.inflight.clear();
    this.orphans.clear();
    return held;
  }

  /** One frame from the daemon, noted and passed on to the editor unless it is the bridge's own. */
  fromDaemon(text: string): void {
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
      if (isInternal(message.id)) {
        if (message.error) this.options.log(`agentwire acp: resuming (${request?.method ?? 'request'}) failed: ${JSON.stringify(message.error)}`);
        return;
      }
      return this.options.toEditor(message);
    }
    if (message.method !== undefined && message.id !== undefined) {
      const id = ++this.nextId;
      this.daemonRequests.set(id, { generation: this.generation, id: message.id });
      return this.options.toEditor({ ...message, id });
    }
    const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
    if (sessionId) this.noteUpdate(sessionId, params);
    if (message.method === '_agentwire/event' && !this.editorWantsEvents) return;
    this.options.toEditor(message);
  }

  /** A session's update or event: its sequence, and what answers a prompt cut off from its turn. */
  private noteUpdate(sessionId: string, params: Record<string, unknown>): void {
    const event = isObject(params.event) ? params.event : undefined;
    const meta = isObject(params._meta) && isObject(params._meta.agentwire) ? params._meta.agentwire : {};
    const sequence = typeof meta.sequence === 'number' ? meta.sequence : undefined;
    if (sequence !== undefined && sequence > (this.sessions.get(sessionId) ?? 0)) this.sessions.set(sessionId, sequence);
    if (event?.type === 'error' && isObject(event.data) && typeof event.data.message === 'string') this.lastError.set(sessionId, event.data.message);
    if (event?.type === 'turn.ended' && sequence !== undefined) this.answerOrphan(sessionId, event.data as TurnEndedData, sequence);
    if (event?.type === 'turn.started') this.lastError.delete(sessionId);
  }

  /**
   * A load answers after its replay: a prompt still waiting then, in a session with no turn
   * running, never reached the daemon (the cut came first). It is told to send again.
   */
  private loaded(sessionId: string, result: unknown): void {
    const meta = isObject(result) && isObject(result._meta) && isObject(result._meta.agentwire) ? result._meta.agentwire : {};
    if (meta.status === 'running' || meta.status === 'waiting') return;
    for (const id of this.orphans.get(sessionId) ?? []) {
      this.options.toEditor({ jsonrpc: '2.0', id, error: { code: -32603, message: 'The prompt did not reach the agentwire daemon before the connection was cut; send it again.' } });
    }
    this.orphans.delete(sessionId);
  }

  private answerOrphan(sessionId: string, data: TurnEndedData, sequence: number): void {
    const waiting = this.orphans.get(sessionId);
    const id = waiting?.shift();
    if (id === undefined) return;
    if (waiting!.length === 0) this.orphans.delete(sessionId);
    const outcome = promptOutcome(data, sequence, this.lastError.get(sessionId));
    this.options.toEditor('error' in outcome ? { jsonrpc: '2.0', id, error: outcome.error.body() } : { jsonrpc: '2.0', id, result: outcome.result });
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
