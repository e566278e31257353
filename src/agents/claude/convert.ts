// Claude Code's converter: stream-json stdout lines (native.ts) → draft events. Pure (rule: Pure
// converters). Keys are Claude's own ids: a message item is one API response (`message.id`, thinking and
// text together), a tool_call item is its tool_use id, a tool_result item `result:<tool_use id>`.
// A response streams as stream_event lines (message_start … message_stop) with one `assistant` line
// per content block in between; the message completes at message_stop with its non-tool blocks.
// Steered messages (command_lifecycle lines, and the `result` a steer holds back) are in convert-steer.ts.
import { notAuthenticated } from '../auth-error.js';
import { fromAnthropic } from '../token-usage.js';
import { guardedConverter } from '../unparsed.js';
import type { ContentPart } from '../../schema/events.js';
import type { Converter, Draft, DraftItem } from '../types.js';
import { LOCATION, messagePart, summarise, toolCallItem, toolRef, toolResultItem, toolUse, unparsed, type ToolRef } from './convert-blocks.js';
import { questionOrPermission } from './convert-hitl.js';
import { inSubagent, subagentOf, subagentSystemLine } from './convert-subagents.js';
import { holdsTurn, initialSteer, lifecycle, orphanEnded, type SteerState } from './convert-steer.js';
import { ClaudeOut, StreamEvent, SystemInit } from './native.js';

export interface ClaudeState {
  /** The API message being streamed: message_start seen, message_stop not yet. */
  readonly current: string | null;
  /** Messages started and not completed, by message id, with their non-tool parts so far. */
  readonly open: Readonly<Record<string, readonly ContentPart[]>>;
  /** This turn's tool calls by tool_use id, for their results. Cleared at `result`. */
  readonly tools: Readonly<Record<string, ToolRef>>;
  /** Status items emitted so far in the session: their keys are `status:<n>`. */
  readonly statuses: number;
  /** The streamed API message's usage as message_start gave it (its input), for the step its message_delta ends. */
  readonly stepUsage?: { usage: unknown; model: unknown };
  /** The last result's total_cost_usd: Claude Code's is cumulative over its process (a turn's cost is the difference). */
  readonly costSoFar?: number;
  /** Open messages a sub-agent printed, by message id: its key. They complete as it ends. */
  readonly subagentMessages: Readonly<Record<string, string>>;
  /** The uuid of this turn's last `assistant` line: where `--resume-session-at` branches after it. */
  readonly lastAssistant: string | null;
  /** Steered messages and the CLI turns they run in (convert-steer.ts). Kept across turns. */
  readonly steer: SteerState;
}

type Out = { state: ClaudeState; events: Draft[] };
type LineOf<K extends ClaudeOut['type']> = Extract<ClaudeOut, { type: K }>;

const initial = (): ClaudeState => ({ current: null, open: {}, tools: {}, subagentMessages: {}, statuses: 0, lastAssistant: null, steer: initialSteer });

/** Lines that belong to a CLI turn's output (a late steered message's own turn is dropped whole). */
const TURN_OUTPUT = new Set(['system', 'stream_event', 'assistant', 'user']);

export const claudeConverter: Converter<ClaudeState> = guardedConverter(LOCATION, initial, (state, native) => {
  const out = convertLine(state, native);
  // A sub-agent's lines carry the Agent call's tool_use id (convert-subagents.ts).
  const sub = native !== null && typeof native === 'object' ? subagentOf(native as Record<string, unknown>) : undefined;
  return sub === undefined ? out : { state: out.state, events: inSubagent(sub, out.events) };
});

function convertLine(state: ClaudeState, native: unknown): Out {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  const parsed = ClaudeOut.safeParse(native);
  if (!parsed.success) return { state, events: [unparsed(summarise(parsed.error.issues, native), native)] };
  const line = parsed.data;
  if (state.steer.orphan && TURN_OUTPUT.has(line.type)) return { state, events: [] };
  if (line.type === 'result' && state.steer.orphan) {
    const ended = orphanEnded(state.steer, line.result);
    return { state: { ...state, steer: ended.state }, events: ended.events };
  }
  if (TURN_OUTPUT.has(line.type) && !state.steer.busy) state = { ...state, steer: { ...state.steer, busy: true } };
  switch (line.type) {
    case 'system':
      return system(state, line, native);
    case 'stream_event':
      return streamEvent(state, line, native);
    case 'assistant':
      return assistant(state, line);
    case 'user':
      return user(state, line);
    case 'result':
      return result(state, line);
    case 'control_request': {
      const draft = questionOrPermission(line.request_id, line.request);
      if (!draft) return { state, events: [unparsed(`unknown control request ${JSON.stringify(line.request.subtype)}`, native)] };
      // A tool a sub-agent wants to run: the request says so (its tool_use was on the sub-agent's line).
      const toolUseId = line.request.tool_use_id;
      const sub = typeof toolUseId === 'string' ? state.tools[toolUseId]?.subagent : undefined;
      return { state, events: inSubagent(sub, [draft]) };
    }
    case 'control_response':
      return controlResponse(state, line);
    case 'keep_alive':
      return { state, events: [] };
    case 'command_lifecycle': {
      const next = lifecycle(state.steer, line.command_uuid, line.state);
      return { state: { ...state, steer: next.state }, events: next.events };
    }
  }
}

