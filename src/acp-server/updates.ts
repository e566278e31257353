// Universal events → ACP session/update notifications (the reverse of src/agents/acp/convert*.ts,
// whose choices it mirrors). Pure: a function of its state and one event, returning the new state
// and what to send; the connection stamps nothing, each output names the event's sequence in
// `_meta.agentwire.sequence` so a client that reconnects can say where it was (docs/acp-server.md).
//
// What ACP has no update for (turn and session boundaries, errors, queue and fork events, status
// items, HITL resolutions) is not dropped: it goes out as the `_agentwire/event` extension
// notification carrying the whole universal event.
import type { ContentPart, UniversalEvent, UniversalItem } from '../schema/events.js';
import { isObject } from '../util/is-object.js';

/** One ACP `SessionUpdate` (the `update` of a session/update notification). */
export type AcpUpdate = Record<string, unknown> & { sessionUpdate: string };

/** What one event becomes: updates to send as session/update, or the event as `_agentwire/event`. */
export type Outgoing = { kind: 'update'; update: AcpUpdate } | { kind: 'event'; event: UniversalEvent };

export interface UpdateState {
  /** item_id → what the mapping needs to remember of a streamed item. */
  items: Record<string, { kind: UniversalItem['kind']; role: UniversalItem['role']; streamed: boolean; thought: boolean; callId?: string }>;
  /** A turn this connection prompted is running: its user message is the client's own, not echoed. */
  ownTurn: boolean;
  /** The session's title (set at creation), sent as a session_info_update with session.started. */
  title?: string;
}

export const initialUpdateState = (title?: string): UpdateState => ({ items: {}, ownTurn: false, ...(title ? { title } : {}) });

/** ACP tool kinds for the universal actions and tool names the drivers use. */
const TOOL_KINDS: Readonly<Record<string, string>> = {
  read: 'read', read_file: 'read', Read: 'read', view: 'read',
  write: 'edit', write_file: 'edit', Write: 'edit', Edit: 'edit', edit: 'edit', apply_patch: 'edit', file_change: 'edit',
  bash: 'execute', Bash: 'execute', shell: 'execute', exec: 'execute', command_execution: 'execute',
  grep: 'search', Grep: 'search', glob: 'search', Glob: 'search', search: 'search',
  fetch: 'fetch', WebFetch: 'fetch', web_fetch: 'fetch', web_search: 'fetch',
};

export function toolKind(name: string): string {
  return TOOL_KINDS[name] ?? 'other';
}

/**
 * One event's updates. An event that becomes no update (a message's start, the completion of one
 * already streamed, a tool's streamed output) goes out as `_agentwire/event`: every stored event
 * reaches the client once, so a replay can be checked against the log sequence by sequence.
 */
export function mapEvent(state: UpdateState, event: UniversalEvent): { state: UpdateState; out: Outgoing[] } {
  const mapped = mapOne(state, event);
  return mapped.out.length > 0 ? mapped : { state: mapped.state, out: [{ kind: 'event', event }] };
}

function mapOne(state: UpdateState, event: UniversalEvent): { state: UpdateState; out: Outgoing[] } {
  switch (event.type) {
    case 'item.started':
      return started(state, event.data.item, event);
    case 'item.delta':
      return delta(state, event.data.item_id, event.data.delta, event);
    case 'item.completed':
      return completed(state, event.data.item, event);
    case 'session.started':
      // What ACP's session info update carries and agentwire knows: the title, and when.
      return { state, out: state.title ? [update({ sessionUpdate: 'session_info_update', title: state.title, updatedAt: event.time }), { kind: 'event', event }] : [] };
    case 'turn.ended': {
      // The context window an ACP agent reported (the ACP driver keeps it as context_usage).
      const context = event.data.metadata.context_usage;
      const usage = isObject(context) && typeof context.used === 'number' && typeof context.size === 'number' ? [update({ sessionUpdate: 'usage_update', ...context })] : [];
      return { state: { ...state, ownTurn: false }, out: [...usage, { kind: 'event', event }] };
    }
    default:
      return { state, out: [{ kind: 'event', event }] };
  }
}

function started(state: UpdateState, item: UniversalItem, event: UniversalEvent): { state: UpdateState; out: Outgoing[] } {
  const thought = item.content.some((p) => p.type === 'reasoning');
  const call = item.content.find((p) => p.type === 'tool_call');
  const entry = { kind: item.kind, role: item.role, streamed: false, thought, ...(call ? { callId: call.call_id } : {}) };
  const next = { ...state, items: { ...state.items, [item.item_id]: entry } };
  if (item.kind === 'tool_call' && call) return { state: next, out: [update(toolCall(item, call, 'pending'))] };
  return { state: next, out: [] };
}

function delta(state: UpdateState, itemId: string, text: string, event: UniversalEvent): { state: UpdateState; out: Outgoing[] } {
  const known = state.items[itemId];
  // A tool's streamed output (sent whole when its result completes) and the echo of the client's
  // own prompt go out as events.
  if (!known || known.kind !== 'message' || (known.role === 'user' && state.ownTurn)) return { state, out: [] };
  const items = { ...state.items, [itemId]: { ...known, streamed: true } };
  return { state: { ...state, items }, out: [update(chunk(known.role === 'user' ? 'user_message_chunk' : known.thought ? 'agent_thought_chunk' : 'agent_message_chunk', text, itemId))] };
}

