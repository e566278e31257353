// The agent-independent rules of spec/conversion.md, once, for every agent (design rule 3):
// synthetic session start, user messages and turn boundaries; item.started before a completion that
// had none; one full-text delta for messages that streamed none; daemon itm_ ids with a native-id
// map; dedupe of repeated starts; HITL bookkeeping. Driven by capability flags, never agent ids.
import type { Draft, DraftItem, ProcessExit, TurnInput } from '../agents/types.js';
import type { Capabilities } from '../schema/agents.js';
import type { PermissionReply } from '../schema/api.js';
import type { ContentPart, PendingEvent, TurnEndedMetadata, UniversalItem } from '../schema/events.js';
import type { SessionSnapshot } from '../store/event-store.js';
import type { IdGenerator } from '../util/deps.js';
import { HitlBook } from './hitl.js';
import { ItemTable } from './item-table.js';

/** A normalized event, ready for EventLog.append, with the raw payload it came from. */
export interface Normalized {
  event: PendingEvent;
  raw: unknown;
  nativeSessionId?: string | null;
}

const DAEMON = { source: 'daemon', synthetic: true } as const;

export class Normalizer {
  readonly hitl = new HitlBook();
  private readonly items: ItemTable;
  private sessionStarted = false;
  private sessionEnded = false;
  private turnCount = 0;
  private turnId: string | null = null;
  /** Its turn.started is in the stream (agents with nativeTurnStart announce it themselves, later). */
  private turnAnnounced = false;
  private out: Normalized[] = [];
  /** A native session id learnt from a dropped duplicate start, for the next event to carry. */
  private nativeSessionId: string | null = null;
  private raw: unknown = null;
  /** Items a restored session had open when the daemon stopped, failed by agentGone. */
  private restoredItems: UniversalItem[] = [];
  /** The client asked to interrupt the running turn (see endTurn). */
  private interruptAsked = false;

  constructor(
    private readonly caps: Capabilities,
    ids: IdGenerator,
  ) {
    this.items = new ItemTable(ids);
  }

  get turnActive(): boolean {
    return this.turnId !== null;
  }
  get ended(): boolean {
    return this.sessionEnded;
  }

  /** The session was created: a synthetic start unless the agent announces its own. */
  sessionCreated(metadata: Record<string, unknown>, raw: unknown): Normalized[] {
    return this.run(raw, () => {
      if (this.caps.sessionLifecycle) return;
      this.sessionStarted = true;
      this.emit({ type: 'session.started', data: { metadata }, ...DAEMON });
    });
  }

  /** The daemon dispatched a turn: turn.started and, if the agent never echoes it, the user message. */
  turnStarted(input: TurnInput, raw: unknown): Normalized[] {
    return this.run(raw, () => {
      this.turnId = `turn_${++this.turnCount}`;
      this.interruptAsked = false;
      this.turnAnnounced = !this.caps.nativeTurnStart;
      if (this.turnAnnounced) this.emit({ type: 'turn.started', data: { turn_id: this.turnId }, ...DAEMON });
      if (!this.caps.userMessages) this.userMessage(input);
    });
  }

  /** The daemon is asking the agent to stop the running turn. Nothing is emitted: the agent ends it. */
  interruptRequested(): void {
    if (this.turnId) this.interruptAsked = true;
  }

  /** Drafts a converter produced from one native message. */
  agent(drafts: Draft[], raw: unknown): Normalized[] {
    return this.run(raw, () => drafts.forEach((d) => this.draft(d)));
  }

  /** The client answered a permission; the agent has been told. */
  permissionReplied(id: string, reply: PermissionReply, raw: unknown, reason?: string): Normalized[] {
    return this.run(raw, () => {
      const open = this.hitl.closePermission(id);
      if (!open || this.caps.nativeHitlResolution) return;
      const status = reply === 'reject' ? 'denied' : 'approved';
      const metadata = { ...asRecord(open.metadata), reply, ...(reason ? { reason } : {}) };
      this.emit({ type: 'permission.resolved', data: { ...open, status, metadata }, ...DAEMON });
    });
  }

