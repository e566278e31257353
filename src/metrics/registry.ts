// The daemon's metrics (GET /metrics, docs/operations.md): one prom-client Registry per app
// instance, never prom-client's global one, so several buildApp() in one process (the tests) keep
// their numbers apart. prom-client writes the Prometheus text format, histograms and label sets;
// this file only says what is measured and where the numbers come from:
//   - derived from the event stream (turns, HITL, events, session ends): EventObserver;
//   - read at scrape time from the sessions (status, log bytes): `collect` hooks below;
//   - told by the one place that knows (HTTP responses, stream subscribers, installs): methods.
// Every label takes its values from a small fixed set (agent ids, enums, status codes, route
// patterns), never from user input, so the number of series stays bounded.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SessionStatus } from '../schema/api.js';
import { HttpRequestCounts, type RouteAnswers } from './http-requests.js';
import { EventObserver } from './observe-events.js';
import { agentProcessMetrics, processRegistry } from './process-metrics.js';

/** What scrape-time gauges read of a session held in memory (Session satisfies it). */
export interface SessionView {
  readonly status: SessionStatus;
  readonly log: { readonly size: { readonly bytes: number; readonly events: number } };
}

export interface MetricsOptions {
  /** The sessions held in memory, read at each scrape. */
  sessions: () => Iterable<SessionView>;
  /** Monotonic milliseconds for durations (default performance.now). */
  now?: () => number;
  /** Warm spares per agent (--warm), read at each scrape. */
  warm?: () => Partial<Record<string, { ready: number; starting: number }>>;
  /** Connections served now (src/http/connections.ts), read at each scrape. */
  connections?: () => number;
}

export type InstallOutcome = 'installed' | 'reused' | 'failed';
export type DropReason = 'lag' | 'evicted';

