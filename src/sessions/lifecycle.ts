// Session and turn lifecycle of docs/conversion.md: which turn is running and whether its
// turn.started is in the stream, the synthetic session and turn starts and ends, dedupe of repeated
// starts, and how the stream closes when the agent exits, crashes, cannot resume or is gone.
import type { Draft, ProcessExit } from '../agents/types.js';
import type { Capabilities } from '../schema/agents.js';
import type { PendingEvent, TurnEndedMetadata } from '../schema/events.js';
import type { SessionSnapshot } from '../store/event-store.js';
import { DAEMON, type EventBatch, type Origin } from './event-batch.js';
import type { UsageBook } from './usage-book.js';

type SessionEndedData = Extract<PendingEvent, { type: 'session.ended' }>['data'];

export class Lifecycle {
  private sessionStarted = false;
  private sessionEnded = false;
  private turnCount = 0;
  private turn: string | null = null;
  /** Its turn.started is in the stream (agents with nativeTurnStart announce it themselves, later). */
  private turnAnnounced = false;
  /** The client asked to interrupt the running turn (see endTurn). */
  private interruptAsked = false;
  /** The daemon stopped the running turn because its budget request was rejected (see endTurn). */
  private budgetStop = false;
  /** The message id of the running turn, when it was sent with a delivery (turn.started names it). */
  private messageId: string | undefined;

  /** `closeOpen` fails the items, ends the sub-agents and cancels the HITL requests a turn leaves
   *  open as it ends (`failed`: the turn ended in an error); `closeSession` ends what outlives a
   *  turn (background sub-agents) as the session ends; `usage` is told when a turn starts, and
   *  settles the session's totals as it ends. */
  constructor(
    private readonly caps: Capabilities,
    private readonly batch: EventBatch,
    private readonly closeOpen: (cancelReason: string, failed: boolean) => void,
    private readonly usage: UsageBook,
    private readonly closeSession: () => void = () => undefined,
  ) {}

  get turnId(): string | null {
    return this.turn;
  }
  get ended(): boolean {
    return this.sessionEnded;
  }
  /** Turns started so far (the next is turn_<turns + 1>). */
  get turns(): number {
    return this.turnCount;
  }

  /** The session was created: a synthetic start unless the agent announces its own. */
  sessionCreated(metadata: Record<string, unknown>): void {
    if (this.caps.sessionLifecycle) return;
    this.sessionStarted = true;
    this.batch.emit({ type: 'session.started', data: { metadata }, ...DAEMON });
  }

  /** The daemon dispatched a turn: turn.started now, unless the agent announces it itself. */
  startTurn(messageId?: string): void {
    this.turn = `turn_${++this.turnCount}`;
    this.interruptAsked = false;
    this.budgetStop = false;
    this.usage.turnStarted();
    this.messageId = messageId;
    this.turnAnnounced = !this.caps.nativeTurnStart;
    if (this.turnAnnounced) this.batch.emit({ type: 'turn.started', data: this.started(), ...DAEMON });
  }

  /** turn.started's data for the running turn. */
  private started(extra: Record<string, unknown> = {}): { turn_id: string; message_id?: string } {
    return { ...extra, turn_id: this.turn!, ...(this.messageId ? { message_id: this.messageId } : {}) };
  }

  interruptRequested(): void {
    if (this.turn) this.interruptAsked = true;
  }

  /** The daemon stops the turn over its budget: however the agent ends it, it ends as budget_exceeded. */
  budgetStopRequested(): void {
    if (this.turn) this.budgetStop = true;
  }

  agentSessionStarted(d: Extract<Draft, { type: 'session.started' }>, origin: Origin): void {
    if (this.sessionStarted) {
      // A repeated start is dropped, but it may be the first to name the agent's session id
      // (Claude Code reports it only with its first turn): the next event carries it.
      if (d.native_session_id) this.batch.carryNativeSessionId(d.native_session_id);
      return;
    }
    this.sessionStarted = true;
    this.batch.emit({ type: d.type, data: d.data, ...origin }, d.native_session_id ?? null);
  }

  agentSessionEnded(data: SessionEndedData, origin: Origin): void {
    this.endTurn({ reason: data.reason }, DAEMON);
    this.endSession(data, origin);
  }

  agentTurnStarted(d: Extract<Draft, { type: 'turn.started' }>, origin: Origin): void {
    if (this.turn && this.caps.nativeTurnStart && !this.turnAnnounced) {
      this.turnAnnounced = true;
      this.batch.emit({ type: d.type, data: this.started(d.data), ...origin });
    }
    // otherwise the daemon already announced this turn
  }