  /** The client answered (answers) or rejected (null) a question; the agent has been told. */
  questionReplied(id: string, answers: string[][] | null, raw: unknown): Normalized[] {
    // QuestionEventData has no metadata; why a question was answered is in `raw` (see Session).
    return this.run(raw, () => {
      const open = this.hitl.closeQuestion(id);
      if (!open || this.caps.nativeHitlResolution) return;
      const data = answers
        ? { ...open, status: 'answered' as const, response: answers.map((a) => a.join(', ')).join('; ') }
        : { ...open, status: 'rejected' as const };
      this.emit({ type: 'question.resolved', data, ...DAEMON });
    });
  }

  /** What a restarted daemon needs to close what was open (stored with the session's row). */
  snapshot(): SessionSnapshot {
    return {
      turnId: this.turnId,
      turnAnnounced: this.turnAnnounced,
      turnCount: this.turnCount,
      permissions: [...this.hitl.permissions.values()],
      questions: [...this.hitl.questions.values()],
      // Items are open only within a turn; outside one there is nothing to walk. Their streamed
      // text is left out: it is in the log as deltas already, and copying a long message's whole
      // text at every commit would make a flood quadratic.
      openItems: this.turnId ? this.items.openItems().map((item) => this.items.universal({ ...item, content: item.content.filter((p) => p.type !== 'text') }, 'failed')) : [],
    };
  }

  /** A stored session comes back (daemon restart): its turn and HITL bookkeeping as they were. */
  restore(snapshot: SessionSnapshot, ended: boolean): void {
    this.sessionStarted = true;
    this.sessionEnded = ended;
    this.turnCount = snapshot.turnCount;
    this.turnId = snapshot.turnId;
    this.turnAnnounced = snapshot.turnAnnounced ?? true;
    this.restoredItems = snapshot.openItems ?? [];
    for (const p of snapshot.permissions) this.hitl.openPermission(p);
    for (const q of snapshot.questions) this.hitl.openQuestion(q);
  }

  /**
   * The agent is gone but the session lives on: the daemon restarted under a running turn (an
   * `error` says so and the turn ends as `error`), or the daemon is stopping gracefully (the turn
   * ends as `interrupted`). Open items fail and pending HITL requests are cancelled either way.
   */
  agentGone(why: 'daemon_restarted' | 'daemon_stopping'): Normalized[] {
    return this.run(null, () => {
      for (const item of this.restoredItems) this.emit({ type: 'item.completed', data: { item }, ...DAEMON });
      this.restoredItems = [];
      if (!this.turnId) return;
      this.announceTurn();
      if (why === 'daemon_restarted') {
        const message = 'The daemon restarted while this turn was running; the agent was stopped. The next message resumes its session.';
        this.emit({ type: 'error', data: { message, code: 'daemon_restarted' }, ...DAEMON });
      }
      this.endTurn({ reason: why === 'daemon_restarted' ? 'error' : 'interrupted' }, DAEMON, why);
    });
  }

  /** Something the daemon itself must tell the stream (the store failing, say). */
  daemonError(message: string, code: string, details?: Record<string, unknown>): Normalized[] {
    return this.run(null, () => this.emit({ type: 'error', data: { message, code, ...(details ? { details } : {}) }, ...DAEMON }));
  }

  /** The agent could not be started again on its own session: say why and end the session. */
  resumeFailed(message: string): Normalized[] {
    return this.run(null, () => {
      this.announceTurn();
      this.emit({ type: 'error', data: { message, code: 'native_resume_failed' }, ...DAEMON });
      this.endTurn({ reason: 'error' }, DAEMON);
      this.endSession({ reason: 'error', terminated_by: 'daemon', message }, DAEMON);
    });
  }

  /** The turn was started but the agent never received it: say so and close the turn. */
  turnAborted(message: string): Normalized[] {
    return this.run(null, () => {
      this.announceTurn();
      this.emit({ type: 'error', data: { message, code: 'turn_not_delivered' }, ...DAEMON });
      this.endTurn({ reason: 'error' }, DAEMON);
    });
  }

