// The warm pool (--warm <agent>=<n>): n spare agent processes per agent, started ahead of any
// session with the daemon's defaults and the daemon's own agent environment (no session env), so
// that a create whose options a spare can serve (the driver says which: AgentDriver.spareServes)
// adopts one instead of waiting for an agent to boot. A spare is only ever handed to one session
// and never comes back: a session's env or credentials cannot reach another session through it.
//
// Refills wait until the session that took a spare had its first turn's first event (or a moment
// passed without a turn), so the new agent booting does not compete with that turn for the CPU.
// A spare that fails to start or dies unadopted is replaced after a growing delay, never at once.
import type { AgentRegistry } from '../agents/registry.js';
import type { AgentDriver, AgentHandle, AgentSink, SpareOptions, StartOptions } from '../agents/types.js';
import type { AgentId } from '../schema/agents.js';
import { SpareRelay } from './spare-relay.js';

export interface WarmPoolOptions {
  registry: AgentRegistry;
  /** Spares kept per agent. */
  sizes: Partial<Record<AgentId, number>>;
  /** The cwd spares start in: the daemon's default session cwd. */
  baseDir: string;
  logger: StartOptions['logger'] & { error(obj: object, msg?: string): void };
  /** How many more agent processes fit the session limit now (sessions and spares count alike). */
  room: () => number;
  /** Refill after a pooled session's first turn event, or after this long without a turn. */
  refillIdleMs?: number;
  /** ...and at the latest after this long. */
  refillMaxMs?: number;
  /** First delay after a failed spare; doubles per failure in a row, up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

interface Spare {
  handle: AgentHandle;
  relay: SpareRelay;
  options: SpareOptions;
}

export interface WarmCount {
  /** Spares wanted (--warm). */
  size: number;
  /** Spares ready to be taken now. */
  ready: number;
  /** Spares booting. */
  starting: number;
}