  /** Ends the running turn: items left open are failed, open HITL requests are cancelled. */
  endTurn(metadata: TurnEndedMetadata, origin: Origin, cancelReason = 'turn_ended'): void {
    if (!this.turn) return;
    // Some agents end an interrupted turn as a failed one (Claude Code's and Amp's error result):
    // the daemon knows it asked, so the reason says what happened.
    if (this.interruptAsked && metadata.reason === 'error') metadata = { ...metadata, reason: 'interrupted' };
    if (this.budgetStop && (metadata.reason === 'error' || metadata.reason === 'interrupted')) metadata = { ...metadata, reason: 'budget_exceeded' };
    this.interruptAsked = false;
    this.budgetStop = false;
    // A turn that ends before its agent announced it (a failed delivery or resume, a restart)
    // still opens in the stream: clients pair every turn.ended with a turn.started.
    this.announceTurn();
    this.turnAnnounced = false;
    this.closeOpen(cancelReason, metadata.reason === 'error');
    const turn_id = this.turn;
    metadata = this.usage.turnEnded(metadata, turn_id);
    this.turn = null;
    this.messageId = undefined;
    this.batch.emit({ type: 'turn.ended', data: { turn_id, metadata }, ...origin });
  }

  /**
   * The agent is gone but the session lives on: the daemon restarted under a running turn (an
   * `error` says so and the turn ends as `error`), or the daemon is stopping gracefully (the turn
   * ends as `interrupted`).
   */
  agentGone(why: 'daemon_restarted' | 'daemon_stopping'): void {
    if (!this.turn) return;
    this.announceTurn();
    if (why === 'daemon_restarted') {
      const message = 'The daemon restarted while this turn was running; the agent was stopped. The next message resumes its session.';
      this.batch.emit({ type: 'error', data: { message, code: 'daemon_restarted' }, ...DAEMON });
    }
    this.endTurn({ reason: why === 'daemon_restarted' ? 'error' : 'interrupted' }, DAEMON, why);
  }

  /** The agent could not be started again on its own session: say why and end the session. */
  resumeFailed(message: string): void {
    this.announceTurn();
    this.batch.emit({ type: 'error', data: { message, code: 'native_resume_failed' }, ...DAEMON });
    this.endTurn({ reason: 'error' }, DAEMON);
    this.endSession({ reason: 'error', terminated_by: 'daemon', message }, DAEMON);
  }

  /** The turn was started but the agent never received it: say so and close the turn. */
  turnAborted(message: string): void {
    this.announceTurn();
    this.batch.emit({ type: 'error', data: { message, code: 'turn_not_delivered' }, ...DAEMON });
    this.endTurn({ reason: 'error' }, DAEMON);
  }

  /** The agent process is gone. Close what is open, then end the session if the agent did not. */
  processExited(exit: ProcessExit, message?: string): void {
    const crashed = !exit.requested && (exit.exitCode !== 0 || exit.signal !== null);
    const why = exit.signal ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
    const text = message ?? `agent process exited with ${why}`;
    if (crashed && !this.sessionEnded) {
      this.batch.emit({
        type: 'error',
        data: { message: text, code: 'agent_exited', details: { exit_code: exit.exitCode, signal: exit.signal } },
        ...DAEMON,
      });
    }
    this.endTurn({ reason: exit.requested ? 'terminated' : crashed ? 'error' : 'agent_exited' }, DAEMON);
    if (this.sessionEnded) return;
    if (exit.requested) {
      this.endSession({ reason: 'terminated', terminated_by: 'daemon', exit_code: exit.exitCode }, DAEMON);
    } else if (crashed) {
      this.endSession(
        { reason: 'error', terminated_by: 'agent', message: text, exit_code: exit.exitCode, stderr: exit.stderr },
        DAEMON,
      );
    } else {
      this.endSession({ reason: 'completed', terminated_by: 'agent', exit_code: 0 }, DAEMON);
    }
  }

  /** The turn part of what a restarted daemon needs (see Normalizer.snapshot). */
  snapshot(): Pick<SessionSnapshot, 'turnId' | 'turnAnnounced' | 'turnCount'> {
    return { turnId: this.turn, turnAnnounced: this.turnAnnounced, turnCount: this.turnCount };
  }

  restore(snapshot: SessionSnapshot, ended: boolean): void {
    this.sessionStarted = true;
    this.sessionEnded = ended;
    this.turnCount = snapshot.turnCount;
    this.turn = snapshot.turnId;
    this.turnAnnounced = snapshot.turnAnnounced ?? true;
  }

  /** The running turn's turn.started, if its agent has not announced it yet. */
  announceTurn(): void {
    if (!this.turn || this.turnAnnounced) return;
    this.turnAnnounced = true;
    this.batch.emit({ type: 'turn.started', data: this.started(), ...DAEMON });
  }

  private endSession(data: SessionEndedData, origin: Origin): void {
    if (this.sessionEnded) return;
    this.sessionEnded = true;
    this.closeSession();
    this.batch.emit({ type: 'session.ended', data, ...origin });
  }
}
