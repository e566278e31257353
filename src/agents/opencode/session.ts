// One live OpenCode session: a lease on an `opencode serve` (shared-server.ts) and one native
// session on it, driven over HTTP, its events routed to it by session id (route.ts). Its state is
// named fields a test can read: the native session id, the events held before it was known, the
// router, the grants kept on a shared server, whether it is ready or ended. The protocol steps are
// at the top of driver.ts.
import { ApiError } from '../../errors.js';
import type { ChildExit } from '../../process/spawn.js';
import type { PermissionReply } from '../../schema/api.js';
import type { AgentHandle, AgentSink, ForkOptions, ProcessExit, StartOptions, TurnInput } from '../types.js';
import { modelRef, promptParts } from './config.js';
import { ALWAYS_KEPT, MCP_SERVERS, RESUMED } from './convert.js';
import { cutAfter, listedIds, messageOf, parseForkPoint } from './fork.js';
import { askOf, repliedOf, SessionGrants } from './grants.js';
import { atDirectory, callJson } from './http.js';
import { SessionRouter, sessionOf } from './route.js';
import type { ServerLease } from './shared-server.js';
import { isObject } from '../../util/is-object.js';

/** Events kept before the POST /session answer names the session. */
const MAX_EARLY = 1_000;


/** The OpenCode agent a prompt names: the session's agentMode; for the daemon's generic 'default',
 *  none (OpenCode's own default, `build`), or `plan` when the permissionMode is plan. */
export function agentFor(agentMode: string, permissionMode: string): string | undefined {
  if (agentMode !== 'default') return agentMode;
  return permissionMode === 'plan' ? 'plan' : undefined;
}

export class OpencodeSession implements AgentHandle {
  /** The native session id (POST /session's answer, or the resumed one). */
  sessionId: string | undefined;
  /** Events that came before the POST /session answer named our session (bounded). */
  early: unknown[] = [];
  /** Decides which of the directory's events are this session's; set with the session id. */
  router: SessionRouter | undefined;
  /** The session exists: the server's end is now the session's end, not a failed start. */
  ready = false;
  /** The session's end was reported (or its start failed): nothing more reaches the sink. */
  ended = false;
  /** OpenCode keeps an `always` grant in its instance, for every session on it (tested): on a
   *  server others may share, this session's `always` answers are kept here instead (grants.ts). */
  readonly grants: SessionGrants | undefined;
  /** A fork's copied messages: the events announcing them are not the fork's (fork.ts). */
  copied: ReadonlySet<string> | undefined;
  private created: (() => void) | undefined;
  private readonly createdSeen = new Promise<void>((resolve) => (this.created = resolve));
  private gone: ((why: Error) => void) | undefined;
  /** Rejects when the server ends while the session starts. */
  private readonly goneEarly = new Promise<never>((_, reject) => (this.gone = reject));

  private constructor(
    private readonly options: StartOptions,
    private readonly sink: AgentSink,
    readonly lease: ServerLease,
    shares: boolean,
    /** Bound on every HTTP call (and on waiting for session.created). */
    private readonly timeoutMs: number,
  ) {
    this.grants = shares ? new SessionGrants() : undefined;
    this.goneEarly.catch(() => {});
  }

  /** Attaches to the leased server and creates (or resumes) the native session; the lease is
   *  given back when that fails. */
  static async start(options: StartOptions, sink: AgentSink, lease: ServerLease, shares: boolean, timeoutMs: number): Promise<OpencodeSession> {
    const session = new OpencodeSession(options, sink, lease, shares, timeoutMs);
    lease.attach({ event: (event) => session.onEvent(event), exit: (exit, lost) => session.onServerExit(exit, lost) });
    try {
      if (options.mcp && Object.keys(options.mcp).length > 0) sink.native({ type: MCP_SERVERS, properties: { servers: Object.keys(options.mcp) } });
      if (options.fork) await session.fork(options.fork);
      else await (options.nativeSessionId ? session.resume(options.nativeSessionId) : session.create());
    } catch (err) {
      session.ended = true;
      await lease.release();
      throw new ApiError('agent_start_failed', `OpenCode did not start a session: ${(err as Error).message}`, { agent: 'opencode' });
    }
    session.ready = true;
    return session;
  }

