// All sessions of the daemon: create (with the id reserved before anything is awaited, so two
// creates of one id cannot both win), look up, list, delete, and a bounded count: at the limit the
// oldest ended session is forgotten to make room; if none has ended, creation is refused.
//
// With a durable store, the sessions a previous daemon kept are restored at start (lazily: no
// event is read), a graceful stop suspends agents instead of ending sessions, and ended sessions
// leave memory after the TTL but stay in the store until retention drops them.
// The bound itself is in session-room.ts; the TTL sweep, retention and store-health watch in
// session-upkeep.ts.
import { lookupDriver, requireDriver, type AgentRegistry } from '../agents/registry.js';
import { ApiError, sessionNotFound } from '../errors.js';
import type { CreateSessionRequest, SessionInfo } from '../schema/api.js';
import type { ForkRequest } from '../schema/delivery.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { FastifyBaseLogger } from 'fastify';
import type { DeletionReason, EventStore } from '../store/event-store.js';
import type { EventLogLimits } from './event-log.js';
import { FeedLog } from './feed-log.js';
import { planFork, type ForkPlan } from './fork.js';
import type { HitlSettings } from './hitl-policy.js';
import { resolveCwd } from './session-paths.js';
import { Session } from './session.js';
import type { ResolvedCreateRequest, SessionDeps } from './session-parts.js';
import { SessionRoom } from './session-room.js';
import { SessionUpkeep } from './session-upkeep.js';
import { WarmPool, type WarmCount } from './warm-pool.js';
import type { AgentId } from '../schema/agents.js';

