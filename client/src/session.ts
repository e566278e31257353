// A handle on one session: its id, and every call that concerns it. Holding a handle costs nothing
// (no connection, no state beyond the id), so a handle for a session that no longer exists just
// gets `session_not_found` from its next call.
import { followEvents, type EventsOptions } from './event-stream.js';
import { runTurn, type TurnOptions, type TurnResult } from './turn.js';
import { seg, type Transport } from './transport.js';
import type { CallOptions, MessageRequest, PermissionReply, QuestionAnswers, SessionInfo, UniversalEvent } from './types.js';

export class Session {
  constructor(
    private readonly transport: Transport,
    readonly id: string,
  ) {}

  private get path(): string {
    return `/v1/sessions/${seg(this.id)}`;
  }

  /** The session's current SessionInfo (status, eventCount, ended …). */
  info(options: CallOptions = {}): Promise<SessionInfo> {
    return this.transport.json('GET', this.path, options);
  }

  /** Starts a turn and returns once it is dispatched (204); follow it with events(). */
  async send(message: string | MessageRequest, options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/messages`, { ...options, body: messageBody(message) });
  }

  /** The session's events after a cursor, resumed across dropped connections: see EventsOptions. */
  events(options: EventsOptions = {}): AsyncGenerator<UniversalEvent, void, undefined> {
    return followEvents(this.transport, this.id, options);
  }

  /** Sends a message and runs its turn to the end, answering permissions and questions through the callbacks. */
  turn(message: string | MessageRequest, options: TurnOptions = {}): Promise<TurnResult> {
    return runTurn(this, this.transport, messageBody(message), options);
  }

  async replyPermission(permissionId: string, reply: PermissionReply, options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/permissions/${seg(permissionId)}/reply`, { ...options, body: { reply } });
  }

  async replyQuestion(questionId: string, answers: QuestionAnswers, options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/questions/${seg(questionId)}/reply`, { ...options, body: { answers } });
  }

  async rejectQuestion(questionId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/questions/${seg(questionId)}/reject`, options);
  }

  /** Asks the agent to stop the running turn (202); the turn ends with reason `interrupted`. 409 `no_turn_running` when idle. */
  async interrupt(options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/interrupt`, options);
  }

  /** Kills the agent; the session ends (`session.ended` terminated) and stays readable until deleted. Idempotent. */
  async terminate(options: CallOptions = {}): Promise<void> {
    await this.transport.json('POST', `${this.path}/terminate`, options);
  }

  /** Terminates the session if live, then forgets it and its log. */
  async delete(options: CallOptions = {}): Promise<void> {
    await this.transport.json('DELETE', this.path, options);
  }
}

function messageBody(message: string | MessageRequest): MessageRequest {
  return typeof message === 'string' ? { message } : message;
}
