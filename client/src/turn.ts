// session.turn(): one turn from message to turn.ended. The first leg is the daemon's NDJSON turn
// stream; it closes at a permission or question, which the callbacks answer, and the rest of the
// turn is followed with session.events() from the last sequence seen (which also covers a turn
// stream cut by the network). Aborting, a timeout, or a callback that throws interrupts the turn.
// A message sent with a delivery while a turn runs is followed to its own turn: the events before it
// (the rest of someone else's turn) are only shown to onEvent, and a still-queued message is
// cancelled rather than someone else's turn interrupted.
import { Cancel } from './cancel.js';
import { AgentwireError } from './errors.js';
import type { Session } from './session.js';
import { ndjsonLines } from './streams.js';
import { fillPath } from './paths.js';
import type { Transport } from './transport.js';
import type {
  CallOptions,
  Delivery,
  EventOf,
  MessageRequest,
  PermissionReply,
  PermissionRequest,
  QuestionAnswers,
  QuestionRequest,
  TokenUsage,
  TurnEndReason,
  UniversalEvent,
} from './types.js';

export interface TurnOptions extends CallOptions {
  /**
   * Answers a permission request (may be async). Without it the request is left to someone else
   * (another client, the session's permissionPolicy or hitlTimeoutMs) and the turn waits.
   */
  onPermission?: (request: PermissionRequest, event: EventOf<'permission.requested'>) => PermissionReply | Promise<PermissionReply>;
  /** Answers a question: one array of chosen options per question, or null to reject it. Without it, as for permissions. */
  onQuestion?: (request: QuestionRequest, event: EventOf<'question.requested'>) => QuestionAnswers | null | Promise<QuestionAnswers | null>;
  /** Every event of the turn as it arrives (progress display). */
  onEvent?: (event: UniversalEvent) => void;
  includeRaw?: boolean;
  /**
   * `timeoutMs` here bounds the whole turn (default: none, a turn takes as long as the agent does);
   * `requestTimeoutMs` bounds the wait for the turn stream's answer head (default: the client's timeoutMs).
   */
  requestTimeoutMs?: number;
  /**
   * While a turn runs: `queue` (the result is the turn the message starts once the running one and
   * those queued before it end), `steer` (the running turn, from the moment it took the message),
   * or `interrupt` (the turn it starts next). Without it, a running turn is 409 `turn_in_progress`.
   */
  delivery?: Delivery;
}

export interface TurnResult {
  turnId: string | undefined;
  /** The message's id (`msg_…`) when it was sent with a delivery. */
  messageId: string | undefined;
  /** Every event from turn.started to turn.ended (or session.ended), in order. */
  events: UniversalEvent[];
  /** The text of the turn's last completed assistant message ('' when there was none). */
  text: string;
  /** `turn.ended` metadata.usage: the turn's tokens, when the agent reports them. */
  usage: TokenUsage | undefined;
  /**
   * `turn.ended` metadata.reason (`completed`, `interrupted`, `error`, `terminated`, `agent_exited`),
   * `session_ended` if the session ended without one, or `cancelled` if the queued message was
   * taken out of the queue (DELETE …/queue/{messageId}) before it started.
   */
  reason: TurnEndReason | 'session_ended' | 'cancelled';
  /** The turn.ended event itself (undefined if the session ended without one). */
  ended: EventOf<'turn.ended'> | undefined;
}

