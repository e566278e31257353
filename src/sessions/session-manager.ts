// All sessions of the daemon: create (with the id reserved before anything is awaited, so two
// creates of one id cannot both win), look up, list, delete, and a bounded count: at the limit the
// oldest ended session is forgotten to make room; if none has ended, creation is refused.
import type { AgentRegistry } from '../agents/registry.js';
import { ApiError, sessionNotFound } from '../errors.js';
import type { CreateSessionRequest, SessionInfo } from '../schema/api.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { FastifyBaseLogger } from 'fastify';
import type { EventLogLimits } from './event-log.js';
import type { HitlSettings } from './hitl-policy.js';
import { resolveCwd, Session, type SessionDeps } from './session.js';

export interface SessionManagerOptions {
  registry: AgentRegistry;
  ids: IdGenerator;
  clock: Clock;
  limits: EventLogLimits;
  maxSessions: number;
  /** Ended sessions are forgotten this long after they ended (0: only when room is needed). */
  endedSessionTtlMs: number;
  hitl: HitlSettings;
  logger: FastifyBaseLogger;
  /** Base for relative cwds and the default cwd. */
  baseDir: string;
  /** Passed to every session (SessionDeps.onEvent). */
  onEvent?: SessionDeps['onEvent'];
  /** Fills in and checks agent-specific fields (modes) and makes sure the agent is installed;
   *  throws the client's error. Runs after the id is reserved, before the agent starts. */
  prepare?: (request: CreateSessionRequest, logger: FastifyBaseLogger) => Promise<CreateSessionRequest & { agentMode: string; permissionMode: string }>;
}

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  /** Ids being created: reserved so a concurrent create of the same id gets 409. */
  private readonly reserved = new Set<string>();
  /** Ended sessions a pending create will replace once it succeeds. */
  private readonly claimed = new Set<string>();
  /** Agents being started: shutdown waits for them so it can end them too. */
  private readonly starting = new Set<Promise<void>>();
  private closing = false;

  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionManagerOptions) {
    if (options.endedSessionTtlMs > 0) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(options.endedSessionTtlMs, 60_000));
      this.sweeper.unref();
    }
  }

  /** Forgets sessions that ended longer than the TTL ago (their logs go with them). */
  sweep(): void {
    const cutoff = this.options.clock.now().getTime() - this.options.endedSessionTtlMs;
    for (const [id, s] of this.sessions) {
      if (s.endedAt && s.endedAt.getTime() <= cutoff && !this.claimed.has(id)) {
        this.sessions.delete(id);
        s.log.close();
      }
    }
  }

  async create(requestedId: string | undefined, request: CreateSessionRequest): Promise<Session> {
    if (this.closing) throw new ApiError('shutting_down', 'The daemon is shutting down; no new sessions.');
    const id = requestedId ?? this.options.ids.next('sess');
    if (this.sessions.has(id) || this.reserved.has(id)) {
      throw new ApiError('session_exists', `Session '${id}' already exists; choose another id or DELETE it first.`, { sessionId: id });
    }
    const driver = this.options.registry[request.agent];
    if (!driver) {
      throw new ApiError('agent_not_available', `Agent '${request.agent}' has no adapter in this build yet; 'mock' is available.`, {
        agent: request.agent,
      });
    }
    const victim = this.claimRoom();
    this.reserved.add(id);
    try {
      const cwd = await resolveCwd(request.cwd, this.options.baseDir);
      const prepared = this.options.prepare
        ? await this.options.prepare(request, this.options.logger)
        : { ...request, agentMode: request.agentMode ?? driver.modes[0]!.id, permissionMode: request.permissionMode ?? driver.permissionModes[0]! };
      const session = new Session(id, { ...prepared, cwd }, driver, this.options);
      const starting = session.start();
      this.starting.add(starting);
      try {
        await starting;
      } finally {
        this.starting.delete(starting);
      }
      if (this.closing) {
        // Shutdown began while the agent was starting: it must not outlive the daemon.
        await session.terminate();
        throw new ApiError('shutting_down', 'The daemon is shutting down; no new sessions.');
      }
      // Only a create that succeeded costs an ended session its place.
      if (victim !== undefined) this.sessions.delete(victim);
      this.sessions.set(id, session);
      return session;
    } finally {
      this.reserved.delete(id);
      if (victim !== undefined) this.claimed.delete(victim);
    }
  }

  get(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** Every session held in memory, oldest first (metrics read their status and log size). */
  all(): IterableIterator<Session> {
    return this.sessions.values();
  }

  /** Newest first. */
  list(): SessionInfo[] {
    return [...this.sessions.values()].reverse().map((s) => s.info());
  }

  async delete(id: string): Promise<void> {
    const session = this.get(id);
    await session.terminate();
    this.sessions.delete(id);
    session.log.close(); // ends its open streams: nothing more will ever be appended
  }

  /** Terminates every session (daemon shutdown); no agent process outlives the daemon. */
  async closeAll(): Promise<void> {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled([...this.sessions.values()].map((s) => s.terminate()));
    // Streams end only after session.ended reached them, so clients see why.
    for (const s of this.sessions.values()) s.log.close();
  }

  /**
   * At the limit, picks the oldest ended session to make way (claimed, so two concurrent creates
   * do not pick the same one); refuses when every session is live.
   */
  private claimRoom(): string | undefined {
    if (this.sessions.size - this.claimed.size + this.reserved.size < this.options.maxSessions) return undefined;
    for (const [id, s] of this.sessions) {
      if (s.status === 'ended' && !this.claimed.has(id)) {
        this.claimed.add(id);
        return id;
      }
    }
    throw new ApiError('too_many_sessions', `The daemon already holds ${this.options.maxSessions} live sessions (--max-sessions); terminate or DELETE one.`, {
      limit: this.options.maxSessions,
    });
  }
}