export interface SessionManagerOptions {
  registry: AgentRegistry;
  ids: IdGenerator;
  clock: Clock;
  limits: EventLogLimits;
  maxSessions: number;
  /** Ended sessions are forgotten this long after they ended (0: only when room is needed). */
  endedSessionTtlMs: number;
  hitl: HitlSettings;
  /** The daemon's default budget (--budget-*), for sessions created without one. */
  budget?: SessionDeps['budget'];
  logger: FastifyBaseLogger;
  /** Base for relative cwds and the default cwd. */
  baseDir: string;
  store: EventStore;
  /** Ended sessions are dropped from a durable store this long after they ended. */
  retentionMs: number;
  /** A deleted session's events stay readable through the feed this long (0: dropped at once). */
  deletedRetentionMs: number;
  /** A durable store is kept under this size by dropping the oldest ended sessions. */
  maxStoreBytes: number;
  /** Passed to every session (SessionDeps.onEvent). */
  onEvent?: SessionDeps['onEvent'];
  /** Fills in and checks agent-specific fields (modes) and makes sure the agent is installed;
   *  throws the client's error. Runs after the id is reserved, before the agent starts. */
  prepare?: (request: CreateSessionRequest, logger: FastifyBaseLogger) => Promise<CreateSessionRequest & { agentMode: string; permissionMode: string }>;
  /** The OS user agents run as (--agent-user), if any. */
  agentUser?: SessionDeps['agentUser'];
  /** Warm spares kept per agent (--warm); they count against maxSessions with the live sessions. */
  warm?: Partial<Record<AgentId, number>>;
}

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  /** Every session's entries in commit order (GET /v1/events). */
  readonly feed: FeedLog;
  /** The --max-sessions bound: reserved ids, claimed ended sessions. */
  private readonly room: SessionRoom;
  /**
   * Sessions whose agent is starting (create, fork): readable already, since their first events
   * are in the feed before the create answers, but not yet taking commands (get() does not find them).
   */
  private readonly opening = new Map<string, Session>();
  /** Agents being started: shutdown waits for them so it can end them too. */
  private readonly starting = new Set<Promise<void>>();
  private closing = false;

  private readonly upkeep: SessionUpkeep;
  private readonly pool: WarmPool | undefined;
  private readonly deps: SessionDeps;

  constructor(private readonly options: SessionManagerOptions) {
    this.feed = new FeedLog(options.store, options.limits);
    this.room = new SessionRoom(this.sessions, options);
    const warm = options.warm ?? {};
    this.pool = Object.values(warm).some((n) => (n ?? 0) > 0)
      ? new WarmPool({
          registry: options.registry,
          sizes: warm,
          baseDir: options.baseDir,
          logger: options.logger.child({ warm: true }),
          room: () => this.room.forSpares(this.pool!.size),
        })
      : undefined;
    this.deps = { ...options, ...(this.pool ? { spares: this.pool } : {}) };
    this.upkeep = new SessionUpkeep(this.sessions, this.room.claimed, { ...options, forget: (session) => this.removeFromStore(session, 'forgotten') });
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
      const session = new Session(record.id, record.request as ResolvedCreateRequest, driver, this.deps, record);
      if (!record.endedAt) session.restore();
      this.sessions.set(record.id, session);
      restored++;
    }
    return restored;
  }

  /** The ended-session TTL now (SessionUpkeep.sweep; it also runs on a timer). */
  sweep(): void {
    this.upkeep.sweep();
  }

  /** Store retention now (SessionUpkeep.prune; it also runs on a timer). */
  prune(): void {
    this.upkeep.prune();
  }

  async create(requestedId: string | undefined, request: CreateSessionRequest): Promise<Session> {
    const driver = requireDriver(this.options.registry, request.agent, 'body.agent');
    return this.open(requestedId, async (id) => {
      const cwd = await resolveCwd(request.cwd, this.options.baseDir);
      const prepared = this.options.prepare
        ? await this.options.prepare(request, this.options.logger)
        : { ...request, agentMode: request.agentMode ?? driver.modes[0]!.id, permissionMode: request.permissionMode ?? driver.permissionModes[0]! };
      return new Session(id, { ...prepared, cwd }, driver, this.deps);
    });
  }

  /** POST …/fork: a new session branched from `parentId` (fork.ts); the parent is not changed. */
  async fork(parentId: string, body: ForkRequest): Promise<Session> {
    const parent = this.get(parentId);
    const driver = parent.driver;
    const plan = planFork(parent, driver, body);
    return this.open(body.id, async (id) => new Session(id, plan.request, driver, this.deps), plan);
  }

  /** Reserves the id and room, builds the session, starts its agent and lists it (or leaves nothing behind). */
  private async open(requestedId: string | undefined, build: (id: string) => Promise<Session>, fork?: ForkPlan): Promise<Session> {
    if (this.closing) throw new ApiError('shutting_down', 'The daemon is shutting down; no new sessions.');
    const id = requestedId ?? this.options.ids.next('sess');
    if (this.sessions.has(id) || this.room.reserved.has(id)) {
      throw new ApiError('session_exists', `Session '${id}' already exists; choose another id or DELETE it first.`, { sessionId: id });
    }
    const victim = this.room.claim();
    this.room.reserved.add(id);
    try {
      const session = await build(id);
      this.opening.set(id, session);
      const starting = session.start(fork);
      this.starting.add(starting);
      try {
        await starting;
      } catch (err) {
        this.removeFromStore(session, 'forgotten'); // a create that failed leaves nothing listed
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
      this.opening.delete(id);
      this.room.reserved.delete(id);
      if (victim !== undefined) this.room.claimed.delete(victim);
      this.pool?.trim(); // a session that started its own agent takes a spare's place
    }
  }

  /** Starts the warm spares (the app is ready). */
  fillWarmPool(): void {
    this.pool?.fill();
  }

  /** Spares per agent (GET /v1/agents, /metrics); empty without --warm. */
  warmCounts(): Partial<Record<AgentId, WarmCount>> {
    return this.pool?.counts() ?? {};
  }

  get(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** A session to read (its info, its events): one whose agent is still starting included. */
  read(id: string): Session {
    const session = this.sessions.get(id) ?? this.opening.get(id);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** Every session held in memory, oldest first (metrics read their status and log size). */
  all(): IterableIterator<Session> {
    return this.sessions.values();
  }

  /** Newest first (those starting first of all). */
  list(): SessionInfo[] {
    return [...this.sessions.values(), ...this.opening.values()].reverse().map((s) => s.info());
  }

  async delete(id: string): Promise<void> {
    const session = this.get(id);
    await session.terminate();
    this.forget(id, 'deleted');
  }

  /** Removes a session from memory and from the store; its open streams end. */
  private forget(id: string, reason: DeletionReason = 'forgotten'): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.removeFromStore(session, reason);
    session.log.close(); // ends its open streams: nothing more will ever be appended
  }

  /** The session leaves the list; the feed says so after its last event, and keeps its events for the deleted-retention. */
  private removeFromStore(session: Session, reason: DeletionReason): void {
    const { store, clock, deletedRetentionMs } = this.options;
    store.deleteSession(session.id, {
      time: clock.now().toISOString(),
      lastSequence: session.log.lastAppended,
      reason,
      keep: store.durable && deletedRetentionMs > 0,
    });
  }

  /**
   * Daemon shutdown; no agent process outlives the daemon. With a durable store the agents are
   * stopped but the sessions live on (a running turn ends as interrupted) for the next daemon to
   * restore; in memory they are terminated, since nothing of them will survive anyway.
   */
  async closeAll(): Promise<void> {
    this.closing = true;
    this.upkeep.stop();
    await Promise.allSettled([...this.starting]);
    await Promise.allSettled([this.pool?.close(), ...[...this.sessions.values()].map((s) => (this.durable ? s.suspend() : s.terminate()))]);
    this.options.store.flush();
    // Streams end only after the last events reached them, so clients see why.
    for (const s of this.sessions.values()) s.log.close();
    this.feed.close();
  }
}
