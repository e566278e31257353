// The session/* methods of one ACP connection (connection.ts routes them here): new, load, resume,
// close, list, prompt, cancel, set_mode, each over the SessionManager and the sessions the
// connection follows (followed-sessions.ts). Which sessions made over ACP end, and when, is
// lifetime.ts's to say; these methods only tell it who made, loaded or closed what.
import type { SessionManager } from '../sessions/session-manager.js';
import type { FollowedSessions, WaitingPrompt } from './followed-sessions.js';
import { INVALID_PARAMS, RpcError } from './json-rpc.js';
import type { AcpSessionLifetime } from './lifetime.js';
import { agentwireMeta, createRequest, listEntry, messageRequest, modeState } from './requests.js';

export interface SessionMethodsDeps {
  sessions: SessionManager;
  /** The agent of new sessions (`?agent=`, `--agent`), unless session/new's _meta names one. */
  agent: string;
  lifetime: AcpSessionLifetime;
  followed: FollowedSessions;
  /** The connection, as the lifetime knows its clients. */
  client: object;
  /** A request that took a session over after the client went away lets go of it at once. */
  leftAlready: () => void;
}

type Params = Record<string, unknown>;

export class SessionMethods {
  constructor(private readonly deps: SessionMethodsDeps) {}

  async newSession(params: Params): Promise<unknown> {
    const { sessions, lifetime, followed } = this.deps;
    const session = await sessions.create(undefined, createRequest(params, this.deps.agent));
    lifetime.adopt(session.id, this.deps.client, agentwireMeta(params).keep === true);
    this.deps.leftAlready();
    // The answer goes first; the session's first events follow it (after this tick), unless a
    // request about the session came first and follows it already.
    setImmediate(() => (followed.get(session.id) ?? followed.follow(session, 0)).follower.pump());
    return { sessionId: session.id, modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { agent: session.request.agent } } };
  }

  /** Replays the stored events after `_meta.agentwire.after_sequence` (default: all), then answers. */
  async loadSession(params: Params): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    const after = agentwireMeta(params).after_sequence ?? 0;
    if (typeof after !== 'number' || !Number.isInteger(after) || after < 0) throw new RpcError(INVALID_PARAMS, '_meta.agentwire.after_sequence must be a non-negative integer');
    const followed = this.deps.followed.follow(session, after);
    this.deps.lifetime.attach(session.id, this.deps.client);
    this.deps.leftAlready();
    await followed.follower.caughtUpNow();
    // A replay with nothing after the cursor sends no event: what is open is asked here.
    if (this.deps.followed.get(session.id) === followed) this.deps.followed.askOpen(followed);
    return { modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { sequence: followed.follower.sequence, agent: session.request.agent, status: session.status } } };
  }

  /** session/resume: session/load without the replay; the client follows from the log's end. */
  async resumeSession(params: Params): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    const followed = this.deps.followed.follow(session, session.log.lastSequence, true);
    this.deps.lifetime.attach(session.id, this.deps.client);
    this.deps.leftAlready();
    this.deps.followed.askOpen(followed);
    return { modes: modeState(session.driver, session.request.agentMode), _meta: { agentwire: { sequence: followed.follower.sequence, agent: session.request.agent, status: session.status } } };
  }

  /**
   * session/close: ACP says the agent cancels the session's work and frees it. A session made over
   * ACP ends (kept or not); one made otherwise (over HTTP) is only no longer followed here, and a
   * turn this connection prompted in it is interrupted. The prompt waiting here answers `cancelled`.
   */
  async closeSession(params: Params): Promise<unknown> {
    const { sessions, lifetime } = this.deps;
    const session = sessions.read(stringParam(params, 'sessionId'));
    const followed = this.deps.followed.unfollow(session.id);
    if (followed) {
      const prompt = followed.prompt;
      delete followed.prompt;
      if (prompt) prompt.answer({ stopReason: 'cancelled', _meta: { agentwire: { reason: 'session_closed' } } });
      if (prompt && !lifetime.owns(session.id)) await session.interrupt().catch(() => {});
    }
    if (lifetime.owns(session.id)) await lifetime.end(session.id, 'session/close');
    return {};
  }

  async listSessions(params: Params): Promise<unknown> {
    const cwd = typeof params.cwd === 'string' ? params.cwd : undefined;
    const sessions = this.deps.sessions.list().filter((s) => cwd === undefined || s.cwd === cwd);
    return { sessions: sessions.map(listEntry) };
  }

  async prompt(params: Params): Promise<unknown> {
    const session = this.deps.sessions.get(stringParam(params, 'sessionId'));
    const body = messageRequest(params.prompt);
    const followed = this.deps.followed.get(session.id) ?? this.deps.followed.follow(session, session.log.lastSequence);
    if (followed.prompt) throw new RpcError(INVALID_PARAMS, 'session/prompt: this connection already has a prompt running in the session');
    const after = session.log.lastAppended;
    return new Promise((resolve, reject) => {
      // Answered by the followed session's onEvent at the turn's turn.ended, after every update of the turn went out.
      const pending: WaitingPrompt = { after, answer: resolve, fail: reject };
      followed.prompt = pending;
      session.send(body).catch((err: unknown) => {
        if (followed.prompt === pending) delete followed.prompt;
        reject(err);
      });
    });
  }

  /** session/cancel → interrupt; a notification, so nothing is answered (no turn, no session). */
  cancel(params: Params): void {
    if (typeof params.sessionId !== 'string') return;
    try {
      this.deps.sessions.get(params.sessionId).interrupt().catch(() => {});
    } catch {
      // No such session, or it has ended.
    }
  }

  async setMode(params: Params): Promise<unknown> {
    const session = this.deps.sessions.read(stringParam(params, 'sessionId'));
    if (params.modeId === session.request.agentMode) return {};
    throw new RpcError(INVALID_PARAMS, `session/set_mode: agentwire sessions keep the mode they were created with ('${session.request.agentMode}'); start a session in mode '${String(params.modeId)}' with session/new and _meta.agentwire.agentMode`, {
      currentModeId: session.request.agentMode,
    });
  }
}

function stringParam(params: Params, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw new RpcError(INVALID_PARAMS, `${name} must be a non-empty string`);
  return value;
}
