// Metrics derived by watching the universal events as they are appended, instead of instrumenting
// the session internals: the stream already says when turns start and end (and why), when HITL
// requests open and close, and when a session ends. Session.apply calls `observe` once per event,
// on the path benchmarked at a few µs per event, so the common case (an item event) is two property
// lookups and an increment on a plain table; prom-client's labelled counters hash their labels on
// every call and are only touched at scrape time (`collect`) or for the rare turn and HITL events.
import type { Counter, Histogram } from 'prom-client';
import type { EventType, UniversalEvent, UsageUpdatedData } from '../schema/events.js';

/** What the observer needs of a session (Session satisfies it). */
export interface ObservedSession {
  readonly id: string;
  readonly request: { readonly agent: string };
}

export interface EventMetricSet {
  events: Counter<'agent' | 'type'>;
  sessionsStarted: Counter<'agent'>;
  sessionsEnded: Counter<'agent' | 'reason'>;
  turnsStarted: Counter<'agent'>;
  turnsEnded: Counter<'agent' | 'reason'>;
  turnSeconds: Histogram<'agent' | 'reason'>;
  hitlRequests: Counter<'agent' | 'kind'>;
  hitlResolved: Counter<'agent' | 'kind' | 'outcome'>;
  hitlAnswerSeconds: Histogram<'kind' | 'outcome'>;
  tokens: Counter<'agent' | 'model' | 'kind'>;
  costUsd: Counter<'agent' | 'model' | 'source'>;
  recordsDropped: Counter<'agent'>;
}

/** usage.updated's counts by the `kind` label of agentwire_tokens_total. */
const TOKEN_KINDS = [
  ['input', 'input_tokens'],
  ['output', 'output_tokens'],
  ['cache_read', 'cache_read_input_tokens'],
  ['cache_write', 'cache_creation_input_tokens'],
] as const;

/**
 * The reasons a turn.ended may carry (TurnEndReason, docs/events.md). The schema makes every turn
 * say why it ended; the fallbacks (`other`, `unspecified`) only guard the label's small fixed set
 * against metadata that did not come through it.
 */
const TURN_REASONS = new Set(['completed', 'interrupted', 'error', 'terminated', 'agent_exited', 'budget_exceeded']);

export function turnReason(metadata: Record<string, unknown> | undefined): string {
  const reason = metadata?.reason;
  if (reason === undefined) return 'unspecified';
  return typeof reason === 'string' && TURN_REASONS.has(reason) ? reason : 'other';
}

/** Open turn and HITL start times of one session; dropped at session.ended. */
interface SessionClock {
  turnStartedAt?: number;
  hitlAskedAt?: Map<string, number>;
}

export class EventObserver {
  /** Events appended per agent and type, published into the `events` counter at scrape time. */
  private readonly counts = new Map<string, Record<string, number>>();
  private readonly clocks = new Map<string, SessionClock>();

  constructor(
    private readonly m: EventMetricSet,
    /** Monotonic milliseconds (performance.now); durations never follow wall-clock jumps. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Called once per appended event; must never throw (it runs inside the session's append). */
  readonly observe = (session: ObservedSession, event: UniversalEvent): void => {
    const agent = session.request.agent;
    let byType = this.counts.get(agent);
    if (!byType) this.counts.set(agent, (byType = {}));
    byType[event.type] = (byType[event.type] ?? 0) + 1;
    if (event.type.startsWith('item.')) return; // the bulk of the stream: nothing more to derive
    this.derive(session.id, agent, event);
  };

  /** Copies the plain event tables into the prom-client counter (its collect hook). */
  publishEventCounts(): void {
    this.m.events.reset();
    for (const [agent, byType] of this.counts) {
      for (const type in byType) this.m.events.inc({ agent, type }, byType[type as EventType]);
    }
  }

  private derive(sessionId: string, agent: string, event: UniversalEvent): void {
    const m = this.m;
    switch (event.type) {
      case 'session.started':
        return m.sessionsStarted.inc({ agent });
      case 'session.ended':
        m.sessionsEnded.inc({ agent, reason: event.data.reason });
        this.clocks.delete(sessionId); // nothing of it can still be open
        return;
      case 'turn.started':
        m.turnsStarted.inc({ agent });
        this.clock(sessionId).turnStartedAt = this.now();
        return;
      case 'turn.ended': {
        const labels = { agent, reason: turnReason(event.data.metadata) };
        m.turnsEnded.inc(labels);
        const clock = this.clocks.get(sessionId);
        // A turn whose start this observer did not see (a session restored from the store) is
        // counted, but has no duration.
        if (clock?.turnStartedAt !== undefined) m.turnSeconds.observe(labels, (this.now() - clock.turnStartedAt) / 1000);
        if (clock) clock.turnStartedAt = undefined;
        return;
      }
      case 'permission.requested':
        return this.asked(sessionId, agent, 'permission', event.data.permission_id);
      case 'question.requested':
        return this.asked(sessionId, agent, 'question', event.data.question_id);
      case 'permission.resolved':
        return this.answered(sessionId, agent, 'permission', event.data.permission_id, event.data.status);
      case 'question.resolved':
        return this.answered(sessionId, agent, 'question', event.data.question_id, event.data.status);
      case 'usage.updated':
        return this.spent(agent, event.data);
      case 'error':
        if (event.data.code === 'record_not_stored') m.recordsDropped.inc({ agent });
        return;
      default:
        return;
    }
  }

  /** Counters only go up: a turn's total that corrects its steps downwards is not taken back. */
  private spent(agent: string, data: UsageUpdatedData): void {
    const model = data.model ?? 'unknown';
    for (const [kind, key] of TOKEN_KINDS) if (data.added[key] > 0) this.m.tokens.inc({ agent, model, kind }, data.added[key]);
    const cost = data.added.cost_usd;
    if (cost !== undefined && cost > 0 && data.totals.cost_source) this.m.costUsd.inc({ agent, model, source: data.totals.cost_source }, cost);
  }

  private asked(sessionId: string, agent: string, kind: 'permission' | 'question', id: string): void {
    this.m.hitlRequests.inc({ agent, kind });
    const clock = this.clock(sessionId);
    (clock.hitlAskedAt ??= new Map()).set(`${kind}:${id}`, this.now());
  }

  /** A resolution without a request seen here (Amp's remembered rules) is counted, not timed. */
  private answered(sessionId: string, agent: string, kind: 'permission' | 'question', id: string, outcome: string): void {
    this.m.hitlResolved.inc({ agent, kind, outcome });
    const asked = this.clocks.get(sessionId)?.hitlAskedAt;
    const key = `${kind}:${id}`;
    const at = asked?.get(key);
    if (at === undefined) return;
    asked!.delete(key);
    this.m.hitlAnswerSeconds.observe({ kind, outcome }, (this.now() - at) / 1000);
  }

  private clock(sessionId: string): SessionClock {
    let clock = this.clocks.get(sessionId);
    if (!clock) this.clocks.set(sessionId, (clock = {}));
    return clock;
  }
}