function system(state: ClaudeState, line: LineOf<'system'>, native: unknown): Out {
  switch (line.subtype) {
    case 'init': {
      const init = SystemInit.safeParse(line);
      if (!init.success) return { state, events: [unparsed(summarise(init.error.issues, native), native)] };
      const { session_id, model, tools, cwd, permissionMode } = init.data;
      // Printed once per turn with the same id; the normalizer keeps the first start (the
      // initialize answer) and takes the native session id from this one.
      return { state, events: [{ type: 'session.started', native_session_id: session_id, data: { metadata: { model, tools, cwd, permissionMode } } }] };
    }
    case 'thinking_tokens':
      // A running estimate printed before each thinking delta; the deltas themselves carry the text.
      return { state, events: [] };
    case 'status':
      // `requesting` precedes every model request, whose message_start follows at once: no news.
      // Other states (e.g. compacting) are worth a status item; `null` ends such a state.
      if (line.status === 'requesting' || line.status === null || line.status === undefined) return { state, events: [] };
      return statusItem(state, 'status', String(line.status as string), line.uuid);
    case 'task_started':
    case 'task_notification':
    case 'task_updated': {
      const drafts = subagentSystemLine(line);
      if (!drafts) return statusItem(state, line.subtype, scalars(line), line.uuid);
      const ended = drafts.find((d) => d.type === 'subagent.ended');
      return ended ? subagentMessagesEnd(state, ended.key, drafts) : { state, events: drafts };
    }
    case 'task_progress': {
      // The sub-agent's progress ("Running …"): a status item inside it.
      const out = statusItem(state, line.subtype, scalars(line), line.uuid);
      const key = typeof line.tool_use_id === 'string' ? line.tool_use_id : undefined;
      return { state: out.state, events: inSubagent(key, out.events) };
    }
    case 'api_retry': {
      const { attempt, max_retries, retry_delay_ms, error, error_status } = line;
      const http = error_status !== undefined && error_status !== null ? ` (HTTP ${String(error_status as number)})` : '';
      const detail = `attempt ${String(attempt as number)} of ${String(max_retries as number)}, retrying in ${String(retry_delay_ms as number)} ms: ${String(error as string)}${http}`;
      return statusItem(state, 'api_retry', detail, line.uuid);
    }
    default:
      return statusItem(state, line.subtype, scalars(line), line.uuid);
  }
}

function statusItem(state: ClaudeState, label: string, detail: string, uuid: unknown): Out {
  const n = state.statuses + 1;
  const item: DraftItem = {
    key: `status:${n}`,
    native_item_id: typeof uuid === 'string' ? uuid : null,
    kind: 'status',
    role: null,
    content: [{ type: 'status', label, detail }],
    status: 'completed',
  };
  return { state: { ...state, statuses: n }, events: [{ type: 'item.completed', item }] };
}