function completed(state: UpdateState, item: UniversalItem, event: UniversalEvent): { state: UpdateState; out: Outgoing[] } {
  const known = state.items[item.item_id];
  const items = { ...state.items };
  delete items[item.item_id];
  const next = { ...state, items };
  switch (item.kind) {
    case 'message': {
      if (item.role === 'user') {
        // The client typed its own prompt; on a load (or another client's turn) it is shown.
        if (state.ownTurn) return { state: next, out: [] };
        return { state: next, out: messageChunks(item, 'user_message_chunk', known) };
      }
      return { state: next, out: messageChunks(item, 'agent_message_chunk', known) };
    }
    case 'tool_call': {
      const call = item.content.find((p) => p.type === 'tool_call');
      if (!call) return { state: next, out: [{ kind: 'event', event }] };
      const fields = toolCall(item, call, item.status === 'failed' ? 'failed' : 'in_progress');
      const out = known ? [update({ ...fields, sessionUpdate: 'tool_call_update' })] : [update(fields)];
      return { state: next, out };
    }
    case 'tool_result':
      return { state: next, out: [update(toolResult(item, known?.callId))] };
    case 'status':
      if (item.content[0]?.type === 'status' && item.content[0].label === 'plan') {
        const entries = item.content.find((p) => p.type === 'json');
        if (entries && Array.isArray(entries.json)) return { state: next, out: [update({ sessionUpdate: 'plan', entries: entries.json })] };
      }
      if (item.content[0]?.type === 'status' && item.content[0].label === 'mode' && item.content[0].detail) {
        return { state: next, out: [update({ sessionUpdate: 'current_mode_update', currentModeId: item.content[0].detail })] };
      }
      return { state: next, out: [{ kind: 'event', event }] };
    default:
      return { state: next, out: [{ kind: 'event', event }] };
  }
}

const update = (u: AcpUpdate): Outgoing => ({ kind: 'update', update: u });

/** A chunk of the message `messageId` (its item id: every chunk of one message shares it, as ACP's messageId wants). */
function chunk(sessionUpdate: string, text: string, messageId: string): AcpUpdate {
  return { sessionUpdate, content: { type: 'text', text }, messageId };
}

/**
 * A message's completion: what its deltas did not stream (the text of one that streamed none;
 * public reasoning, which agents often give only here, as a thought), an image as a resource link,
 * and the parts ACP has no chunk for in _meta.
 */
function messageChunks(item: UniversalItem, kind: string, known: UpdateState['items'][string] | undefined): Outgoing[] {
  const streamedText = (known?.streamed ?? false) && !known?.thought;
  const streamedThought = (known?.streamed ?? false) && (known?.thought ?? false);
  const out: Outgoing[] = [];
  const other: ContentPart[] = [];
  for (const part of item.content) {
    const id = item.item_id;
    if (part.type === 'text' && !streamedText) out.push(update(chunk(kind, part.text, id)));
    else if (part.type === 'reasoning' && !streamedThought && part.visibility === 'public') out.push(update(chunk('agent_thought_chunk', part.text, `${id}#reasoning`)));
    else if (part.type === 'image') out.push(update({ sessionUpdate: kind, content: { type: 'resource_link', name: part.path, uri: fileUri(part.path), ...(part.mime ? { mimeType: part.mime } : {}) }, messageId: id }));
    else if (part.type !== 'text' && part.type !== 'reasoning') other.push(part);
    else if (part.type === 'reasoning' && part.visibility === 'private') other.push(part);
  }
  // Parts ACP has no chunk for (json, file_ref, status, private reasoning) ride on an empty chunk.
  if (other.length > 0) out.push(update({ ...chunk(kind, '', item.item_id), _meta: { agentwire: { item_id: item.item_id, parts: other } } }));
  return out;
}

function toolCall(item: UniversalItem, call: Extract<ContentPart, { type: 'tool_call' }>, status: string): AcpUpdate {
  const title = item.content.find((p) => p.type === 'text');
  const files = item.content.filter((p) => p.type === 'file_ref');
  return {
    sessionUpdate: 'tool_call',
    toolCallId: call.call_id,
    title: title?.type === 'text' ? title.text : call.name,
    kind: toolKind(call.name),
    status,
    rawInput: parseJson(call.arguments),
    ...(files.length > 0 ? { locations: files.map((f) => ({ path: f.path })), content: files.flatMap(diffContent) } : {}),
    _meta: { agentwire: { item_id: item.item_id, name: call.name } },
  };
}

function toolResult(item: UniversalItem, knownCallId: string | undefined): AcpUpdate {
  const result = item.content.find((p) => p.type === 'tool_result');
  const callId = result?.type === 'tool_result' ? result.call_id : (knownCallId ?? item.native_item_id ?? item.item_id);
  const texts = item.content.flatMap((p) => (p.type === 'tool_result' ? [p.output] : p.type === 'text' ? [p.text] : []));
  const content = [...texts.filter((t) => t !== '').map((text) => ({ type: 'content', content: { type: 'text', text } })), ...item.content.flatMap(diffContent)];
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId: callId,
    status: item.status === 'failed' ? 'failed' : 'completed',
    ...(content.length > 0 ? { content } : {}),
    _meta: { agentwire: { item_id: item.item_id } },
  };
}

/**
 * A file a tool changed. ACP's diff content wants the whole old and new text, and the universal
 * event keeps a unified diff: it is sent as text content, the path and diff in _meta.
 */
function diffContent(part: ContentPart): Record<string, unknown>[] {
  if (part.type !== 'file_ref' || !part.diff) return [];
  return [{ type: 'content', content: { type: 'text', text: part.diff }, _meta: { agentwire: { file_ref: part } } }];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function fileUri(path: string): string {
  return path.startsWith('/') ? `file://${path}` : path;
}