export async function runTurn(session: Session, transport: Transport, body: MessageRequest, options: TurnOptions): Promise<TurnResult> {
  const cancel = new Cancel(options.signal);
  cancel.arm(options.timeoutMs);
  const events: UniversalEvent[] = [];
  let turnId: string | undefined;
  let done: TurnResult | undefined;
  let cursor = 0;
  let dispatched = false;
  let messageId: string | undefined;
  // Without a delivery the first event is this turn's turn.started; with one, this turn begins at the
  // message's turn.started (queue, interrupt, or none running) or message.steered (steer).
  let ours = body.delivery === undefined;

  /** With a delivery, until the message's turn begins: whether `event` begins it. */
  const begins = (event: UniversalEvent): boolean => {
    const mine = (id: string) => messageId === undefined || messageId === id;
    if (event.type === 'message.queued' && messageId === undefined) messageId = event.data.message_id;
    else if (event.type === 'message.steered' && mine(event.data.message_id)) {
      messageId = event.data.message_id;
      turnId = event.data.turn_id;
      return true;
    } else if (event.type === 'turn.started' && event.data.message_id !== undefined && mine(event.data.message_id)) {
      messageId = event.data.message_id;
      return true;
    } else if (event.type === 'message.dequeued' && event.data.message_id === messageId && event.data.reason === 'cancelled') {
      done = { ...result(undefined, messageId, [], undefined), reason: 'cancelled' };
    } else if (event.type === 'session.ended') done = result(undefined, messageId, [], undefined);
    return false;
  };

  const handle = async (event: UniversalEvent): Promise<void> => {
    if (event.sequence <= cursor) return;
    cursor = event.sequence;
    if (!ours && !(ours = begins(event))) {
      options.onEvent?.(event);
      return;
    }
    events.push(event);
    options.onEvent?.(event);
    if (event.type === 'turn.started') turnId ??= event.data.turn_id;
    else if (event.type === 'permission.requested' && options.onPermission) {
      const reply = await options.onPermission(event.data, event);
      await tolerateResolved(session.replyPermission(event.data.permission_id, reply, { signal: cancel.signal }));
    } else if (event.type === 'question.requested' && options.onQuestion) {
      const answers = await options.onQuestion(event.data, event);
      const id = event.data.question_id;
      await tolerateResolved(answers === null ? session.rejectQuestion(id, { signal: cancel.signal }) : session.replyQuestion(id, answers, { signal: cancel.signal }));
    } else if (event.type === 'turn.ended' && (turnId === undefined || event.data.turn_id === undefined || event.data.turn_id === turnId)) {
      done = result(turnId, messageId, events, event);
    } else if (event.type === 'session.ended') done ??= result(turnId, messageId, events, undefined);
  };

  try {
    // Where the log stands before the turn: the fallback cursor if the turn stream breaks before its first event.
    cursor = (await session.info({ signal: cancel.signal, timeoutMs: options.requestTimeoutMs ?? transport.timeoutMs })).eventCount;
    const opened = new Cancel(cancel.signal);
    try {
      opened.arm(options.requestTimeoutMs ?? transport.timeoutMs);
      const response = await transport.stream('POST', fillPath('/v1/sessions/{id}/messages/stream', { id: session.id }), {
        body,
        accept: 'application/x-ndjson',
        query: { include_raw: options.includeRaw ? true : undefined },
        timeoutMs: options.requestTimeoutMs,
      }, opened);
      dispatched = true;
      opened.disarm();
      for await (const line of ndjsonLines(response.body!)) {
        await handle(parseLine(line));
        if (done) return done;
      }
    } catch (error) {
      // Refused before the turn started (409 turn_in_progress, 404 …): nothing to follow.
      if (!dispatched || cancel.signal.aborted || !isTransportFailure(error)) throw error;
    } finally {
      opened.abort('closed');
      opened.dispose();
    }
    // The turn stream closed at a pause (or broke): follow the log until this turn ends.
    for await (const event of session.events({ after: cursor, includeRaw: options.includeRaw, signal: cancel.signal })) {
      await handle(event);
      if (done) return done;
    }
    if (cancel.signal.aborted) throw cancel.errorFor(undefined, `turn of session '${session.id}'`, options.timeoutMs);
    throw new AgentwireError('stream_closed', `session '${session.id}': the event stream ended before the turn did`);
  } catch (error) {
    const failure = cancel.signal.aborted ? cancel.errorFor(error, `turn of session '${session.id}'`, options.timeoutMs) : error;
    if (dispatched && !done) await stopQuietly(session, ours, messageId);
    throw failure;
  } finally {
    cancel.dispose();
  }
}

function result(turnId: string | undefined, messageId: string | undefined, events: UniversalEvent[], ended: EventOf<'turn.ended'> | undefined): TurnResult {
  return {
    turnId,
    messageId,
    events,
    text: finalText(events),
    usage: ended?.data.metadata.usage,
    reason: ended ? ended.data.metadata.reason : 'session_ended',
    ended,
  };
}

/** The text parts of the last completed assistant message. */
export function finalText(events: UniversalEvent[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== 'item.completed') continue;
    const item = event.data.item;
    if (item.kind !== 'message' || item.role !== 'assistant') continue;
    return item.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  }
  return '';
}

function parseLine(line: string): UniversalEvent {
  try {
    const event = JSON.parse(line) as UniversalEvent;
    if (typeof event?.sequence === 'number') return event;
  } catch {
    // reported below
  }
  throw new AgentwireError('invalid_response', `a turn stream line that is not a universal event: ${line.slice(0, 200)}`);
}

function isTransportFailure(error: unknown): boolean {
  return AgentwireError.is(error) && error.status === undefined && (error.code === 'network_error' || error.code === 'timeout');
}

/** Another client (or the daemon's HITL timeout) answered first: the turn goes on either way. */
async function tolerateResolved(reply: Promise<void>): Promise<void> {
  try {
    await reply;
  } catch (error) {
    if (AgentwireError.is(error) && /_already_resolved$/.test(error.code)) return;
    throw error;
  }
}

/**
 * Best effort: the turn may have ended meanwhile (409 no_turn_running), or the daemon be gone. A
 * message still in the queue is taken out instead: the running turn is someone else's (and if it
 * started meanwhile, 404, its turn is interrupted). One whose id never arrived is left alone.
 */
async function stopQuietly(session: Session, ours: boolean, messageId: string | undefined): Promise<void> {
  const call = { timeoutMs: 10_000 };
  if (!ours) {
    if (messageId === undefined) return;
    const cancelled = await session.cancelQueued(messageId, call).then(() => true, () => false);
    if (cancelled) return;
  }
  await session.interrupt(call).catch(() => {});
}
