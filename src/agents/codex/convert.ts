// Codex app-server's converter: JSON-RPC messages read from its stdout (native.ts) → draft events.
// Pure (rule: Pure converters). Three kinds of message: notifications (`method`, no `id`), server requests
// (`method` + `id`: approvals and user input, convert-hitl.ts) and responses to our own requests
// (`id`, no `method`: only the thread/start answer means anything here). Items: convert-items.ts.
import { isAuthStatus, notAuthenticated } from '../auth-error.js';
import type { Converter, Draft, DraftItem } from '../types.js';
import { unparsedDraft, guardedConverter } from '../unparsed.js';
import { serverRequest } from './convert-hitl.js';
import { convertItem, parentOf } from './convert-items.js';
import { totalsBefore, totalsOf, turnUsage, type CodexCounts } from './usage.js';
import {
  ConfigWarning,
  Delta,
  ErrorNotification,
  ItemNotification,
  McpStartupStatus,
  Notification,
  Response,
  ServerRequest,
  ThreadStarted,
  ThreadStartResult,
  TokenUsage,
  TurnNotification,
  type FileUpdateChange,
} from './native.js';

export const LOCATION = 'codex.convert';

export interface CodexState {
  /** The native id of the running turn (turn/started … turn/completed). */
  readonly turn: string | null;
  /** The turn's latest agent message key: the parent of the tool items that follow it. */
  readonly lastMessage: string | null;
  /** This turn's tool items' parents, by item id. */
  readonly parents: Readonly<Record<string, string | null>>;
  /** This turn's fileChange items' changes, by item id, for their approval requests. */
  readonly changes: Readonly<Record<string, readonly FileUpdateChange[]>>;
  /** The last thread/tokenUsage/updated `tokenUsage` (the thread's running totals) of this turn. */
  readonly usage: unknown;
  /** The thread's totals before this turn's first model request (usage.ts). */
  readonly usageBefore: CodexCounts | undefined;
  /** The thread's totals the last usage step of this turn reported up to (absent: none yet, usageBefore). */
  readonly stepBase?: CodexCounts | undefined;
  /** Status items emitted so far: their keys are `status:<n>`. */
  readonly statuses: number;
}

type Out = { state: CodexState; events: Draft[] };

const initial = (): CodexState => ({ turn: null, lastMessage: null, parents: {}, changes: {}, usage: undefined, usageBefore: undefined, statuses: 0 });

/**
 * Notifications dropped on purpose, with the reason. Any other well-formed notification we do not
 * convert becomes a status item labelled with its method (so a new Codex method shows up instead of
 * vanishing, without being mistaken for garbage). Partly dropped:
 * `mcpServer/startupStatus/updated` (starting and ready are start-up progress; failed and
 * cancelled become a status item, so a client sees why an MCP server's tools are missing).
 */
export const DROPPED: Readonly<Record<string, string>> = {
  'thread/status/changed': 'idle/active/waitingOnApproval: turn events and permission requests already say it',
  'thread/goal/cleared': 'sent after thread/resume; the thread goal is Codex-internal bookkeeping with no content',
  'account/rateLimits/updated': 'account quota bookkeeping after each model response, not conversation',
  'account/updated': 'account bookkeeping',
  'remoteControl/status/changed': 'unsolicited after initialize; about the remote-control feature, not the session',
  'turn/diff/updated': "the turn's aggregated git diff, repeated after each response; every change is already a fileChange item's diff",
  'thread/tokenUsage/updated': 'a usage step (what the thread\'s totals grew by since the last one) while a turn runs, and turn.ended metadata.usage (the turn\'s share) and thread_token_usage',
  'serverRequest/resolved': 'confirms our own answer; the daemon emitted the resolution when it answered (nativeHitlResolution false)',
  'item/reasoning/summaryPartAdded': 'marks a new summary part; its text arrives as summaryTextDelta and whole at item/completed',
  'item/plan/delta': 'the plan item completes whole (kind unknown, json)',
  'turn/plan/updated': 'the update_plan checklist; no universal item for it yet (kept in raw only)',
  'item/mcpToolCall/progress': 'progress text of a running MCP call; its result completes the tool_result',
  'item/commandExecution/terminalInteraction': 'stdin written to a running command; its output arrives as outputDelta',
  'item/fileChange/patchUpdated': 'a streaming preview of a patch; the fileChange item carries the final changes',
  'thread/name/updated': 'thread title bookkeeping',
  'thread/settings/updated': 'settings echo of our own requests',
  'skills/changed': 'skills list bookkeeping',
  'app/list/updated': 'apps list bookkeeping',
  'fs/changed': 'file watch notifications for fs/watch, which we never call',
  'turn/moderationMetadata': 'moderation bookkeeping',
  'model/safetyBuffering/updated': 'UI buffering hint',
  'thread/readState/changed': "a UI unread marker (sent with the experimental API, i.e. agentMode plan); no conversation content",
};