/** A short human summary of an unknown system line: its scalar fields, bar the envelope. */
function scalars(line: Record<string, unknown>): string {
  const skip = new Set(['type', 'subtype', 'session_id', 'uuid']);
  const text = Object.entries(line)
    .filter(([k, v]) => !skip.has(k) && v !== null && ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(', ');
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function streamEvent(state: ClaudeState, line: LineOf<'stream_event'>, native: unknown): Out {
  const parsed = StreamEvent.safeParse(line.event);
  if (!parsed.success) return { state, events: [unparsed(`stream_event: ${summarise(parsed.error.issues, line.event)}`, native)] };
  const event = parsed.data;
  switch (event.type) {
    case 'message_start': {
      const id = event.message.id;
      const stepUsage = { usage: event.message.usage, model: event.message.model };
      const next = { ...state, current: id, stepUsage, open: Object.hasOwn(state.open, id) ? state.open : { ...state.open, [id]: [] } };
      return { state: next, events: [{ type: 'item.started', item: message(id, [], 'in_progress') }] };
    }
    case 'content_block_delta': {
      const delta = event.delta;
      // Tool input streams as partial JSON; the tool_call item comes whole from the assistant line.
      if (delta.type !== 'text_delta' && delta.type !== 'thinking_delta') return { state, events: [] };
      const id = line.api_message_id ?? state.current;
      if (id === null) return { state, events: [unparsed('content_block_delta outside a message', native)] };
      const known = Object.hasOwn(state.open, id);
      const text = delta.type === 'text_delta' ? delta.text : delta.thinking;
      const draft: Draft = {
        type: 'item.delta',
        key: id,
        native_item_id: id,
        delta: text,
        ...(known ? {} : { stub: { kind: 'message', role: 'assistant' } }),
      };
      return { state: known ? state : { ...state, open: { ...state.open, [id]: [] } }, events: [draft] };
    }
    case 'message_stop': {
      const id = line.api_message_id ?? state.current;
      if (id === null || !Object.hasOwn(state.open, id)) return { state: { ...state, current: null }, events: [] };
      const { [id]: parts = [], ...open } = state.open;
      return { state: { ...state, current: null, open }, events: [{ type: 'item.completed', item: message(id, [...parts], 'completed') }] };
    }
    case 'message_delta':
      return messageUsage(state, event.usage);
    default:
      // content_block_start/stop: the block arrives whole on its assistant line; ping: keep-alive.
      return { state, events: [] };
  }
}

/**
 * One model call's usage, a step (docs/budgets.md): its input as message_start counted it, its
 * output as message_delta ends it (final counts in the delta win). `result` settles the turn.
 */
function messageUsage(state: ClaudeState, delta: unknown): Out {
  const { stepUsage, ...rest } = state;
  if (!stepUsage || typeof stepUsage.usage !== 'object' || typeof delta !== 'object' || delta === null) return { state, events: [] };
  const usage = fromAnthropic({ ...(stepUsage.usage as object), ...delta });
  if (!usage) return { state: rest, events: [] };
  return { state: rest, events: [{ type: 'usage', usage, ...(typeof stepUsage.model === 'string' ? { model: stepUsage.model } : {}) }] };
}

function assistant(state: ClaudeState, line: LineOf<'assistant'>): Out {
  const id = line.message.id;
  const events: Draft[] = [];
  // Without a message_start (no partial messages, or a synthetic API-error message) the message
  // opens here and completes at `result`.
  const opened = !Object.hasOwn(state.open, id);
  if (opened) events.push({ type: 'item.started', item: message(id, [], 'in_progress') });
  // A sub-agent's message has no message_start or message_stop (2.1.337 streams none of it): it
  // completes when the sub-agent ends.
  const sub = subagentOf(line);
  const subagentMessages = opened && sub !== undefined ? { ...state.subagentMessages, [id]: sub } : state.subagentMessages;
  let parts = [...(state.open[id] ?? [])];
  let tools = state.tools;
  for (const block of line.message.content) {
    const tool = toolUse(block);
    if (tool) {
      tools = { ...tools, [tool.id]: { ...toolRef(id, tool), ...(sub !== undefined ? { subagent: sub } : {}) } };
      events.push({ type: 'item.completed', item: toolCallItem(id, tool) });
      continue;
    }
    const part = messagePart(block);
    if (part) parts = [...parts, part];
  }
  const lastAssistant = line.uuid ?? state.lastAssistant;
  return { state: { ...state, open: { ...state.open, [id]: parts }, tools, subagentMessages, lastAssistant }, events };
}

/** A sub-agent ended: the messages it left open complete first, inside it. */
function subagentMessagesEnd(state: ClaudeState, key: string, drafts: Draft[]): Out {
  const ids = Object.keys(state.subagentMessages).filter((id) => state.subagentMessages[id] === key && Object.hasOwn(state.open, id));
  if (ids.length === 0) return { state, events: drafts };
  const open = { ...state.open };
  const subagentMessages = { ...state.subagentMessages };
  const events: Draft[] = [];
  for (const id of ids) {
    events.push({ type: 'item.completed', item: message(id, [...(open[id] ?? [])], 'completed'), subagent_key: key });
    delete open[id];
    delete subagentMessages[id];
  }
  return { state: { ...state, open, subagentMessages }, events: [...events, ...drafts] };
}

function user(state: ClaudeState, line: LineOf<'user'>): Out {
  // Only tool results are converted: the user's own words are synthesised by the daemon from the
  // turn it sent (capabilities.userMessages is false), and Claude echoes them only with
  // --replay-user-messages, which the driver does not pass.
  const content = typeof line.message.content === 'string' ? [] : line.message.content;
  const events: Draft[] = [];
  for (const block of content) {
    if (block.type !== 'tool_result') continue;
    const ref = typeof block.tool_use_id === 'string' ? state.tools[block.tool_use_id] : undefined;
    const item = toolResultItem(block, ref);
    events.push(item ? { type: 'item.completed', item } : unparsed('user: malformed tool_result block', block));
  }
  return { state, events };
}

/** How Claude Code words a missing or refused credential in its result line (subtype `success`,
 *  is_error true): "Not logged in · Please run /login", "Invalid API key · Fix external API key",
 *  an expired or revoked OAuth token. */
const CLAUDE_AUTH_FAILURE = /not logged in|please run \/login|invalid api key|oauth token (?:has expired|was revoked)|invalid bearer token/i;

function result(state: ClaudeState, line: LineOf<'result'>): Out {
  const ok = line.subtype === 'success' && line.is_error !== true;
  const events: Draft[] = Object.entries(state.open).map(([id, parts]) => ({
    type: 'item.completed' as const,
    item: message(id, [...parts], ok ? 'completed' : 'failed'),
  }));
  if (line.is_error === true || line.subtype !== 'success') {
    const message = line.result ?? (line.errors?.length ? line.errors.join('\n') : line.subtype);
    const code = `claude_${line.subtype}`;
    events.push(CLAUDE_AUTH_FAILURE.test(message) ? notAuthenticated('claude', message, { native_code: code }) : { type: 'error', data: { message, code } });
  }
  // A steered message still queued runs as the CLI's next turn, which goes on the daemon's turn.
  if (holdsTurn(state.steer)) return { state: { ...state, current: null, open: {}, tools: {}, subagentMessages: {} }, events };
  const { total_cost_usd, duration_ms, num_turns, stop_reason, permission_denials } = line;
  // An interrupted turn ends with an error result too; the normalizer knows it was asked to stop.
  const usage = fromAnthropic(line.usage);
  const branch = state.lastAssistant ? { assistant_uuid: state.lastAssistant } : {};
  // A total below the last one is a new process's (a resume): all of it is this turn's.
  const cost = typeof total_cost_usd === 'number' && total_cost_usd >= 0 ? total_cost_usd : undefined;
  const turnCost = cost === undefined ? undefined : cost >= (state.costSoFar ?? 0) ? cost - (state.costSoFar ?? 0) : cost;
  const metadata = { reason: ok ? ('completed' as const) : ('error' as const), ...(usage ? { usage } : {}), ...(turnCost !== undefined ? { cost_usd: turnCost } : {}), subtype: line.subtype, total_cost_usd, duration_ms, num_turns, permission_denials, ...branch };
  events.push({ type: 'turn.ended', data: { metadata: stop_reason === undefined ? metadata : { ...metadata, stop_reason } } });
  return { state: { ...initial(), statuses: state.statuses, steer: { ...state.steer, busy: false, queued: [] }, ...(cost !== undefined ? { costSoFar: cost } : state.costSoFar !== undefined ? { costSoFar: state.costSoFar } : {}) }, events };
}

function controlResponse(state: ClaudeState, line: LineOf<'control_response'>): Out {
  const { subtype, response, error, request_id } = line.response;
  if (subtype === 'error') {
    return { state, events: [{ type: 'error', data: { message: error ?? 'control request failed', code: 'claude_control_error', details: { request_id } } }] };
  }
  // The answer to initialize is the first line Claude prints and the only sign of life before the
  // first turn (system/init comes with each turn). Answers to other requests carry nothing.
  if (!response || typeof response.claude_code_version !== 'string') return { state, events: [] };
  const { claude_code_version, current_permission_mode, pid } = response;
  const models = Array.isArray(response.models)
    ? response.models.map((m: Record<string, unknown>) => ({ value: m?.value, resolved_model: m?.resolvedModel, display_name: m?.displayName }))
    : undefined;
  const metadata = { claude_code_version, current_permission_mode, ...(models ? { models } : {}), ...(pid !== undefined ? { pid } : {}) };
  return { state, events: [{ type: 'session.started', native_session_id: null, data: { metadata } }] };
}

function message(id: string, content: ContentPart[], status: DraftItem['status']): DraftItem {
  return { key: id, native_item_id: id, kind: 'message', role: 'assistant', content, status };
}
