// What a session (session.ts) and its parts (session-agent.ts, hitl-replies.ts, message-queue.ts)
// share: the resolved create request, the core object each part is handed, and the daemon's
// dependencies. Apart from session.ts so that the parts need not import the class they serve.
import type { AgentDriver, AgentHandle, AgentSink, ForkOptions, StartOptions } from '../agents/types.js';
import type { CreateSessionRequest } from '../schema/api.js';
import type { Budget } from '../schema/usage.js';
import type { ForkedFrom } from '../schema/delivery.js';
import type { UniversalEvent } from '../schema/events.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { EventStore } from '../store/event-store.js';
import type { AgentUser } from '../process/agent-user.js';
import type { Normalized } from './event-batch.js';
import type { EventLogLimits } from './event-log.js';
import type { HitlSettings } from './hitl-policy.js';
import type { Normalizer } from './normalize.js';
import type { Session } from './session.js';

/** A create request after the agent's defaults were filled in (AgentOfferings.resolve) and its cwd
 *  checked; a fork's also says what it was forked from and how its agent forks (fork.ts). */
export type ResolvedCreateRequest = CreateSessionRequest & {
  cwd: string;
  agentMode: string;
  permissionMode: string;
  forkedFrom?: ForkedFrom;
  fork?: ForkOptions;
};

/** What the parts of a session (session-agent.ts, hitl-replies.ts) share of it: one object,
 *  built once, so each gets the same logger, normalizer and way into the log. */
export interface SessionCore {
  sessionId: string;
  logger: FastifyBaseLogger;
  normalizer: Normalizer;
  /** Session.apply: the normalizer's events into the log. */
  apply: (events: Normalized[]) => void;
}

export interface SessionDeps {
  ids: IdGenerator;
  clock: Clock;
  limits: EventLogLimits;
  /** Daemon defaults; a create request may override them. */
  hitl: HitlSettings;
  /** The daemon's default budget (--budget-*), for a session created without one. */
  budget?: Budget;
  logger: FastifyBaseLogger;
  store: EventStore;
  /** Sees every event once it is in the log (the daemon's metrics, src/metrics/); must not throw. */
  onEvent?: (session: Session, event: UniversalEvent) => void;
  /** The OS user agents run as (--agent-user): attachments are checked against its rights (session-paths.ts). */
  agentUser?: AgentUser | undefined;
  /** The warm pool (warm-pool.ts): a ready agent for a new session whose options it can serve. */
  spares?: { take(driver: AgentDriver, options: StartOptions, sink: AgentSink, firstTurnEvent: Promise<void>): AgentHandle | undefined };
}
