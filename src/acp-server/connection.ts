// One ACP client connection, the agent side: JSON-RPC messages in (`receive`), messages out
// through its transport, over the SessionManager. The WebSocket route (src/http/acp.ts) feeds it;
// `agentwire acp` (src/acp-command.ts) is a stdio bridge to that route, so the mapping is written
// once. This file is the connection itself: frames routed to their method, the requests it sends
// the client (permissions, questions) and their answers, and how it ends. The session/* methods are
// in session-methods.ts; per session it follows (followed-sessions.ts) it holds a cursor into the
// log, the pure mapping's state, the prompt waiting for its turn.ended and what it asked the client.
// A connection cut without a close frame leaves its sessions and their turns running for a grace
// period: a client that reconnects resumes with session/load and `_meta.agentwire.after_sequence`
// (docs/acp-server.md, "Resume"). What ends the sessions made over ACP is in lifetime.ts.
import type { FastifyBaseLogger } from 'fastify';
import { requireDriver, type AgentRegistry } from '../agents/registry.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { isObject } from '../util/is-object.js';
import { FollowedSessions } from './followed-sessions.js';
import type { AcpSessionLifetime } from './lifetime.js';
import { errorResponse, isNotification, isRequest, METHOD_NOT_FOUND, parseFrame, RpcError, toRpcError, type RpcId, type RpcMessage, type RpcResponse } from './json-rpc.js';
import { initializeResult } from './requests.js';
import { SessionMethods } from './session-methods.js';

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

type Handler = (params: Record<string, unknown>) => Promise<unknown>;

export class AcpConnection {
  private readonly followed: FollowedSessions;
  private readonly methods: SessionMethods;
  private readonly outgoing = new Map<RpcId, (response: RpcResponse) => void>();
  private nextId = 0;
  private clientCapabilities: Record<string, unknown> = {};
  /** The client asked for `_agentwire/event` (initialize's `clientCapabilities._meta.agentwire.events`). */
  private wantsEvents = false;
  private closed = false;
  /** How the client went away, once it has (close). */
  private goneForGood = false;
  private readonly handlers: Record<string, Handler>;

  constructor(
    private readonly deps: AcpConnectionDeps,
    private readonly transport: AcpTransport,
  ) {
    requireDriver(deps.registry, deps.agent, 'path.agent');
    this.followed = new FollowedSessions({
      send: (message) => this.send(message),
      full: () => this.transport.full(),
      request: (method, params, answer) => this.request(method, params, answer),
      withdraw: (id) => this.withdraw(id),
      wantsEvents: () => this.wantsEvents,
      elicitation: () => isObject(this.clientCapabilities.elicitation) && isObject(this.clientCapabilities.elicitation.form),
      logger: deps.logger,
    });
    this.methods = new SessionMethods({ sessions: deps.sessions, agent: deps.agent, lifetime: deps.lifetime, followed: this.followed, client: this, leftAlready: () => this.leftAlready() });
    const m = this.methods;
    this.handlers = {
      initialize: (p) => this.initialize(p),
      authenticate: async () => ({}),
      'session/new': (p) => m.newSession(p),
      'session/load': (p) => m.loadSession(p),
      'session/resume': (p) => m.resumeSession(p),
      'session/close': (p) => m.closeSession(p),
      'session/list': (p) => m.listSessions(p),
      'session/prompt': (p) => m.prompt(p),
      'session/set_mode': (p) => m.setMode(p),
    };
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
      if (message.method === 'session/cancel' && isObject(message.params)) this.methods.cancel(message.params);
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
    for (const f of this.followed.all()) f.follower.pump();
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
    for (const f of this.followed.all()) {
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

  private request(method: string, params: unknown, answer: (response: RpcResponse) => void): RpcId {
    const id = ++this.nextId;
    this.outgoing.set(id, answer);
    this.send({ jsonrpc: '2.0', id, method, params });
    return id;
  }

  /** A request of ours nobody waits for the answer to now: the client's dialog is withdrawn, if still open. */
  private withdraw(id: RpcId | undefined): void {
    if (id !== undefined && this.outgoing.delete(id)) this.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
  }
}
