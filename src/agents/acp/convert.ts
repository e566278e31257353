// The ACP converter: JSON-RPC messages an ACP agent writes on stdout (native.ts) → draft events.
// Pure (rule: Pure converters). Three kinds of message, told apart by shape like the peer does:
//   requests from the agent (`id` + `method`): session/request_permission → permission.requested;
//     any other request is refused by the driver at once: an `error` for a method of the protocol
//     (fs/*, terminal/*, session/*), a status item for an agent's private extension
//   notifications (`method`): session/update (below), $/cancel_request; others → a status item
//   answers to our requests (`id`): initialize (agent info), session/new and a definition's fork
//     request (session.started),
//     session/prompt (turn.ended with its stop reason), errors (error + turn.ended)
// session/update: message/thought/user chunks (convert-messages.ts), tool_call and
// tool_call_update (convert-tools.ts), plan, available_commands_update, current_mode_update as
// status items, usage_update into turn.ended metadata, and any other well-formed update as a status
// item labelled with its kind: never agent.unparsed for what parses.
import { isAuthStatus, notAuthenticated } from '../auth-error.js';
import type { TokenUsage, TurnEndedMetadata } from '../../schema/turn.js';
import { tokenUsage } from '../token-usage.js';
import type { Converter, Draft } from '../types.js';
import { guardedConverter, unparsedDraft } from '../unparsed.js';
import { chunk, closeMessage } from './convert-messages.js';
import { endedWithCall, inSubagent, parentToolCallOf } from './convert-subagents.js';
import { failWaitingCalls, permissionCall, toolCall, toolCallUpdate } from './convert-tools.js';
import {
  AgentNotification,
  AgentRequest,
  AvailableCommandsUpdate,
  CancelRequest,
  ContentChunk,
  CurrentModeUpdate,
  InitializeResult,
  NewSessionResult,
  Plan,
  PromptResult,
  RequestPermission,
  Response,
  SessionNotification,
  ToolCallFields,
} from './native.js';
import { permissionRequested } from './permission.js';
import { boundedJson, defined, initialState, statusItem, type AcpState, type Out } from './state.js';
import { isObject } from '../../util/is-object.js';

export const LOCATION = 'acp.convert';
export type { AcpState } from './state.js';

/** The namespaces of ACP's client methods: a request there that we refuse is one the agent needed. */
const PROTOCOL_NAMESPACES = ['fs/', 'terminal/', 'session/'];

/** Stop reasons that end a turn short of what was asked: an `error` says so before turn.ended. */
const ABNORMAL_STOPS: Readonly<Record<string, string>> = {
  refusal: 'the agent refused to continue',
  max_tokens: 'the model reached its token limit',
  max_turn_requests: 'the turn reached its limit of model requests',
};

/** What one agent's definition adds to the converter (definition.ts). */
export interface AcpConverterOptions {
  /** The new session's id in the answer to the agent's own fork request (AcpForkMethod.sessionId). */
  forkedSessionId?: ((result: unknown) => string | undefined) | undefined;
  /** The agent's id, for an authentication failure's message (auth-error.ts). */
  agent?: string | undefined;
}

export function createAcpConverter(options: AcpConverterOptions = {}): Converter<AcpState> {
  return guardedConverter(LOCATION, initialState, (state, native) => convertMessage(state, native, options));
}

export const acpConverter: Converter<AcpState> = createAcpConverter();

function convertMessage(state: AcpState, native: unknown, options: AcpConverterOptions): Out {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  if (!isObject(native)) return { state, events: [unparsed('not a JSON-RPC object', native)] };
  const hasMethod = 'method' in native;
  const hasId = 'id' in native;
  if (hasMethod && hasId) {
    const req = AgentRequest.safeParse(native);
    return req.success ? request(state, String(req.data.id), req.data.method, req.data.params, native) : { state, events: [unparsed('malformed request', native)] };
  }
  if (hasMethod) {
    const note = AgentNotification.safeParse(native);
    return note.success ? notification(state, note.data.method, note.data.params, native) : { state, events: [unparsed('malformed notification', native)] };
  }
  if (hasId && native.id === null && isObject(native.error)) {
    // JSON-RPC's answer to a message it could not read (a parse error has no id to answer with).
    const message = typeof native.error.message === 'string' ? native.error.message : 'the agent could not read a message';
    return { state, events: [{ type: 'error', data: { message, code: 'acp_error', details: defined({ code: native.error.code, data: native.error.data }) } }] };
  }
  if (hasId) {
    const res = Response.safeParse(native);
    if (!res.success || (!('result' in native) && !('error' in native))) return { state, events: [unparsed('malformed response', native)] };
    return res.data.error ? errorResponse(state, res.data.error, options.agent) : response(state, res.data.result, options);
  }
  return { state, events: [unparsed('neither a request, a notification nor a response', native)] };
}

