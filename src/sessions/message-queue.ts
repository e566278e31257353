// Messages sent while a turn runs (docs/queue-steer-fork.md): queued to start as the next turns,
// steered into the running turn, or starting next after an interrupt. The queue is in the log (a
// message.queued and a message.dequeued event per message, so every reader sees it) and in the
// session's stored snapshot (so it survives a restart); it starts its next message once a turn has
// ended, whatever ended it, and empties (as session_ended) when the session ends.
import type { AgentHandle, TurnInput } from '../agents/types.js';
import { ApiError } from '../errors.js';
import type { Capabilities } from '../schema/agents.js';
import type { MessageRequest } from '../schema/api.js';
import type { Delivery, MessageAccepted, QueuedMessage } from '../schema/delivery.js';
import type { UniversalEvent } from '../schema/events.js';
import type { Clock, IdGenerator } from '../util/deps.js';
import type { SessionCore } from './session-parts.js';

/** Every buffer has a bound: a session holds at most this many queued messages. */
export const MAX_QUEUED = 100;

/** What the queue needs of its session (session.ts). */
export interface QueueContext extends SessionCore {
  ids: IdGenerator;
  clock: Clock;
  capabilities: Capabilities;
  agent: string;
  /** Starts a turn now (the session is idle); resolves once the agent has the message. */
  startTurn(input: TurnInput, raw: unknown, messageId: string): Promise<void>;
  interrupt(): Promise<void>;
  /** The running agent, if any. */
  handle(): AgentHandle | undefined;
  /** Joins a steered message to a turn its budget holds before the agent saw it (budget.ts); false if none is held. */
  steerHeld(input: TurnInput): boolean;
  /** The session can take no more turns (ended, or ending). */
  closed(): boolean;
  /** The message's attachments, resolved against the session's cwd (throws on a bad path). */
  input(body: MessageRequest): TurnInput;
}

export class MessageQueue {
  private entries: QueuedMessage[] = [];
  private drainScheduled = false;

  constructor(private readonly ctx: QueueContext) {}

  get length(): number {
    return this.entries.length;
  }

  list(): QueuedMessage[] {
    return [...this.entries];
  }

  /** A message with a delivery: started, queued or steered (see the module comment). */
  async deliver(body: MessageRequest & { delivery: Delivery }): Promise<MessageAccepted> {
    const { delivery } = body;
    const input = this.ctx.input(body);
    const messageId = this.ctx.ids.next('msg');
    const idle = !this.ctx.normalizer.turnActive;
    if (idle && this.entries.length === 0) {
      await this.ctx.startTurn(input, body, messageId);
      return { messageId, delivery, status: 'started' };
    }
    if (delivery === 'steer' && !idle) return this.steer(input, body, messageId);
    if (this.entries.length >= MAX_QUEUED) {
      throw new ApiError('queue_full', `Session '${this.ctx.sessionId}' already has ${MAX_QUEUED} queued messages; wait for some to start or cancel them.`, {
        sessionId: this.ctx.sessionId,
        queued: this.entries.length,
      });
    }
    // An interrupt's message goes first; a steer that found no running turn (the queue is about
    // to start its next message) takes that place too: it is what the sender wants next.
    const first = delivery !== 'queue';
    const position = first ? this.entries.filter((e) => e.delivery === 'interrupt').length : this.entries.length;
    this.add(position, { messageId, message: body.message, ...attachmentsOf(input), delivery: delivery === 'queue' ? 'queue' : 'interrupt', queuedAt: this.ctx.clock.now().toISOString() });
    if (delivery === 'interrupt' && !idle) await this.ctx.interrupt().catch(() => {}); // the turn may have just ended
    if (idle) this.scheduleDrain();
    return { messageId, delivery, status: 'queued', position };
  }