export class WarmPool {
  private readonly ready = new Map<AgentId, Spare[]>();
  private readonly starting = new Map<AgentId, number>();
  /** Refills held back while a pooled session's first turn runs, per agent. */
  private readonly holds = new Map<AgentId, number>();
  private readonly failures = new Map<AgentId, number>();
  private readonly backoff = new Map<AgentId, NodeJS.Timeout>();
  /** Spares being started or stopped: close() waits for them. */
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly options: WarmPoolOptions) {
    for (const agent of this.agents()) {
      if (!options.registry[agent]?.spareServes) throw new Error(`agent '${agent}' keeps no warm spares`);
    }
  }

  /** Starts the spares (the app calls it once it is ready). */
  fill(): void {
    for (const agent of this.agents()) this.topUp(agent);
  }

  /** Spares alive or booting, counted against the session limit. */
  get size(): number {
    let n = 0;
    for (const agent of this.agents()) n += (this.ready.get(agent)?.length ?? 0) + (this.starting.get(agent) ?? 0);
    return n;
  }

  counts(): Partial<Record<AgentId, WarmCount>> {
    const out: Partial<Record<AgentId, WarmCount>> = {};
    for (const agent of this.agents()) {
      out[agent] = { size: this.options.sizes[agent] ?? 0, ready: this.ready.get(agent)?.length ?? 0, starting: this.starting.get(agent) ?? 0 };
    }
    return out;
  }

  /**
   * A spare for a session starting with `options`, adopted by `sink`; undefined when none fits:
   * the session brings its own env, MCP servers or native session, or no ready spare serves it.
   */
  take(driver: AgentDriver, options: StartOptions, sink: AgentSink, firstTurnEvent: Promise<void>): AgentHandle | undefined {
    if (this.closed || !driver.spareServes) return undefined;
    if (Object.keys(options.env).length > 0 || Object.keys(options.mcp ?? {}).length > 0 || options.nativeSessionId) return undefined;
    const spares = this.ready.get(driver.id) ?? [];
    const at = spares.findIndex((s) => driver.spareServes!(s.options, options));
    if (at < 0) return undefined;
    const [spare] = spares.splice(at, 1);
    this.failures.delete(driver.id);
    const handle = spare!.relay.adopt(spare!.handle, sink, options.logger);
    this.holdRefill(driver.id, spare!.relay, firstTurnEvent);
    return handle;
  }

  /** Stops spares beyond the room left (a session that started without one took their place). */
  trim(): void {
    let excess = -this.options.room();
    for (const agent of this.agents()) {
      const spares = this.ready.get(agent) ?? [];
      while (excess > 0 && spares.length > 0) {
        this.stop(spares.pop()!);
        excess--;
      }
    }
  }

  /** Daemon shutdown: every spare, ready or booting, is stopped and reaped. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.backoff.values()) clearTimeout(timer);
    for (const spares of this.ready.values()) spares.splice(0).forEach((s) => this.stop(s));
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private agents(): AgentId[] {
    return (Object.entries(this.options.sizes) as [AgentId, number][]).filter(([, n]) => n > 0).map(([agent]) => agent);
  }

  private defaults(driver: AgentDriver): SpareOptions {
    return { cwd: this.options.baseDir, agentMode: driver.modes[0]!.id, permissionMode: driver.permissionModes[0]!, model: undefined, variant: undefined };
  }

  private topUp(agent: AgentId): void {
    if (this.closed || this.backoff.has(agent) || (this.holds.get(agent) ?? 0) > 0) return;
    const want = this.options.sizes[agent] ?? 0;
    while ((this.ready.get(agent)?.length ?? 0) + (this.starting.get(agent) ?? 0) < want && this.options.room() > 0) this.startOne(agent);
  }

  private startOne(agent: AgentId): void {
    const driver = this.options.registry[agent]!;
    const options = this.defaults(driver);
    const relay = new SpareRelay(this.options.logger);
    this.starting.set(agent, (this.starting.get(agent) ?? 0) + 1);
    const started = driver.start({ sessionId: `spare-${agent}`, ...options, env: {}, logger: relay.logger }, relay);
    const settled = started.then(
      (handle) => {
        this.starting.set(agent, this.starting.get(agent)! - 1);
        if (this.closed) return void this.stop({ handle, relay, options });
        const spare = { handle, relay, options };
        relay.onDeath = (exit) => {
          const list = this.ready.get(agent) ?? [];
          if (list.includes(spare)) list.splice(list.indexOf(spare), 1);
          if (exit === 'overflow') this.stop(spare);
          this.failed(agent, exit === 'overflow' ? 'printed too much before any session took it' : `exited (code ${exit.exitCode ?? exit.signal})`);
        };
        this.ready.set(agent, [...(this.ready.get(agent) ?? []), spare]);
      },
      (err: Error) => {
        this.starting.set(agent, this.starting.get(agent)! - 1);
        if (!this.closed) this.failed(agent, err.message);
      },
    );
    this.track(settled);
  }

  private failed(agent: AgentId, why: string): void {
    if (this.closed) return;
    const n = (this.failures.get(agent) ?? 0) + 1;
    this.failures.set(agent, n);
    const delay = Math.min((this.options.backoffMs ?? 1_000) * 2 ** (n - 1), this.options.maxBackoffMs ?? 60_000);
    this.options.logger.warn({ agent, failures: n, retryInMs: delay, why }, 'warm spare failed; starting another later');
    if (this.backoff.has(agent)) return;
    const timer = setTimeout(() => {
      this.backoff.delete(agent);
      this.topUp(agent);
    }, delay);
    timer.unref();
    this.backoff.set(agent, timer);
  }

  /** The refill after an adoption waits for the session's first turn event (bounded in time). */
  private holdRefill(agent: AgentId, relay: SpareRelay, firstTurnEvent: Promise<void>): void {
    this.holds.set(agent, (this.holds.get(agent) ?? 0) + 1);
    let released = false;
    const timers: NodeJS.Timeout[] = [];
    const release = () => {
      if (released) return;
      released = true;
      timers.forEach(clearTimeout);
      this.holds.set(agent, this.holds.get(agent)! - 1);
      this.topUp(agent);
    };
    void firstTurnEvent.then(release);
    timers.push(setTimeout(() => (relay.turnStarted ? undefined : release()), this.options.refillIdleMs ?? 2_000).unref());
    timers.push(setTimeout(release, this.options.refillMaxMs ?? 20_000).unref());
  }

  private stop(spare: Spare): void {
    spare.relay.onDeath = () => {};
    this.track(spare.handle.terminate().catch((err: Error) => this.options.logger.warn({ err: err.message }, 'could not stop a warm spare')));
  }

  private track(p: Promise<unknown>): void {
    this.pending.add(p);
    void p.catch(() => undefined).finally(() => this.pending.delete(p));
  }
}