function request(state: AcpState, id: string, method: string, params: unknown, native: unknown): Out {
  if (method === 'session/request_permission') {
    const p = RequestPermission.safeParse(params);
    if (!p.success) return { state, events: [unparsed(`${method}: malformed params`, native)] };
    const described = permissionCall(state, p.data.toolCall);
    const { draft, action, metadata } = permissionRequested(id, p.data.toolCall, p.data.options);
    return { state: { ...described.state, permissions: { ...described.state.permissions, [id]: { action, metadata } } }, events: [...described.events, draft] };
  }
  // The driver has already answered "method not found". A method of the protocol's own (fs/*,
  // terminal/* we do not advertise, a newer session/*) is something the agent needed: an error. Any
  // other is an agent's private extension, which ACP lets a client decline and the agent must
  // cope with (some ask on every tool turn): a status item, so a normal turn shows no error.
  const message = `the agent sent a '${method}' request, which agentwire does not offer; it was answered with a JSON-RPC error (method not found)`;
  const details = { method, request_id: id };
  if (PROTOCOL_NAMESPACES.some((ns) => method.startsWith(ns))) {
    return { state, events: [{ type: 'error', data: { message, code: 'acp_unsupported_request', details } }] };
  }
  return statusItem(state, 'unsupported_request', message, details);
}

function notification(state: AcpState, method: string, params: unknown, native: unknown): Out {
  if (method === '$/cancel_request') {
    const p = CancelRequest.safeParse(params);
    if (!p.success) return { state, events: [unparsed(`${method}: malformed params`, native)] };
    const id = String(p.data.requestId);
    const open = state.permissions[id];
    if (!open) return { state, events: [] };
    const { [id]: _, ...permissions } = state.permissions;
    const metadata = { ...open.metadata, reason: 'cancelled_by_agent' };
    return { state: { ...state, permissions }, events: [{ type: 'permission.resolved', data: { permission_id: id, action: open.action, status: 'denied', metadata } }] };
  }
  if (method !== 'session/update') return statusItem(state, method, boundedJson(params));
  const p = SessionNotification.safeParse(params);
  if (!p.success) return { state, events: [unparsed('session/update: malformed params', native)] };
  const u = p.data.update;
  const out = update(state, u, native);
  const parent = parentToolCallOf(u);
  const attributed = parent === undefined ? out : inSubagent(state, out, parent, u);
  return u.sessionUpdate === 'tool_call_update' && typeof u.toolCallId === 'string' ? endedWithCall(attributed, u.toolCallId, u.status) : attributed;
}

function update(state: AcpState, u: { sessionUpdate: string } & Record<string, unknown>, native: unknown): Out {
  const kind = u.sessionUpdate;
  const bad = (): Out => ({ state, events: [unparsed(`session/update ${kind}: malformed`, native)] });
  switch (kind) {
    case 'agent_message_chunk':
    case 'agent_thought_chunk':
    case 'user_message_chunk': {
      const c = ContentChunk.safeParse(u);
      if (!c.success) return bad();
      const stream = kind === 'agent_message_chunk' ? 'agent' : kind === 'agent_thought_chunk' ? 'thought' : 'user';
      return chunk(state, stream, c.data.content, c.data.messageId ?? null);
    }
    case 'tool_call':
    case 'tool_call_update': {
      const t = ToolCallFields.safeParse(u);
      if (!t.success) return bad();
      return kind === 'tool_call' ? toolCall(state, t.data) : toolCallUpdate(state, t.data);
    }
    case 'plan': {
      const p = Plan.safeParse(u);
      if (!p.success) return bad();
      const lines = p.data.entries.map((e) => `${e.status === 'completed' ? '[x]' : e.status === 'in_progress' ? '[~]' : '[ ]'} ${e.content}`);
      return statusItem(state, 'plan', lines.join('\n'), p.data.entries);
    }
    case 'available_commands_update': {
      const c = AvailableCommandsUpdate.safeParse(u);
      if (!c.success) return bad();
      return statusItem(state, 'available_commands', c.data.availableCommands.map((x) => `/${x.name}`).join(' '), c.data.availableCommands);
    }
    case 'current_mode_update': {
      const m = CurrentModeUpdate.safeParse(u);
      return m.success ? statusItem(state, 'mode', m.data.currentModeId) : bad();
    }
    case 'usage_update':
      return { state: { ...state, usage: stripKind(u) }, events: [] };
  }
  // config_option_update, session_info_update and whatever a newer agent sends: shown, not lost.
  return statusItem(state, kind, boundedJson(stripKind(u)));
}