  /** DELETE …/queue/{messageId}: the message leaves the queue without starting. */
  cancel(messageId: string): void {
    const i = this.entries.findIndex((e) => e.messageId === messageId);
    if (i < 0) {
      throw new ApiError('queued_message_not_found', `Session '${this.ctx.sessionId}' has no queued message '${messageId}' (it may have started already).`, {
        sessionId: this.ctx.sessionId,
        messageId,
      });
    }
    this.entries.splice(i, 1);
    this.ctx.apply(this.ctx.normalizer.daemonEvent({ type: 'message.dequeued', data: { message_id: messageId, reason: 'cancelled' } }));
  }

  /** Every event the session logged: a turn's end starts the next message; the session's end empties the queue. */
  logged(event: UniversalEvent): void {
    if (event.type === 'turn.ended' && this.entries.length > 0) this.scheduleDrain();
  }

  /** The session ended: nothing queued will ever start. */
  sessionEnded(): void {
    const dropped = this.entries;
    this.entries = [];
    for (const e of dropped) this.ctx.apply(this.ctx.normalizer.daemonEvent({ type: 'message.dequeued', data: { message_id: e.messageId, reason: 'session_ended' } }));
  }

  /** Starts the next message once the current call stack (the turn's end being logged) is done. */
  scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  /** What the stored snapshot keeps (Session.progress). */
  snapshot(): QueuedMessage[] {
    return this.entries;
  }

  restore(entries: QueuedMessage[] | undefined): void {
    this.entries = [...(entries ?? [])];
  }

  private drain(): void {
    if (this.entries.length === 0 || this.ctx.normalizer.turnActive || this.ctx.closed()) return;
    const next = this.entries.shift()!;
    this.ctx.apply(this.ctx.normalizer.daemonEvent({ type: 'message.dequeued', data: { message_id: next.messageId, reason: 'started' } }));
    const input: TurnInput = { message: next.message, attachments: next.attachments ?? [] };
    // A failed start is in the log already (turn_not_delivered, or the session ended when its agent
    // could not resume); the queue goes on with the next message after that turn's end.
    this.ctx.startTurn(input, { message: next.message, delivery: next.delivery }, next.messageId).catch((err: Error) => {
      this.ctx.logger.warn({ err, messageId: next.messageId }, 'a queued message could not be started');
    });
  }

  private async steer(input: TurnInput, raw: unknown, messageId: string): Promise<MessageAccepted> {
    if (this.ctx.steerHeld(input)) {
      this.ctx.apply(this.ctx.normalizer.steered(input, messageId, raw));
      return { messageId, delivery: 'steer', status: 'steered' };
    }
    const handle = this.ctx.handle();
    if (!this.ctx.capabilities.steer || !handle?.steer) {
      throw new ApiError(
        'steer_unsupported',
        `The ${this.ctx.agent} agent cannot take a message into a running turn; send it with delivery "queue" (next turn) or "interrupt" (stop this turn, then run it).`,
        { sessionId: this.ctx.sessionId, agent: this.ctx.agent },
      );
    }
    this.ctx.apply(this.ctx.normalizer.steered(input, messageId, raw));
    try {
      await handle.steer(input);
    } catch (err) {
      const message = `The message could not be given to the running turn: ${(err as Error).message}`;
      this.ctx.apply(this.ctx.normalizer.daemonError(message, 'steer_not_delivered', { message_id: messageId }));
      throw err instanceof ApiError ? err : new ApiError('agent_io_failed', message, { sessionId: this.ctx.sessionId });
    }
    return { messageId, delivery: 'steer', status: 'steered' };
  }

  private add(position: number, entry: QueuedMessage): void {
    this.entries.splice(position, 0, entry);
    const { messageId, message, attachments, delivery } = entry;
    this.ctx.apply(
      this.ctx.normalizer.daemonEvent({
        type: 'message.queued',
        data: { message_id: messageId, message, ...(attachments ? { attachments } : {}), delivery, position },
      }),
    );
  }
}

function attachmentsOf(input: TurnInput): { attachments?: TurnInput['attachments'] } {
  return input.attachments.length > 0 ? { attachments: input.attachments } : {};
}
