// How long a session made over ACP lives (docs/acp-server.md, "Session lifetime"). An ACP client
// (an editor, a command-line client) makes sessions and rarely says when it is done with them, so
// without this every run would leave a live session and an agent process behind. One per daemon
// (per SessionManager): a session made by session/new is held by the connections that follow it
// (the one that made it, and any that load or resume it, such as the bridge reconnecting after a
// cut). It ends (terminated: its agent is reaped, its turn cancelled; the session stays readable
// as an ended session until the ended-session TTL) when
//   - a client closes it (session/close),
//   - the last connection holding it goes away for good (a close frame; the bridge sends one when
//     its stdin closes), or was cut and none took it up again within the grace period,
//   - it has been idle (no turn running, no event) past the idle TTL, held or not,
// unless the client that made it asked to keep it (`_meta.agentwire.keep`; `agentwire acp
// --keep-sessions`), which only spares it the first two: the idle TTL still applies.
// Sessions made otherwise (over HTTP) are never ended here: loading them takes no ownership.
import type { FastifyBaseLogger } from 'fastify';
import type { SessionManager } from '../sessions/session-manager.js';

export interface LifetimeSettings {
  /** An ACP session with no turn running and no event for this long ends (0: never). */
  idleTtlMs: number;
  /** A connection cut without a close frame holds its sessions this long for a reconnect. */
  graceMs: number;
}

interface Held {
  keep: boolean;
  clients: Set<object>;
  grace?: NodeJS.Timeout;
  /** The log's last sequence when a sweep last saw it move or a turn run, and when (Date.now()). */
  seen: { sequence: number; at: number };
}

const lifetimes = new WeakMap<SessionManager, AcpSessionLifetime>();

/** The daemon's one lifetime keeper (made at the first ACP connection). */
export function acpLifetime(sessions: SessionManager, settings: LifetimeSettings, logger: FastifyBaseLogger): AcpSessionLifetime {
  let lifetime = lifetimes.get(sessions);
  if (!lifetime) lifetimes.set(sessions, (lifetime = new AcpSessionLifetime(sessions, settings, logger)));
  return lifetime;
}

export class AcpSessionLifetime {
  private readonly held = new Map<string, Held>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly sessions: SessionManager,
    private readonly settings: LifetimeSettings,
    private readonly logger: FastifyBaseLogger,
  ) {}

  /** A session `client` made over ACP. */
  adopt(sessionId: string, client: object, keep: boolean): void {
    this.prune();
    this.held.set(sessionId, { keep, clients: new Set([client]), seen: { sequence: -1, at: Date.now() } });
    this.startSweeping();
  }

  /** Forgets the sessions that ended or were deleted otherwise (the sweep does too, when there is one). */
  private prune(): void {
    for (const sessionId of [...this.held.keys()]) {
      try {
        if (this.sessions.get(sessionId).status !== 'ended') continue;
      } catch {
        // deleted
      }
      clearTimeout(this.held.get(sessionId)!.grace);
      this.held.delete(sessionId);
    }
  }

  /** Whether the session was made over ACP (and has not ended here). */
  owns(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  /** `client` follows the session (session/load, session/resume): an ACP session is held by it too. */
  attach(sessionId: string, client: object): void {
    const held = this.held.get(sessionId);
    if (!held) return;
    held.clients.add(client);
    clearTimeout(held.grace);
    delete held.grace;
  }

  /**
   * `client` went away: for good (a close frame), its sessions no other client holds end now;
   * cut (no close frame), they end after the grace period unless a client takes them up again.
   */
  left(client: object, forGood: boolean): void {
    for (const [sessionId, held] of this.held) {
      if (!held.clients.delete(client) || held.clients.size > 0 || held.keep) continue;
      if (forGood) void this.end(sessionId, 'its ACP client closed the connection');
      else if (!held.grace) {
        held.grace = setTimeout(() => {
          if (this.held.get(sessionId) === held && held.clients.size === 0) void this.end(sessionId, 'its ACP client was cut off and did not come back');
        }, this.settings.graceMs);
        held.grace.unref();
      }
    }
  }

  /** Ends the session: its turn (if any) is cancelled by the agent's end; resolves once it has ended. */
  async end(sessionId: string, why: string): Promise<void> {
    const held = this.held.get(sessionId);
    if (held) clearTimeout(held.grace);
    this.held.delete(sessionId);
    if (this.held.size === 0) this.stopSweeping();
    let session;
    try {
      session = this.sessions.get(sessionId);
    } catch {
      return; // deleted meanwhile
    }
    if (session.status === 'ended') return;
    this.logger.info({ sessionId }, `ACP session ends: ${why}`);
    await session.terminate().catch((err: unknown) => this.logger.warn({ err, sessionId }, 'ending an ACP session failed'));
  }

  /**
   * Ends the sessions idle past the TTL; forgets those that ended or were deleted meanwhile. Idle
   * is measured here, in real time (the sessions' own clock may be a test's): no turn running and
   * the log's last sequence unchanged since a sweep saw it change.
   */
  sweep(now = Date.now()): void {
    for (const [sessionId, held] of [...this.held]) {
      let session;
      try {
        session = this.sessions.get(sessionId);
      } catch {
        this.held.delete(sessionId);
        continue;
      }
      const sequence = session.log.lastSequence;
      if (session.status === 'ended') this.held.delete(sessionId);
      else if (session.status !== 'idle' || sequence !== held.seen.sequence) held.seen = { sequence, at: now };
      else if (now - held.seen.at >= this.settings.idleTtlMs) void this.end(sessionId, `idle for more than ${this.settings.idleTtlMs} ms`);
    }
    if (this.held.size === 0) this.stopSweeping();
  }

  private startSweeping(): void {
    if (this.sweeper || this.settings.idleTtlMs <= 0) return;
    // A quarter of the TTL: a session ends at most 25% past it, however short the TTL is set.
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(100, Math.floor(this.settings.idleTtlMs / 4))));
    this.sweeper.unref();
  }

  private stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
