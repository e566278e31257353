// One ACP client connection, the agent side: JSON-RPC messages in (`receive`), messages out
// through its transport, over the SessionManager. The WebSocket route (src/http/acp.ts) feeds it;
// `agentwire acp` (src/acp-command.ts) is a stdio bridge to that route, so the mapping is written
// once. Per session it follows, it holds a cursor into the log (follower.ts), the pure mapping's
// state (updates.ts), the prompt waiting for its turn.ended and what it asked the client (hitl.ts).
// A connection cut without a close frame leaves its sessions and their turns running for a grace
// period: a client that reconnects resumes with session/load and `_meta.agentwire.after_sequence`
// (docs/acp-server.md, "Resume"). What ends the sessions made over ACP is in lifetime.ts.
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../errors.js';
import { requireDriver, type AgentRegistry } from '../agents/registry.js';
import type { SessionManager } from '../sessions/session-manager.js';
import type { Session } from '../sessions/session.js';
import type { UniversalEvent } from '../schema/events.js';
import { isObject } from '../util/is-object.js';
import { SessionFollower } from './follower.js';
import type { AcpSessionLifetime } from './lifetime.js';
import { askClient, type ClientRequest, type HitlAsk } from './hitl.js';
import { errorResponse, INVALID_PARAMS, isNotification, isRequest, METHOD_NOT_FOUND, parseFrame, RpcError, toRpcError, type RpcId, type RpcMessage, type RpcResponse } from './json-rpc.js';
import { agentwireMeta, createRequest, initializeResult, listEntry, messageRequest, modeState, promptOutcome } from './requests.js';
import { initialUpdateState, mapEvent, type UpdateState } from './updates.js';

export interface AcpTransport {
  send(message: object): void;
  /** The transport holds more than it should: followers stop reading until `drained()`. */
  full(): boolean;
}

export interface AcpConnectionDeps {
  sessions: SessionManager;
  registry: AgentRegistry;
  /** The agent of new sessions (`?agent=`, `--agent`), unless session/new's _meta names one. */
  agent: string;
  logger: FastifyBaseLogger;
  /** Ends the sessions made over ACP when their clients are done with them. */
  lifetime: AcpSessionLifetime;
}

interface Followed {
  session: Session;
  follower: SessionFollower;
  state: UpdateState;
  /** The session/prompt to answer at the first turn.ended after `after`. */
  prompt?: { after: number; answer: (result: unknown) => void; fail: (err: unknown) => void };
  /** Permission and question requests seen and not resolved, by id; asked once live. */
  pending: Map<string, HitlAsk>;
  /** Those asked of the client: the id of our request, while it is unanswered. */
  asked: Map<string, RpcId | undefined>;
  /** The message of the last `error` event of the running turn: what a failed prompt says. */
  error?: string;
}

type Handler = (params: Record<string, unknown>) => Promise<unknown>;

export class AcpConnection {
  private readonly followed = new Map<string, Followed>();
  private readonly outgoing = new Map<RpcId, (response: RpcResponse) => void>();
  private nextId = 0;
  private clientCapabilities: Record<string, unknown> = {};
  /** The client asked for `_agentwire/event` (initialize's `clientCapabilities._meta.agentwire.events`). */
  private wantsEvents = false;
  private closed = false;
  /** How the client went away, once it has (close). */
  private goneForGood = false;
  private readonly handlers: Record<string, Handler> = {
    initialize: (p) => this.initialize(p),
    authenticate: async () => ({}),
    'session/new': (p) => this.newSession(p),
    'session/load': (p) => this.loadSession(p),
    'session/resume': (p) => this.resumeSession(p),
    'session/close': (p) => this.closeSession(p),
    'session/list': (p) => this.listSessions(p),
    'session/prompt': (p) => this.prompt(p),
    'session/set_mode': (p) => this.setMode(p),
  };

  constructor(
    private readonly deps: AcpConnectionDeps,
    private readonly transport: AcpTransport,
  ) {
    requireDriver(deps.registry, deps.agent, 'path.agent');
  }

