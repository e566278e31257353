// What an agent asks, asked of the ACP client: a permission.requested as session/request_permission
// (the option chosen becomes the reply once / always / reject), a question.requested as an
// elicitation form when the client said it takes them (`clientCapabilities.elicitation.form`), and
// otherwise as a permission-style request with one option per answer plus a decline
// (docs/acp-server.md, "Questions"). Builds the requests and reads the answers; the connection sends.
import type { PermissionReply } from '../schema/api.js';
import type { Session } from '../sessions/session.js';
import type { PermissionEventData, QuestionEventData } from '../schema/events.js';
import { isObject } from '../util/is-object.js';
import { toolKind } from './updates.js';

/** A request to ask: its event's type and data, and its sequence when known (a replayed or live
 *  event; one still open from before a resume's cursor is known by its data only). */
export type HitlAsk =
  | { type: 'permission.requested'; data: PermissionEventData; sequence?: number }
  | { type: 'question.requested'; data: QuestionEventData; sequence?: number };
type Requested<T extends HitlAsk['type']> = Extract<HitlAsk, { type: T }>;

const PERMISSION_OPTIONS = [
  { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'always', name: 'Allow always', kind: 'allow_always' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
] as const;

const meta = (event: HitlAsk) => ({ _meta: { agentwire: { ...(event.sequence === undefined ? {} : { sequence: event.sequence }), event_type: event.type, data: event.data } } });

export function permissionRequest(sessionId: string, event: Requested<'permission.requested'>): { method: string; params: unknown } {
  const { permission_id, action } = event.data;
  const m = isObject(event.data.metadata) ? event.data.metadata : {};
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  // The id of the tool call that asks, as its tool_call update named it (the call_id the drivers
  // keep in the request's metadata under their agent's name for it); the permission id otherwise.
  const tool = isObject(m.tool) ? m.tool : {};
  const toolCall = {
    toolCallId: str(m.toolCallId) ?? str(m.tool_use_id) ?? str(m.call_id) ?? str(m.itemId) ?? str(tool.callID) ?? permission_id,
    title: str(m.title) ?? str(m.description) ?? action,
    kind: typeof m.kind === 'string' ? m.kind : toolKind(action),
    status: 'pending',
    rawInput: m.rawInput ?? m.input ?? m,
  };
  return { method: 'session/request_permission', params: { sessionId, toolCall, options: PERMISSION_OPTIONS, ...meta(event) } };
}

/** The client's RequestPermissionResponse as a reply; a cancelled (or unreadable) one rejects. */
export function permissionReply(result: unknown): PermissionReply {
  const outcome = isObject(result) && isObject(result.outcome) ? result.outcome : undefined;
  if (outcome?.outcome !== 'selected') return 'reject';
  const chosen = PERMISSION_OPTIONS.find((o) => o.optionId === outcome.optionId);
  return chosen?.optionId ?? 'reject';
}

export function questionRequest(sessionId: string, event: Requested<'question.requested'>, elicitation: boolean): { method: string; params: unknown } {
  const { question_id, prompt, options } = event.data;
  if (elicitation) {
    const answer = { type: 'string', title: prompt, ...(options.length > 0 ? { enum: options } : {}) };
    return {
      method: 'elicitation/create',
      params: { sessionId, mode: 'form', message: prompt, requestedSchema: { type: 'object', properties: { answer }, required: ['answer'] }, ...meta(event) },
    };
  }
  // The fallback: ACP's one way to ask a client to choose, with the answers as its options.
  const choices = options.map((name, i) => ({ optionId: `answer:${i}`, name, kind: 'allow_once' }));
  const toolCall = { toolCallId: question_id, title: prompt, kind: 'other', status: 'pending', rawInput: { question: prompt, options } };
  return {
    method: 'session/request_permission',
    params: { sessionId, toolCall, options: [...choices, { optionId: 'decline', name: 'Decline to answer', kind: 'reject_once' }], ...meta(event) },
  };
}

/** The client's answer to a question as the reply's answers; null declines it. */
export function questionAnswers(result: unknown, event: Requested<'question.requested'>, elicitation: boolean): string[][] | null {
  if (!isObject(result)) return null;
  if (elicitation) {
    if (result.action !== 'accept' || !isObject(result.content)) return null;
    const answer = result.content.answer;
    return typeof answer === 'string' ? [[answer]] : Array.isArray(answer) ? [answer.map(String)] : null;
  }
  const outcome = isObject(result.outcome) ? result.outcome : undefined;
  const match = outcome?.outcome === 'selected' && typeof outcome.optionId === 'string' ? /^answer:(\d+)$/.exec(outcome.optionId) : null;
  const answer = match ? event.data.options[Number(match[1])] : undefined;
  return answer === undefined ? null : [[answer]];
}

/** Sends one request to the client; `answer` gets its response (`error` set when it failed). */
export type ClientRequest = (method: string, params: unknown, answer: (response: { result?: unknown; error?: unknown }) => void) => void;

/** Asks the client what the agent asked, and replies to the session with the client's answer. */
export function askClient(session: Session, event: HitlAsk, elicitation: boolean, request: ClientRequest, notTaken: (err: unknown) => void): void {
  if (event.type === 'permission.requested') {
    const { method, params } = permissionRequest(session.id, event);
    request(method, params, (response) => {
      const reply = response.error ? 'reject' : permissionReply(response.result);
      session.replyPermission(event.data.permission_id, reply).catch(notTaken);
    });
  } else {
    const { method, params } = questionRequest(session.id, event, elicitation);
    request(method, params, (response) => {
      const answers = response.error ? null : questionAnswers(response.result, event, elicitation);
      session.replyQuestion(event.data.question_id, answers).catch(notTaken);
    });
  }
}