  get pid(): number | undefined {
    return this.lease.pid;
  }

  /** A call on the session's own instance: the directory it was created in. */
  private api(method: string, path: string, body?: unknown) {
    return callJson(this.lease.url, method, atDirectory(path, this.options.cwd), body, this.timeoutMs);
  }

  private call(method: string, path: string, body?: unknown) {
    return this.api(method, path, body).catch((err) =>
      Promise.reject(new ApiError('agent_io_failed', `OpenCode did not accept the call: ${(err as Error).message}`, { agent: 'opencode' })),
    );
  }

  /** Resume: the session is in OpenCode's storage (under the user's data dir). No session.created
   *  comes for it; its GET answer starts the session instead (RESUMED). */
  private async resume(nativeSessionId: string): Promise<void> {
    const path = `/session/${encodeURIComponent(nativeSessionId)}`;
    const answer = await Promise.race([this.api('GET', path), this.goneEarly]);
    if (!isObject(answer.json) || answer.json.id !== nativeSessionId) throw new Error(`GET ${path} answered ${JSON.stringify(answer.json).slice(0, 200)}`);
    this.named(answer.json.id);
    this.sink.native({ type: RESUMED, properties: { sessionID: nativeSessionId, info: answer.json } });
    this.releaseEarly();
  }

  private async create(): Promise<void> {
    const answer = await Promise.race([this.api('POST', '/session', {}), this.goneEarly]);
    if (!isObject(answer.json) || typeof answer.json.id !== 'string') throw new Error(`POST /session answered ${JSON.stringify(answer.json).slice(0, 200)}`);
    this.named(answer.json.id);
    await this.createdEvent();
  }

  /** A fork (fork.ts): a new session with copies of the branch point's session's messages up to
   *  it. The copies' events come after the answer and are dropped; its session.created starts it. */
  private async fork(fork: ForkOptions): Promise<void> {
    const point = fork.point === undefined ? undefined : parseForkPoint(fork.point);
    if (!point) throw new Error(`no fork point in ${JSON.stringify(fork)}`);
    const messages = (session: string) => Promise.race([this.api('GET', `/session/${encodeURIComponent(session)}/message`), this.goneEarly]);
    const cut = cutAfter((await messages(point.session)).json, point);
    const answer = await Promise.race([this.api('POST', `/session/${encodeURIComponent(point.session)}/fork`, cut ? { messageID: cut } : {}), this.goneEarly]);
    if (!isObject(answer.json) || typeof answer.json.id !== 'string') throw new Error(`POST /session/${point.session}/fork answered ${JSON.stringify(answer.json).slice(0, 200)}`);
    // Named only once the copies are known: until then their events are not kept (not ours yet).
    this.copied = new Set(listedIds((await messages(answer.json.id)).json));
    this.named(answer.json.id);
    await this.createdEvent();
  }