  /** One frame from the client. */
  receive(text: string): void {
    if (this.closed) return;
    const parsed = parseFrame(text);
    if ('error' in parsed) return this.transport.send(parsed.error);
    const message: RpcMessage = parsed.message;
    if (isRequest(message)) {
      const handler = Object.hasOwn(this.handlers, message.method) ? this.handlers[message.method] : undefined;
      if (!handler) return this.transport.send(errorResponse(message.id, new RpcError(METHOD_NOT_FOUND, `Method not found: ${message.method}`)));
      const params = isObject(message.params) ? message.params : {};
      handler(params).then(
        (result) => this.send({ jsonrpc: '2.0', id: message.id, result: result ?? null }),
        (err: unknown) => this.send(errorResponse(message.id, toRpcError(err))),
      );
      return;
    }
    if (isNotification(message)) {
      if (message.method === 'session/cancel' && isObject(message.params)) this.cancel(message.params);
      return; // other notifications ($/cancel_request, extensions) need nothing from us
    }
    // A response to a request of ours (a permission, a question).
    const answer = this.outgoing.get(message.id!);
    if (answer) {
      this.outgoing.delete(message.id!);
      answer(message);
    }
  }

  /** The transport took what it held: read on. */
  drained(): void {
    for (const f of this.followed.values()) f.follower.pump();
  }

  /**
   * The client went away, `forGood` (a close frame: it will not come back) or cut. Its ACP
   * sessions end now or after the grace period (lifetime.ts); a turn it prompted in a session
   * made otherwise is interrupted when it left for good, and runs on when it was cut.
   */
  close(forGood: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.goneForGood = forGood;
    for (const f of this.followed.values()) {
      f.follower.stop();
      if (forGood && f.prompt && !this.deps.lifetime.owns(f.session.id)) f.session.interrupt().catch(() => {});
    }
    this.deps.lifetime.left(this, forGood);
    this.followed.clear();
    this.outgoing.clear();
  }

  /** A request that took a session over after the client went away (a slow session/new it gave up on) lets go of it at once. */
  private leftAlready(): void {
    if (this.closed) this.deps.lifetime.left(this, this.goneForGood);
  }

  private send(message: object): void {
    if (!this.closed) this.transport.send(message);
  }

  private async initialize(params: Record<string, unknown>): Promise<unknown> {
    if (isObject(params.clientCapabilities)) this.clientCapabilities = params.clientCapabilities;
    const meta = isObject(this.clientCapabilities._meta) ? this.clientCapabilities._meta.agentwire : undefined;
    this.wantsEvents = isObject(meta) && meta.events === true;
    return initializeResult(requireDriver(this.deps.registry, this.deps.agent, 'path.agent'));
  }