/** Notifications that become a status item: label = method, detail = their message. */
const STATUS: Readonly<Record<string, (p: Record<string, unknown>) => string>> = {
  configWarning: (p) => lines(p.summary, p.details, p.path),
  warning: (p) => lines(p.message),
  guardianWarning: (p) => lines(p.message),
  deprecationNotice: (p) => lines(p.summary, p.details),
  'model/rerouted': (p) => `${String(p.fromModel)} → ${String(p.toModel)}${p.reason ? ` (${JSON.stringify(p.reason)})` : ''}`,
  'thread/compacted': () => 'context compacted',
};

export const codexConverter: Converter<CodexState> = guardedConverter(LOCATION, initial, convertMessage);

function convertMessage(state: CodexState, native: unknown): Out {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  if (typeof native !== 'object' || native === null || Array.isArray(native)) return { state, events: [unparsed('not a JSON-RPC object', native)] };
  const hasMethod = 'method' in native;
  const hasId = 'id' in native;
  if (hasMethod && hasId) {
    const req = ServerRequest.safeParse(native);
    if (!req.success) return { state, events: [unparsed('malformed server request', native)] };
    const draft = serverRequest(String(req.data.id), req.data.method, req.data.params, state.changes);
    return { state, events: [draft ?? unparsed(`${req.data.method}: malformed params`, native)] };
  }
  if (hasMethod) {
    const note = Notification.safeParse(native);
    if (!note.success) return { state, events: [unparsed('malformed notification', native)] };
    return notification(state, note.data.method, note.data.params, native);
  }
  if (hasId) {
    const res = Response.safeParse(native);
    if (!res.success || (!('result' in native) && !('error' in native))) return { state, events: [unparsed('malformed response', native)] };
    return response(state, res.data.result);
  }
  return { state, events: [unparsed('neither a request, a notification nor a response', native)] };
}

/** Answers to our requests: thread/start's (and thread/resume's) starts the session; the rest
 *  (initialize, turn/start, interrupt, errors) are the driver's business and carry no event. */
function response(state: CodexState, result: unknown): Out {
  const started = ThreadStartResult.safeParse(result);
  if (!started.success) return { state, events: [] };
  const { thread, model, modelProvider, cwd, approvalPolicy, sandbox, reasoningEffort } = started.data;
  const metadata = { model: model ?? thread.model, modelProvider, cwd, approvalPolicy, sandbox, reasoningEffort, cliVersion: thread.cliVersion, path: thread.path };
  return { state, events: [{ type: 'session.started', native_session_id: thread.id, data: { metadata: defined(metadata) } }] };
}

