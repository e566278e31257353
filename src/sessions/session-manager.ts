// All sessions of the daemon: create (with the id reserved before anything is awaited, so two
// creates of one id cannot both win), look up, list, delete, and a bounded count: at the limit the
// oldest ended session is forgotten to make room; if none has ended, creation is refused.
//
// With a durable store, the sessions a previous daemon kept are restored at start (lazily: no
// event is read), a graceful stop suspends agents instead of ending sessions, and ended sessions
// leave memory after the TTL but stay in the store until retention drops them.
import { lookupDriver, requireDriver, type AgentRegistry } from '../agents/registry.js';
import { ApiError, sessionNotFound } from '../errors.js';
import type { CreateSessionRequest, SessionInfo } from '../schema/api.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { FastifyBaseLogger } from 'fastify';
import type { EventStore, StoreFailure } from '../store/event-store.js';
import type { EventLogLimits } from './event-log.js';
import type { HitlSettings } from './hitl-policy.js';
import { resolveCwd } from './session-paths.js';
import { Session, type ResolvedCreateRequest, type SessionDeps } from './session.js';

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
  store: EventStore;
  /** Ended sessions are dropped from a durable store this long after they ended. */
  retentionMs: number;
  /** A durable store is kept under this size by dropping the oldest ended sessions. */
  maxStoreBytes: number;
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
  private readonly pruner: NodeJS.Timeout | undefined;
  private backlogWatch: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionManagerOptions) {
    if (options.endedSessionTtlMs > 0) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(options.endedSessionTtlMs, 60_000));
      this.sweeper.unref();
    }
    if (options.store.durable) {
      this.pruner = setInterval(() => this.prune(), PRUNE_EVERY_MS);
      this.pruner.unref();
      options.store.onHealth((failure) => this.storeHealth(failure));
    }
  }

  get durable(): boolean {
    return this.options.store.durable;
  }

  /**
   * Loads the sessions a previous daemon stored (rows only; their events stay on disk until read)
   * and closes what it left open. Returns how many were restored.
   */
  restoreStored(): number {
    const { store, registry, logger } = this.options;
    this.prune();
    let restored = 0;
    for (const record of store.loadSessions()) {
      const driver = lookupDriver(registry, record.agent);
      if (!driver) {
        logger.warn({ sessionId: record.id, agent: record.agent }, 'stored session of an agent this build has no adapter for: left in the store, not restored');
        continue;
      }
      const session = new Session(record.id, record.request as ResolvedCreateRequest, driver, this.options, record);
      if (!record.endedAt) session.restore();
      this.sessions.set(record.id, session);
      restored++;
    }
    return restored;
  }

  /**
   * Sessions that ended longer than the TTL ago: forgotten (memory store), or their in-memory
   * window released (durable store: they stay listed and readable from the store).
   */
  sweep(): void {
    const cutoff = this.options.clock.now().getTime() - this.options.endedSessionTtlMs;
    for (const [id, s] of this.sessions) {
      if (s.endedAt && s.endedAt.getTime() <= cutoff && !this.claimed.has(id)) {
        if (this.durable) {
          if (s.subscribers === 0) s.log.releaseWindow();
          continue;
        }
        this.sessions.delete(id);
        s.log.close();
      }
    }
  }

  /** Retention: drops ended sessions past --retention, then the oldest ended while over --max-store-mb. */
  prune(): void {
    if (!this.durable) return;
    const endedBefore = new Date(this.options.clock.now().getTime() - this.options.retentionMs).toISOString();
    try {
      for (const id of this.options.store.prune({ endedBefore, maxBytes: this.options.maxStoreBytes })) {
        const session = this.sessions.get(id);
        if (session && !this.claimed.has(id)) {
          this.sessions.delete(id);
          session.log.close();
        }
      }
    } catch (err) {
      this.options.logger.warn({ err }, 'store retention failed; will try again');
    }
  }

  /** The store stopped taking writes: every live session's stream says so (visible once it recovers). */
  private storeHealth(failure: StoreFailure): void {
    const { logger } = this.options;
    if (!failure) {
      clearInterval(this.backlogWatch);
      this.backlogWatch = undefined;
      return logger.info('event store is taking writes again; everything held was committed');
    }
    logger.error({ failure }, 'event store cannot take writes; new work is refused with 507 until it recovers');
    for (const session of this.sessions.values()) if (session.agentRunning) session.storeFailed(failure);
    // What the store holds back is memory: past one session's event budget, the agents stop
    // (suspended, like a graceful stop: their sessions resume once the store is back).
    this.backlogWatch ??= setInterval(() => {
      if (this.options.store.pendingEvents <= this.options.limits.maxEvents) return;
      logger.error({ pending: this.options.store.pendingEvents }, 'too many events held while the store cannot take writes: stopping the agents');
      for (const session of this.sessions.values()) void session.suspend();
    }, 1_000).unref();
  }

  async create(requestedId: string | undefined, request: CreateSessionRequest): Promise<Session> {
    if (this.closing) throw new ApiError('shutting_down', 'The daemon is shutting down; no new sessions.');
    const id = requestedId ?? this.options.ids.next('sess');
    if (this.sessions.has(id) || this.reserved.has(id)) {
      throw new ApiError('session_exists', `Session '${id}' already exists; choose another id or DELETE it first.`, { sessionId: id });
    }
    const driver = requireDriver(this.options.registry, request.agent, 'body.agent');
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
      } catch (err) {
        this.options.store.deleteSession(id); // a create that failed leaves nothing behind
        session.log.close();
        throw err;
      } finally {
        this.starting.delete(starting);
      }
      if (this.closing) {
        // Shutdown began while the agent was starting: it must not outlive the daemon.
        await session.terminate();
        throw new ApiError('shutting_down', 'The daemon is shutting down; no new sessions.');
      }
      // Only a create that succeeded costs an ended session its place.
      if (victim !== undefined) this.forget(victim);
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
    this.forget(id);
  }

  /** Removes a session from memory and from the store; its open streams end. */
  private forget(id: string): void {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    this.options.store.deleteSession(id);
    session?.log.close(); // ends its open streams: nothing more will ever be appended
  }

  /**
   * Daemon shutdown; no agent process outlives the daemon. With a durable store the agents are
   * stopped but the sessions live on (a running turn ends as interrupted) for the next daemon to
   * restore; in memory they are terminated, since nothing of them will survive anyway.
   */
  async closeAll(): Promise<void> {
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.pruner) clearInterval(this.pruner);
    clearInterval(this.backlogWatch);
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled([...this.sessions.values()].map((s) => (this.durable ? s.suspend() : s.terminate())));
    this.options.store.flush();
    // Streams end only after the last events reached them, so clients see why.
    for (const s of this.sessions.values()) s.log.close();
  }

  /**
   * At the limit, picks the oldest ended session to make way (claimed, so two concurrent creates
   * do not pick the same one); refuses when every session is live.
   */
  private claimRoom(): string | undefined {
    // A durable store keeps ended sessions (retention bounds them on disk): only live ones count.
    if (this.durable) return this.claimLiveRoom();
    if (this.sessions.size - this.claimed.size + this.reserved.size < this.options.maxSessions) return undefined;
    for (const [id, s] of this.sessions) {
      if (s.status === 'ended' && !this.claimed.has(id)) {
        this.claimed.add(id);
        return id;
      }
    }
    throw this.tooMany();
  }

  private claimLiveRoom(): undefined {
    // Restored sessions whose agent is not running cost a row, not a process: they do not count.
    let live = this.reserved.size;
    for (const s of this.sessions.values()) if (s.agentRunning) live++;
    if (live < this.options.maxSessions) return undefined;
    throw this.tooMany();
  }

  private tooMany(): ApiError {
    return new ApiError('too_many_sessions', `The daemon already holds ${this.options.maxSessions} live sessions (--max-sessions); terminate or DELETE one.`, {
      limit: this.options.maxSessions,
    });
  }
}

const PRUNE_EVERY_MS = 10 * 60_000;