  /** The agent process is gone. Close what is open, then end the session if the agent did not. */
  processExited(exit: ProcessExit, message?: string): Normalized[] {
    const raw = { exit_code: exit.exitCode, signal: exit.signal, requested: exit.requested };
    return this.run(raw, () => {
      const crashed = !exit.requested && (exit.exitCode !== 0 || exit.signal !== null);
      const why = exit.signal ? `signal ${exit.signal}` : `code ${exit.exitCode}`;
      const text = message ?? `agent process exited with ${why}`;
      if (crashed && !this.sessionEnded) {
        this.emit({
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
    });
  }

  private draft(d: Draft): void {
    const origin = d.type === 'agent.unparsed' ? DAEMON : originOf(d);
    switch (d.type) {
      case 'session.started':
        if (this.sessionStarted) {
          // A repeated start is dropped, but it may be the first to name the agent's session id
          // (Claude Code reports it only with its first turn): the next event carries it.
          if (d.native_session_id) this.nativeSessionId = d.native_session_id;
          return;
        }
        this.sessionStarted = true;
        return this.emit({ type: d.type, data: d.data, ...origin }, d.native_session_id ?? null);
      case 'session.ended':
        this.endTurn({ reason: d.data.reason }, DAEMON);
        return this.endSession(d.data, origin);
      case 'turn.started':
        if (this.turnId && this.caps.nativeTurnStart && !this.turnAnnounced) {
          this.turnAnnounced = true;
          return this.emit({ type: d.type, data: { ...d.data, turn_id: this.turnId }, ...origin });
        }
        return; // the daemon already announced this turn
      case 'turn.ended':
        return this.endTurn(d.data.metadata, origin);
      case 'item.started':
        return this.startItem(d.item, origin);
      case 'item.delta':
        return this.delta(d, origin);
      case 'item.completed':
        return this.completeItem(d.item, origin);
      case 'permission.requested':
        if (this.hitl.openPermission(d.data)) this.emit({ type: d.type, data: d.data, ...origin });
        return;
      case 'permission.resolved':
        this.hitl.closePermission(d.data.permission_id);
        return this.emit({ type: d.type, data: d.data, ...origin });
      case 'question.requested':
        if (this.hitl.openQuestion(d.data)) this.emit({ type: d.type, data: d.data, ...origin });
        return;
      case 'question.resolved':
        this.hitl.closeQuestion(d.data.question_id);
        return this.emit({ type: d.type, data: d.data, ...origin });
      case 'error':
      case 'agent.unparsed':
        return this.emit({ type: d.type, data: d.data, ...origin } as PendingEvent);
    }
  }

  private startItem(item: DraftItem, origin: Origin): void {
    const track = this.items.track(item);
    if (track.started) return; // dedupe: agents repeat starts (e.g. on reconnect or update)
    track.started = true;
    this.emit({ type: 'item.started', data: { item: this.items.universal(item, 'in_progress') }, ...origin });
  }

  private delta(d: Extract<Draft, { type: 'item.delta' }>, origin: Origin): void {
    const track = this.items.track({ key: d.key, native_item_id: d.native_item_id, ...d.stub });
    if (!track.started) {
      // A delta before its item (OpenCode's ordering rule): open a stub so the delta has a parent.
      const stub = { kind: 'message', role: 'assistant', ...d.stub } as const;
      this.startItem({ ...stub, key: d.key, native_item_id: d.native_item_id, content: [], status: 'in_progress' }, DAEMON);
    }
    track.deltas = true;
    track.text += d.delta;
    this.emit({ type: 'item.delta', data: { item_id: track.id, native_item_id: d.native_item_id, delta: d.delta }, ...origin });
  }

  private completeItem(item: DraftItem, origin: Origin): void {
    const track = this.items.track(item);
    if (track.completed) return;
    if (!track.started) {
      // Messages start empty (their text arrives as the delta below); other kinds start whole.
      const content = item.kind === 'message' || item.kind === 'system' ? [] : item.content;
      this.startItem({ ...item, content }, DAEMON);
    }
    const text = textOf(item.content);
    if (!track.deltas && text && (item.kind === 'message' || item.kind === 'system')) {
      // Every message streams at least once (delta policy), even from agents without deltas.
      track.deltas = true;
      this.emit({ type: 'item.delta', data: { item_id: track.id, native_item_id: item.native_item_id, delta: text }, ...DAEMON });
    }
    this.emit({ type: 'item.completed', data: { item: this.items.universal(item, item.status) }, ...origin });
    this.items.settle(track);
  }

  private userMessage(input: TurnInput): void {
    const content: ContentPart[] = [{ type: 'text', text: input.message }];
    for (const a of input.attachments) {
      content.push(a.mime?.startsWith('image/') ? { type: 'image', path: a.path, mime: a.mime } : { type: 'file_ref', path: a.path, action: 'read' });
    }
    const item: DraftItem = { key: `user:${this.turnId}`, native_item_id: null, kind: 'message', role: 'user', content, status: 'completed' };
    this.completeItem(item, DAEMON);
  }

  /** Ends the running turn: items left open are failed, open HITL requests are cancelled. */
  private endTurn(metadata: TurnEndedMetadata, origin: Origin, cancelReason = 'turn_ended'): void {
    if (!this.turnId) return;
    // Some agents end an interrupted turn as a failed one (Claude Code's and Amp's error result):
    // the daemon knows it asked, so the reason says what happened.
    if (this.interruptAsked && metadata.reason === 'error') metadata = { ...metadata, reason: 'interrupted' };
    this.interruptAsked = false;
    // A turn that ends before its agent announced it (a failed delivery or resume, a restart)
    // still opens in the stream: clients pair every turn.ended with a turn.started.
    this.announceTurn();
    this.turnAnnounced = false;
    for (const item of this.items.openItems()) this.completeItem({ ...item, status: 'failed' }, DAEMON);
    const cancelled = { reason: cancelReason };
    for (const p of [...this.hitl.permissions.values()]) {
      this.hitl.closePermission(p.permission_id);
      this.emit({ type: 'permission.resolved', data: { ...p, status: 'denied', metadata: { ...asRecord(p.metadata), ...cancelled } }, ...DAEMON });
    }
    for (const q of [...this.hitl.questions.values()]) {
      this.hitl.closeQuestion(q.question_id);
      this.emit({ type: 'question.resolved', data: { ...q, status: 'rejected' }, ...DAEMON });
    }
    const turn_id = this.turnId;
    this.turnId = null;
    this.emit({ type: 'turn.ended', data: { turn_id, metadata }, ...origin });
  }

  /** The running turn's turn.started, if its agent has not announced it yet. */
  private announceTurn(): void {
    if (!this.turnId || this.turnAnnounced) return;
    this.turnAnnounced = true;
    this.emit({ type: 'turn.started', data: { turn_id: this.turnId }, ...DAEMON });
  }

  private endSession(data: Extract<PendingEvent, { type: 'session.ended' }>['data'], origin: Origin): void {
    if (this.sessionEnded) return;
    this.sessionEnded = true;
    this.emit({ type: 'session.ended', data, ...origin });
  }

  private run(raw: unknown, body: () => void): Normalized[] {
    this.out = [];
    this.raw = raw;
    body();
    return this.out;
  }

  private emit(event: PendingEvent, nativeSessionId?: string | null): void {
    const id = nativeSessionId ?? this.nativeSessionId;
    this.nativeSessionId = null;
    this.out.push({ event, raw: this.raw, ...(id ? { nativeSessionId: id } : {}) });
  }
}

type Origin = { source: 'agent' | 'daemon'; synthetic: boolean };

function originOf(d: Draft): Origin {
  const synthetic = d.synthetic ?? d.source === 'daemon';
  return { source: d.source ?? (synthetic ? 'daemon' : 'agent'), synthetic };
}

function textOf(content: UniversalItem['content']): string {
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