function notification(state: CodexState, method: string, params: unknown, native: unknown): Out {
  const bad = (issue: string) => ({ state, events: [unparsed(`${method}: ${issue}`, native)] });
  switch (method) {
    case 'thread/started': {
      const p = ThreadStarted.safeParse(params);
      if (!p.success) return bad('malformed params');
      const { id, model, modelProvider, cwd, cliVersion, path, reasoningEffort } = p.data.thread;
      const metadata = defined({ model, modelProvider, cwd, reasoningEffort, cliVersion, path });
      // Usually a duplicate of the thread/start answer's start: the normalizer drops it.
      return { state, events: [{ type: 'session.started', native_session_id: id, data: { metadata } }] };
    }
    case 'turn/started': {
      const p = TurnNotification.safeParse(params);
      if (!p.success) return bad('malformed params');
      // The normalizer stamps its own turn_id; Codex's is kept in metadata.
      const next = { ...state, turn: p.data.turn.id, lastMessage: null, parents: {}, changes: {} };
      return { state: next, events: [{ type: 'turn.started', data: { metadata: { native_turn_id: p.data.turn.id } } }] };
    }
    case 'turn/completed':
      return turnCompleted(state, params, native);
    case 'item/started':
    case 'item/completed':
      return itemNotification(state, method, params, bad);
    case 'item/agentMessage/delta':
    case 'item/reasoning/summaryTextDelta':
    case 'item/reasoning/textDelta':
    case 'item/commandExecution/outputDelta':
    case 'item/fileChange/outputDelta':
      return deltaNotification(state, method, params, bad);
    case 'thread/tokenUsage/updated': {
      const p = TokenUsage.safeParse(params);
      if (!p.success) return bad('malformed params');
      return usageUpdated(state, p.data.tokenUsage);
    }
    case 'error': {
      const p = ErrorNotification.safeParse(params);
      if (!p.success) return bad('malformed params');
      const { error, willRetry } = p.data;
      const details = defined({ willRetry, codexErrorInfo: error.codexErrorInfo, additionalDetails: error.additionalDetails });
      if (!willRetry && refused(error.codexErrorInfo)) return { state, events: [notAuthenticated('codex', error.message, { native_code: 'codex_error', ...details })] };
      return { state, events: [{ type: 'error', data: { message: error.message, code: 'codex_error', details } }] };
    }
  }
  return otherNotification(state, method, params) ?? bad('malformed params');
}

/** A streamed delta: a message's or reasoning's text, or a tool's output, which streams into the
 *  tool's result item (opened at the tool's item/started). */
function deltaNotification(state: CodexState, method: string, params: unknown, bad: (issue: string) => Out): Out {
  const p = Delta.safeParse(params);
  if (!p.success) return bad('malformed params');
  const { itemId, delta } = p.data;
  if (method === 'item/commandExecution/outputDelta' || method === 'item/fileChange/outputDelta') {
    const stub = { kind: 'tool_result', role: 'tool', parent_key: parentOf(itemId, state) } as const;
    return { state, events: [{ type: 'item.delta', key: `result:${itemId}`, native_item_id: null, delta, stub }] };
  }
  return { state, events: [{ type: 'item.delta', key: itemId, native_item_id: itemId, delta, stub: { kind: 'message', role: 'assistant' } }] };
}

/** item/started, item/completed: the item's drafts; the state remembers the last message, tool
 *  parents and file changes. */
function itemNotification(state: CodexState, method: string, params: unknown, bad: (issue: string) => Out): Out {
  const p = ItemNotification.safeParse(params);
  if (!p.success) return bad('malformed params');
  const out = convertItem(method === 'item/started' ? 'started' : 'completed', p.data.item, state);
  if (!out) return bad('item without an id');
  const next: CodexState = {
    ...state,
    lastMessage: out.lastMessage,
    ...(out.parent ? { parents: { ...state.parents, [out.parent.id]: out.parent.key } } : {}),
    ...(out.changes ? { changes: { ...state.changes, [out.changes.id]: out.changes.changes } } : {}),
  };
  return { state: next, events: out.events };
}

/** The rest: MCP start-up failures, warnings and notifications new to us become status items, the
 *  ones listed in DROPPED nothing; undefined when malformed. */