function response(state: AcpState, result: unknown, options: AcpConverterOptions): Out {
  const prompt = PromptResult.safeParse(result);
  if (prompt.success) return endTurn(state, prompt.data.stopReason, prompt.data.usage);
  // A fork's new session, named by the agent's own fork request: the daemon resumes this one now.
  const forked = options.forkedSessionId?.(result);
  if (forked) return { state, events: [{ type: 'session.started', native_session_id: forked, data: { metadata: defined({ agent: state.agentInfo ?? undefined }) } }] };
  const created = NewSessionResult.safeParse(result);
  if (created.success) {
    const { sessionId, modes, models } = created.data;
    const metadata = defined({ agent: state.agentInfo ?? undefined, mode: modes?.currentModeId, model: models?.currentModelId });
    return { state, events: [{ type: 'session.started', native_session_id: sessionId, data: { metadata } }] };
  }
  const init = InitializeResult.safeParse(result);
  if (init.success) {
    const info = init.data.agentInfo ? defined({ ...init.data.agentInfo }) : {};
    return { state: { ...state, agentInfo: { ...info, protocolVersion: init.data.protocolVersion } }, events: [] };
  }
  // session/load, session/set_mode, session/set_model …: the driver's business, no event.
  return { state, events: [] };
}

/** ACP's own "authentication required" (-32000), or the model's HTTP 401 passed on as the error's
 *  code (Gemini CLI, Qwen Code) or in its text (Google's UNAUTHENTICATED status). */
function refusedCredentials(error: { code?: number | undefined; message?: string | undefined }, detail: string | undefined): boolean {
  return error.code === -32000 || isAuthStatus(error.code) || /"status":\s*"UNAUTHENTICATED"|\b401 Unauthorized\b/.test(error.message ?? '') || /^401\b/.test(detail ?? '');
}

/**
 * The text an error answer's `data` carries, if any: Qwen Code answers a failed model call with a
 * bare "Internal error" and the provider's message in `data.details` ("401 …" when the key is
 * refused), the one useful part.
 */
function errorDetail(data: unknown): string | undefined {
  if (typeof data === 'string') return data || undefined;
  if (!isObject(data)) return undefined;
  const text = data.details ?? data.message;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/** An error answer. After start-up the only request we send is session/prompt: it ends the turn. */
function errorResponse(state: AcpState, error: { code?: number | undefined; message?: string | undefined; data?: unknown }, agent = 'the agent'): Out {
  const head = error.message ?? 'the agent answered with an error';
  const details = defined({ code: error.code, data: error.data });
  const detail = errorDetail(error.data);
  const message = detail && detail !== head ? `${head}: ${detail}` : head;
  const draft: Draft = refusedCredentials(error, detail) ? notAuthenticated(agent, detail ?? head, { native_code: 'acp_error', ...details }) : { type: 'error', data: { message, code: 'acp_error', details } };
  const ended = endTurn(state, 'error', undefined);
  return { state: ended.state, events: [draft, ...ended.events] };
}

function endTurn(state: AcpState, stopReason: string, usage: unknown): Out {
  const closed = closeMessage(state);
  const events = [...closed.events, ...failWaitingCalls(closed.state)];
  const abnormal = ABNORMAL_STOPS[stopReason];
  if (abnormal) events.push({ type: 'error', data: { message: abnormal, code: `acp_${stopReason}` } });
  const metadata = defined({
    // A stop the protocol does not name yet ends the turn like end_turn: the agent said it is done.
    reason: stopReason === 'cancelled' ? 'interrupted' : abnormal || stopReason === 'error' ? 'error' : 'completed',
    stop_reason: stopReason,
    usage: promptUsage(usage),
    // usage_update is the context window (tokens in use of its size, cost), not the turn's tokens.
    context_usage: state.usage,
  });
  events.push({ type: 'turn.ended', data: { metadata: metadata as TurnEndedMetadata } });
  return { state: { ...closed.state, lastMessage: null, tools: {}, permissions: {}, usage: undefined, subagents: {} }, events };
}

/** session/prompt's usage (inputTokens, outputTokens, cachedReadTokens, cachedWriteTokens, thoughtTokens). */
function promptUsage(value: unknown): TokenUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const u = value as Record<string, unknown>;
  return tokenUsage({ input: u.inputTokens, output: u.outputTokens, cacheRead: u.cachedReadTokens, cacheCreation: u.cachedWriteTokens, reasoning: u.thoughtTokens });
}

function stripKind(u: Record<string, unknown>): Record<string, unknown> {
  const { sessionUpdate: _, ...rest } = u;
  return rest;
}

const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);
