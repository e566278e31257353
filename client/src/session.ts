// A handle on one session: its id, and every call that concerns it. Holding a handle costs nothing
// (no connection, no state beyond the id), so a handle for a session that no longer exists just
// gets `session_not_found` from its next call.
import { followEvents, type EventsOptions } from './event-stream.js';
import { runTurn, type TurnOptions, type TurnResult } from './turn.js';
import { CREATE_TIMEOUT_MS, type Transport } from './transport.js';
import type {
  CallOptions,
  Delivery,
  ForkRequest,
  MessageAccepted,
  Budget,
  MessageRequest,
  PermissionReply,
  QuestionAnswers,
  QueuedMessage,
  SessionInfo,
  UniversalEvent,
} from './types.js';

export interface SendOptions extends CallOptions {
  /**
   * What to do with the message while a turn runs: `queue` it as the next turn, `steer` it into the
   * running turn (agents with capability `steer`), or `interrupt` the turn and run it next. With
   * no turn running, each starts the turn. Without it, a running turn is 409 `turn_in_progress`.
   */
  delivery?: Delivery;
}

/** A fork: a handle on the new session, and its SessionInfo (with `forkedFrom`). */
export interface ForkedSession {
  session: Session;
  info: SessionInfo;
}

/** A message without a delivery: its send answers 204 and resolves with nothing. */
type PlainMessage = string | (MessageRequest & { delivery?: undefined });

export class Session {
  constructor(
    private readonly transport: Transport,
    readonly id: string,
  ) {}

  /** The path parameters of this session's operations. */
  private get at(): { id: string } {
    return { id: this.id };
  }

  /** The session's current SessionInfo (status, eventCount, ended …). */
  info(options: CallOptions = {}): Promise<SessionInfo> {
    return this.transport.call('get', '/v1/sessions/{id}', this.at, options);
  }

  /**
   * Changes the session (PATCH): `budget` replaces the one in force (`null` or `{}`: none), raises
   * an approved budget request made included; resolves with the new SessionInfo. 400 for a bad
   * budget, 409 `session_ended` once the session has ended. See docs/budgets.md.
   */
  update(changes: { budget: Budget | null }, options: CallOptions = {}): Promise<SessionInfo> {
    return this.transport.call('patch', '/v1/sessions/{id}', this.at, { ...options, body: changes });
  }

  /** Starts a turn and returns once it is dispatched (204); follow it with events(). 409 `turn_in_progress` while one runs. */
  send(message: PlainMessage, options?: CallOptions & { delivery?: undefined }): Promise<void>;
  /** With a delivery (202): the message's id and what became of it (`started`, `queued` at `position`, or `steered`). */
  send(message: string | MessageRequest, options: CallOptions & { delivery: Delivery }): Promise<MessageAccepted>;
  send(message: MessageRequest & { delivery: Delivery }, options?: CallOptions): Promise<MessageAccepted>;
  send(message: string | MessageRequest, options?: SendOptions): Promise<MessageAccepted | void>;
  async send(message: string | MessageRequest, options: SendOptions = {}): Promise<MessageAccepted | void> {
    const { delivery, ...call } = options;
    const body = withDelivery(messageBody(message), delivery);
    const accepted = await this.transport.call('post', '/v1/sessions/{id}/messages', this.at, { ...call, body });
    return body.delivery === undefined ? undefined : accepted;
  }

  /** The messages waiting in the session's queue, in the order they will start. */
  async queue(options: CallOptions = {}): Promise<QueuedMessage[]> {
    return (await this.transport.call('get', '/v1/sessions/{id}/queue', this.at, options)).messages;
  }

  /** Takes a queued message out before it starts; 404 `queued_message_not_found` once it has started. */
  async cancelQueued(messageId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('delete', '/v1/sessions/{id}/queue/{message_id}', { ...this.at, message_id: messageId }, options);
  }

  /**
   * Branches the conversation into a new session (201): after the parent's last turn, or after the
   * turn whose `turn.ended` is at sequence `at`; `id` names the new session (else the daemon picks
   * one). Waits for the fork's agent to start, as create does. 409 `fork_unsupported` where the
   * agent cannot fork (capabilities `fork`, `forkAtTurn`).
   */
  async fork(request: ForkRequest = {}, options: CallOptions = {}): Promise<ForkedSession> {
    const info = await this.transport.call('post', '/v1/sessions/{id}/fork', this.at, { timeoutMs: CREATE_TIMEOUT_MS, ...options, body: request });
    return { session: new Session(this.transport, info.sessionId), info };
  }

  /** The session's events after a cursor, resumed across dropped connections: see EventsOptions. */
  events(options: EventsOptions = {}): AsyncGenerator<UniversalEvent, void, undefined> {
    return followEvents(this.transport, this.id, options);
  }

  /**
   * Sends a message and runs its turn to the end, answering permissions and questions through the
   * callbacks. With `delivery` while a turn runs: the turn the message runs in (the next one for
   * `queue` and `interrupt`, the running one for `steer`).
   */
  turn(message: string | MessageRequest, options: TurnOptions = {}): Promise<TurnResult> {
    return runTurn(this, this.transport, withDelivery(messageBody(message), options.delivery), options);
  }

  async replyPermission(permissionId: string, reply: PermissionReply, options: CallOptions = {}): Promise<void> {
    await this.transport.call('post', '/v1/sessions/{id}/permissions/{permission_id}/reply', { ...this.at, permission_id: permissionId }, { ...options, body: { reply } });
  }

  async replyQuestion(questionId: string, answers: QuestionAnswers, options: CallOptions = {}): Promise<void> {
    await this.transport.call('post', '/v1/sessions/{id}/questions/{question_id}/reply', { ...this.at, question_id: questionId }, { ...options, body: { answers } });
  }

  async rejectQuestion(questionId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('post', '/v1/sessions/{id}/questions/{question_id}/reject', { ...this.at, question_id: questionId }, options);
  }

  /** Asks the agent to stop the running turn (202); the turn ends with reason `interrupted`. 409 `no_turn_running` when idle. */
  async interrupt(options: CallOptions = {}): Promise<void> {
    await this.transport.call('post', '/v1/sessions/{id}/interrupt', this.at, options);
  }

  /** Kills the agent; the session ends (`session.ended` terminated) and stays readable until deleted. Idempotent. */
  async terminate(options: CallOptions = {}): Promise<void> {
    await this.transport.call('post', '/v1/sessions/{id}/terminate', this.at, options);
  }

  /** Terminates the session if live, then forgets it and its log. */
  async delete(options: CallOptions = {}): Promise<void> {
    await this.transport.call('delete', '/v1/sessions/{id}', this.at, options);
  }
}

function messageBody(message: string | MessageRequest): MessageRequest {
  return typeof message === 'string' ? { message } : message;
}

/** The options' delivery wins over one in the request; none is sent when neither has one. */
function withDelivery(body: MessageRequest, delivery: Delivery | undefined): MessageRequest {
  return delivery === undefined ? body : { ...body, delivery };
}