  private async newSession(params: Record<string, unknown>): Promise<unknown> {
    const session = await this.deps.sessions.create(undefined, createRequest(params, this.deps.agent));
    this.deps.lifetime.adopt(session.id, this, agentwireMeta(params).keep === true);
    this.leftAlready();
    // The answer goes first; the session's first events follow it (after this tick), unless a
    // request about the session came first and follows it already.
    setImmediate(() => (this.followed.get(session.id) ?? this.follow(session, 0)).follower.pump());
    return { sessionId: session.id, modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { agent: session.request.agent } } };
  }

  /** Replays the stored events after `_meta.agentwire.after_sequence` (default: all), then answers. */
  private async loadSession(params: Record<string, unknown>): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    const after = agentwireMeta(params).after_sequence ?? 0;
    if (typeof after !== 'number' || !Number.isInteger(after) || after < 0) throw new RpcError(INVALID_PARAMS, '_meta.agentwire.after_sequence must be a non-negative integer');
    const followed = this.follow(session, after);
    this.deps.lifetime.attach(session.id, this);
    this.leftAlready();
    await followed.follower.caughtUpNow();
    // A replay with nothing after the cursor sends no event: what is open is asked here.
    if (this.followed.get(session.id) === followed) this.askOpen(followed);
    return { modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { sequence: followed.follower.sequence, agent: session.request.agent, status: session.status } } };
  }

  /** session/resume: session/load without the replay; the client follows from the log's end. */
  private async resumeSession(params: Record<string, unknown>): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    const followed = this.follow(session, session.log.lastSequence, true);
    this.deps.lifetime.attach(session.id, this);
    this.leftAlready();
    this.askOpen(followed);
    return { modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { sequence: followed.follower.sequence, agent: session.request.agent, status: session.status } } };
  }

  /**
   * session/close: ACP says the agent cancels the session's work and frees it. A session made over
   * ACP ends (kept or not); one made otherwise (over HTTP) is only no longer followed here, and a
   * turn this connection prompted in it is interrupted. The prompt waiting here answers `cancelled`.
   */
  private async closeSession(params: Record<string, unknown>): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    const followed = this.followed.get(session.id);
    if (followed) {
      this.followed.delete(session.id);
      followed.follower.stop();
      // What it asked the client about the session is withdrawn: nobody waits for the answer now.
      for (const open of followed.asked.values()) if (open !== undefined && this.outgoing.delete(open)) this.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: open } });
      const prompt = followed.prompt;
      delete followed.prompt;
      if (prompt) prompt.answer({ stopReason: 'cancelled', _meta: { agentwire: { reason: 'session_closed' } } });
      if (prompt && !this.deps.lifetime.owns(session.id)) await session.interrupt().catch(() => {});
    }
    if (this.deps.lifetime.owns(session.id)) await this.deps.lifetime.end(session.id, 'session/close');
    return {};
  }

  private async listSessions(params: Record<string, unknown>): Promise<unknown> {
    const cwd = typeof params.cwd === 'string' ? params.cwd : undefined;
    const sessions = this.deps.sessions.list().filter((s) => cwd === undefined || s.cwd === cwd);
    return { sessions: sessions.map(listEntry) };
  }

  private async prompt(params: Record<string, unknown>): Promise<unknown> {
    const session = this.deps.sessions.get(stringParam(params, 'sessionId'));
    const body = messageRequest(params.prompt);
    const followed = this.followed.get(session.id) ?? this.follow(session, session.log.lastSequence);
    if (followed.prompt) throw new RpcError(INVALID_PARAMS, 'session/prompt: this connection already has a prompt running in the session');
    const after = session.log.lastAppended;
    return new Promise((resolve, reject) => {
      // Answered by onEvent at the turn's turn.ended, after every update of the turn went out.
      const pending = { after, answer: resolve, fail: reject };
      followed.prompt = pending;
      session.send(body).catch((err: unknown) => {
        if (followed.prompt === pending) delete followed.prompt;
        reject(err);
      });
    });
  }

  /** session/cancel → interrupt; a notification, so nothing is answered (no turn, no session). */
  private cancel(params: Record<string, unknown>): void {
    if (typeof params.sessionId !== 'string') return;
    try {
      this.deps.sessions.get(params.sessionId).interrupt().catch(() => {});
    } catch {
      // No such session, or it has ended.
    }
  }

  private async setMode(params: Record<string, unknown>): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    if (params.modeId === session.request.agentMode) return {};
    throw new RpcError(INVALID_PARAMS, `session/set_mode: agentwire sessions keep the mode they were created with ('${session.request.agentMode}'); start a session in mode '${String(params.modeId)}' with session/new and _meta.agentwire.agentMode`, {
      currentModeId: session.request.agentMode,
    });
  }

  /** `open`: take what is waiting for an answer from the session (a resume that starts at `after`). */
  private follow(session: Session, after: number, open = after > 0): Followed {
    this.followed.get(session.id)?.follower.stop();
    const follower = new SessionFollower(session.log, after, {
      event: (event, live) => this.onEvent(followed, event, live),
      full: () => this.transport.full(),
      // The session was deleted or the daemon is stopping: no turn.ended will come.
      closed: () => {
        if (this.followed.get(session.id) === followed) this.followed.delete(session.id);
        followed.prompt?.fail(new ApiError('session_ended', `Session '${session.id}' was deleted, or the daemon is stopping, before the turn ended.`, { sessionId: session.id }));
        delete followed.prompt;
      },
    });
    const followed: Followed = { session, follower, state: initialUpdateState(session.request.title), pending: new Map(), asked: new Map() };
    // A resume starts after its cursor: what is still waiting for an answer may have been asked
    // before it, so it is taken from the session; the replay adds and closes the rest.
    if (open) {
      const requests = session.openRequests();
      for (const data of requests.permissions) followed.pending.set(data.permission_id, { type: 'permission.requested', data });
      for (const data of requests.questions) followed.pending.set(data.question_id, { type: 'question.requested', data });
    }
    this.followed.set(session.id, followed);
    return followed;
  }

  private onEvent(f: Followed, event: UniversalEvent, live: boolean): void {
    const sessionId = f.session.id;
    if (event.type === 'turn.started' && f.prompt && event.sequence > f.prompt.after) f.state = { ...f.state, ownTurn: true };
    const mapped = mapEvent(f.state, event);
    f.state = mapped.state;
    const _meta = { agentwire: { sequence: event.sequence } };
    for (const out of mapped.out) {
      if (out.kind === 'update') this.send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: out.update, _meta } });
      else if (this.wantsEvents) this.send({ jsonrpc: '2.0', method: '_agentwire/event', params: { sessionId, event: out.event, _meta } });
    }
    if (event.type === 'error' && f.prompt && event.sequence > f.prompt.after) f.error = event.data.message;
    if (event.type === 'permission.requested') f.pending.set(event.data.permission_id, event);
    else if (event.type === 'question.requested') f.pending.set(event.data.question_id, event);
    else if (event.type === 'permission.resolved' || event.type === 'question.resolved') {
      const id = event.type === 'permission.resolved' ? event.data.permission_id : event.data.question_id;
      f.pending.delete(id);
      // Answered elsewhere (another client, the policy, a timeout): the client's dialog is withdrawn.
      const open = f.asked.get(id);
      if (open !== undefined && this.outgoing.delete(open)) this.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: open } });
      f.asked.delete(id);
    } else if (event.type === 'turn.ended' && f.prompt && event.sequence > f.prompt.after) {
      const { answer, fail } = f.prompt;
      const outcome = promptOutcome(event.data, event.sequence, f.error);
      delete f.prompt;
      delete f.error;
      if ('error' in outcome) fail(outcome.error);
      else answer(outcome.result);
    }
    // Replayed requests are asked only once the replay has caught up and they are still open.
    if (live) this.askOpen(f);
  }

  /** Asks the client what it has not been asked yet of what is open. */
  private askOpen(f: Followed): void {
    for (const [id, pending] of f.pending) if (!f.asked.has(id)) this.ask(f, id, pending);
  }

  /** Asks the client; a reply the session no longer takes (answered elsewhere first) is only logged. */
  private ask(f: Followed, id: string, event: HitlAsk): void {
    const elicitation = isObject(this.clientCapabilities.elicitation) && isObject(this.clientCapabilities.elicitation.form);
    const request: ClientRequest = (method, params, answer) => {
      f.asked.set(id, this.request(method, params, (response) => {
        f.asked.set(id, undefined);
        answer(response);
      }));
    };
    askClient(f.session, event, elicitation, request, (err) => this.deps.logger.debug({ err, sessionId: f.session.id }, 'ACP client answer not taken'));
  }

  private request(method: string, params: unknown, answer: (response: RpcResponse) => void): RpcId {
    const id = ++this.nextId;
    this.outgoing.set(id, answer);
    this.send({ jsonrpc: '2.0', id, method, params });
    return id;
  }
}

function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw new RpcError(INVALID_PARAMS, `${name} must be a non-empty string`);
  return value;
}