function otherNotification(state: CodexState, method: string, params: unknown): Out | undefined {
  if (method === 'mcpServer/startupStatus/updated') {
    const p = McpStartupStatus.safeParse(params);
    if (!p.success) return undefined;
    if (p.data.status === 'failed' || p.data.status === 'cancelled') {
      return statusItem(state, method, lines(`MCP server '${p.data.name}' ${p.data.status}`, p.data.error ?? undefined));
    }
    return { state, events: [] };
  }
  const status = STATUS[method];
  if (status) {
    if (method === 'configWarning' && !ConfigWarning.safeParse(params).success) return undefined;
    const p = params && typeof params === 'object' ? (params as Record<string, unknown>) : {};
    return statusItem(state, method, status(p));
  }
  if (Object.hasOwn(DROPPED, method)) return { state, events: [] };
  // Well-formed but new to us: shown as a status item (never unparsed, never silently lost).
  return statusItem(state, method, boundedJson(params));
}

/**
 * The thread's counts moved: kept for turn.ended, and within a turn a usage step, what the totals
 * grew by since the last step (the first from before the turn), so the steps add up to the turn's
 * usage. Outside a turn, or when nothing grew, no step.
 */
function usageUpdated(state: CodexState, tokenUsage: unknown): Out {
  const usageBefore = state.usage === undefined ? totalsBefore(tokenUsage) : state.usageBefore;
  const next = { ...state, usage: tokenUsage, usageBefore };
  const step = state.turn === null ? undefined : turnUsage(tokenUsage, state.stepBase ?? usageBefore);
  if (!step || (step.input_tokens === 0 && step.output_tokens === 0)) return { state: next, events: [] };
  return { state: { ...next, stepBase: totalsOf(tokenUsage) }, events: [{ type: 'usage', usage: step }] };
}

function turnCompleted(state: CodexState, params: unknown, native: unknown): Out {
  const p = TurnNotification.safeParse(params);
  if (!p.success) return { state, events: [unparsed('turn/completed: malformed params', native)] };
  const { id, status, error, durationMs } = p.data.turn;
  const events: Draft[] = [];
  if (status === 'failed') {
    const details = defined({ native_turn_id: id, codexErrorInfo: error?.codexErrorInfo, additionalDetails: error?.additionalDetails });
    const message = error?.message ?? 'turn failed';
    events.push(refused(error?.codexErrorInfo) ? notAuthenticated('codex', message, { native_code: 'codex_turn_failed', ...details }) : { type: 'error', data: { message, code: 'codex_turn_failed', details } });
  }
  const reason = status === 'completed' ? 'completed' : status === 'interrupted' ? 'interrupted' : 'error';
  // `thread_token_usage` keeps Codex's own counts (thread totals, latest request, context window).
  const usage = turnUsage(state.usage, state.usageBefore);
  const own = defined({ status, native_turn_id: id, error: error ?? undefined, thread_token_usage: state.usage, duration_ms: durationMs });
  events.push({ type: 'turn.ended', data: { metadata: { reason, ...(usage ? { usage } : {}), ...own } } });
  return { state: { ...initial(), statuses: state.statuses }, events };
}

function statusItem(state: CodexState, label: string, detail: string): Out {
  const n = state.statuses + 1;
  const item: DraftItem = { key: `status:${n}`, native_item_id: null, kind: 'status', role: null, content: [{ type: 'status', label, detail }], status: 'completed' };
  return { state: { ...state, statuses: n }, events: [{ type: 'item.completed', item }] };
}

/** A notification's params as text for a status item, cut at 4 KB (raw keeps the whole message). */
function boundedJson(params: unknown): string {
  const text = params === undefined ? '' : JSON.stringify(params);
  return text.length > 4096 ? `${text.slice(0, 4096)}…` : text;
}

function lines(...parts: unknown[]): string {
  return parts.filter((p) => typeof p === 'string' && p !== '').join('\n');
}

function defined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

export const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);

/** Codex's error info names the failure's kind with the HTTP status inside, whichever kind it is
 *  ({httpConnectionFailed: {httpStatusCode: 401}}, {responseStreamDisconnected: …}, …); a 401 is
 *  the provider refusing the key. */
function refused(info: unknown): boolean {
  if (typeof info !== 'object' || info === null) return false;
  return Object.values(info).some((v) => typeof v === 'object' && v !== null && isAuthStatus((v as { httpStatusCode?: unknown }).httpStatusCode));
}