  /** The new session's session.created event (its start, with its id) may come before or after
   *  the answer: ready once it has been delivered, so the session is created with its native id. */
  private async createdEvent(): Promise<void> {
    this.releaseEarly();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), this.timeoutMs)));
    const seen = await Promise.race([this.createdSeen.then(() => true), this.goneEarly, timedOut]);
    clearTimeout(timer);
    if (!seen) throw new Error('no session.created event for the new session');
  }

  private named(id: string): void {
    this.sessionId = id;
    this.router = new SessionRouter(id);
  }

  private releaseEarly(): void {
    const waiting = this.early;
    this.early = [];
    waiting.forEach((event) => this.deliver(event));
  }

  private onEvent(event: unknown): void {
    if (this.sessionId !== undefined) return this.deliver(event);
    if (this.early.length < MAX_EARLY && mayBeOurs(event)) this.early.push(event);
  }

  private onServerExit(exit: ChildExit, lost: boolean): void {
    if (!this.ready) return this.gone?.(new Error(`the server exited (${exit.signal ?? `code ${exit.exitCode}`})${lost ? ' after its event stream ended' : ''}`));
    // A crash, or a lost stream (the pool killed the server): never an exit the daemon asked for.
    this.report({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed && !lost });
    void this.lease.release();
  }

  private deliver(event: unknown): void {
    if (!this.router?.accepts(event) || !this.shown(event)) return;
    if (this.copied && this.copied.has(messageOf(event) ?? '')) return; // a fork's past (fork.ts)
    this.sink.native(event);
    if (isObject(event) && event.type === 'session.created') this.created?.();
  }

  /** False for a request this session's grants answer, and for that answer's reply event. */
  private shown(event: unknown): boolean {
    const { grants } = this;
    if (!grants) return true;
    const ask = askOf(event);
    if (ask && grants.covers(ask)) {
      grants.answeredSilently(ask.id);
      void this.api('POST', replyPath(ask.id), { reply: 'once' }).catch((err: Error) =>
        this.options.logger.warn({ requestId: ask.id, err: err.message }, 'could not answer a request its session granted always'),
      );
      return false;
    }
    if (ask) grants.asked(ask);
    const replied = repliedOf(event);
    return replied === undefined || grants.showReply(replied);
  }

  private report(exit: ProcessExit): void {
    if (this.ended) return;
    this.ended = true;
    this.sink.exit(exit);
  }

  async send(turn: TurnInput): Promise<void> {
    const { options } = this;
    const model = modelRef(options.model);
    const agent = agentFor(options.agentMode, options.permissionMode);
    const body = {
      parts: promptParts(turn.message, turn.attachments),
      ...(agent ? { agent } : {}),
      ...(model ? { model } : {}),
      ...(options.variant ? { variant: options.variant } : {}),
    };
    await this.call('POST', `/session/${this.sessionId}/prompt_async`, body);
  }

  async replyPermission(permissionId: string, reply: PermissionReply): Promise<void> {
    if (!this.grants || reply !== 'always') return void (await this.call('POST', replyPath(permissionId), { reply }));
    // Kept here, sent as once; the requests already waiting that it covers are answered too,
    // as OpenCode does with its own `always`.
    const covered = this.grants.grant(permissionId);
    this.sink.native({ type: ALWAYS_KEPT, properties: { requestID: permissionId } });
    await this.call('POST', replyPath(permissionId), { reply: 'once' });
    for (const other of covered) await this.call('POST', replyPath(other.id), { reply: 'once' });
  }

  async replyQuestion(questionId: string, answers: string[][] | null): Promise<void> {
    const path = `/question/${encodeURIComponent(questionId)}`;
    await (answers === null ? this.call('POST', `${path}/reject`) : this.call('POST', `${path}/reply`, { answers }));
  }

  async interrupt(): Promise<void> {
    await this.call('POST', `/session/${this.sessionId}/abort`);
  }

  async terminate(): Promise<void> {
    const { lease } = this;
    if (this.ended) return void (await lease.release());
    // Routing stops first, so the session ends as it would with a server of its own (turn
    // ended as terminated, nothing after). On a server other sessions keep, its turn must not
    // run on unowned: it is aborted (which also cancels its pending permission and question
    // requests); an idle session answers true all the same.
    const others = lease.shared;
    const exit = await lease.release();
    this.report(exit ? { exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: true } : { exitCode: null, signal: null, stderr: { truncated: false }, requested: true });
    if (others) {
      await this.api('POST', `/session/${this.sessionId}/abort`).catch((err: Error) => this.options.logger.warn({ err: err.message }, 'could not abort the session on its shared server'));
    }
  }
}

/** Where a permission request is answered (by the client's reply, or by a grant the driver keeps). */
const replyPath = (requestId: string) => `/permission/${encodeURIComponent(requestId)}/reply`;

/** Before the POST /session answer names the session, what could be its own: events naming no
 *  session and session lifecycle events. Other sessions' traffic on a shared server is not kept. */
function mayBeOurs(event: unknown): boolean {
  return sessionOf(event) === undefined || (isObject(event) && (event.type === 'session.created' || event.type === 'session.updated'));
}