const STATUSES: SessionStatus[] = ['idle', 'running', 'waiting', 'ended'];
/** Seconds: a turn runs from a second to an hour; a human answers in seconds to many minutes. */
const TURN_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const ANSWER_BUCKETS = [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

export class Metrics {
  readonly registry = new Registry();
  /** Session.apply's observer (SessionDeps.onEvent). */
  readonly events: EventObserver;
  private readonly http = new HttpRequestCounts();
  private readonly subscribers: Gauge<'format'>;
  private readonly dropped: Counter<'reason'>;
  private readonly installs: Counter<'agent' | 'outcome'>;
  private readonly refusedConnections: Counter;
  private readonly processes: { stop: () => void };

  constructor(options: MetricsOptions) {
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[], collect?: () => void) =>
      new Counter<L>({ name, help, labelNames, registers, ...(collect ? { collect } : {}) });
    const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers });

    new Gauge({
      name: 'agentwire_sessions',
      help: 'Sessions held by the daemon, by status',
      labelNames: ['status'] as const,
      registers,
      collect() {
        const counts = { idle: 0, running: 0, waiting: 0, ended: 0 };
        for (const s of options.sessions()) counts[s.status]++;
        for (const status of STATUSES) this.set({ status }, counts[status]);
      },
    });
    new Gauge({
      name: 'agentwire_warm_spares',
      help: 'Warm spare agent processes (--warm), by agent and state (ready: can be taken; starting: booting)',
      labelNames: ['agent', 'state'] as const,
      registers,
      collect() {
        for (const [agent, count] of Object.entries(options.warm?.() ?? {})) {
          this.set({ agent, state: 'ready' }, count?.ready ?? 0);
          this.set({ agent, state: 'starting' }, count?.starting ?? 0);
        }
      },
    });
    // What every session log holds in memory, summed at scrape time.
    const logTotal = (name: string, help: string, of: (size: { bytes: number; events: number }) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          let total = 0;
          for (const s of options.sessions()) total += of(s.log.size);
          this.set(total);
        },
      });
    logTotal('agentwire_event_log_bytes', 'Bytes of serialized events (and raw payloads) held in memory by every session log', (size) => size.bytes);
    logTotal('agentwire_event_log_events', 'Events held in memory by every session log', (size) => size.events);

    this.events = new EventObserver(
      {
        // The per-event path keeps plain tables; they reach this counter only when someone scrapes.
        events: counter('agentwire_events_total', 'Universal events appended, by agent and event type', ['agent', 'type'] as const, () =>
          this.events.publishEventCounts(),
        ),
        sessionsStarted: counter('agentwire_sessions_started_total', 'Sessions started (session.started), by agent', ['agent'] as const),
        sessionsEnded: counter('agentwire_sessions_ended_total', 'Sessions ended (session.ended), by agent and reason', ['agent', 'reason'] as const),
        turnsStarted: counter('agentwire_turns_started_total', 'Turns started, by agent', ['agent'] as const),
        turnsEnded: counter('agentwire_turns_ended_total', 'Turns ended, by agent and reason', ['agent', 'reason'] as const),
        turnSeconds: histogram('agentwire_turn_duration_seconds', 'Time from turn.started to turn.ended', ['agent', 'reason'] as const, TURN_BUCKETS),
        hitlRequests: counter('agentwire_hitl_requests_total', 'Permission requests and questions asked, by agent and kind', ['agent', 'kind'] as const),
        hitlResolved: counter('agentwire_hitl_resolved_total', 'Permission requests and questions resolved, by agent, kind and outcome', ['agent', 'kind', 'outcome'] as const),
        tokens: counter('agentwire_tokens_total', 'Tokens used (usage.updated), by agent, model and kind: input, output, cache_read, cache_write (of input)', ['agent', 'model', 'kind'] as const),
        costUsd: counter('agentwire_cost_usd_total', 'USD spent (usage.updated), by agent, model and where the cost comes from (agent, price_table)', ['agent', 'model', 'source'] as const),
        recordsDropped: counter('agentwire_store_records_dropped_total', 'Session records the store wrote without a part it could not serialise (an error event, code record_not_stored, on the session), by agent', ['agent'] as const),
        hitlAnswerSeconds: histogram('agentwire_hitl_answer_seconds', 'Time from a permission request or question to its resolution', ['kind', 'outcome'] as const, ANSWER_BUCKETS),
      },
      options.now,
    );

    const httpTotal: Counter<'method' | 'route' | 'status'> = counter('agentwire_http_requests_total', 'HTTP requests answered, by method, route pattern and status code', ['method', 'route', 'status'] as const, () =>
      this.http.publish(httpTotal),
    );
    this.subscribers = new Gauge({ name: 'agentwire_stream_subscribers', help: 'Open SSE and NDJSON event streams, by format', labelNames: ['format'] as const, registers });
    this.subscribers.set({ format: 'sse' }, 0);
    this.subscribers.set({ format: 'ndjson' }, 0);
    this.dropped = counter('agentwire_stream_subscribers_dropped_total', 'Streams the daemon closed because the client fell too far behind (lag) or behind what the log still held (evicted)', ['reason'] as const);
    new Gauge({
      name: 'agentwire_connections',
      help: 'HTTP connections served now (bounded by --max-connections)',
      registers,
      collect() {
        this.set(options.connections?.() ?? 0);
      },
    });
    this.refusedConnections = counter('agentwire_connections_refused_total', 'Connections answered 503 too_many_connections and closed because --max-connections were open', []);
    this.refusedConnections.inc(0);
    this.installs = counter('agentwire_agent_installs_total', 'Agent CLI installs (API and autoInstall), by agent and outcome', ['agent', 'outcome'] as const);
    this.processes = agentProcessMetrics(this.registry);
  }

  /** The answers of one route, counted by the caller as they happen: `route` is the matched route
   *  pattern (bounded), never the raw URL. See http-requests.ts. */
  httpRoute(route: string): RouteAnswers {
    return this.http.table(route);
  }

  subscriberOpened(format: 'sse' | 'ndjson'): void {
    this.subscribers.inc({ format });
  }

  subscriberClosed(format: 'sse' | 'ndjson'): void {
    this.subscribers.dec({ format });
  }

  subscriberDropped(reason: DropReason): void {
    this.dropped.inc({ reason });
  }

  connectionRefused(): void {
    this.refusedConnections.inc();
  }

  agentInstalled(agent: string, outcome: InstallOutcome): void {
    this.installs.inc({ agent, outcome });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition: the process-wide default metrics, then this app's own. */
  async scrape(): Promise<string> {
    const [process, own] = await Promise.all([processRegistry().metrics(), this.registry.metrics()]);
    return `${process}\n${own}`;
  }

  /** Stops listening for agent process exits (the app is closing). */
  close(): void {
    this.processes.stop();
  }
}
