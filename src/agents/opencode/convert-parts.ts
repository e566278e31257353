// OpenCode messages and their parts → draft items. Pure. Keys are OpenCode's ids: an assistant
// message is one `message` item (key msg_…) holding its text parts; a reasoning part is its own
// message item (key prt_…) with a reasoning content part, so its deltas never mix with the text's;
// a tool part is a tool_call item (key prt_…) and a tool_result item (key `result:prt_…`), both
// parented to the message. User messages are skipped: the daemon synthesises the user's item
// (OpenCode re-sends the user message with summaries after the turn, which would reopen it).
//
// When an assistant message completes: at its step-finish part (it then has every part), else at
// a later message.updated with time.completed or an error (an aborted step has no step-finish).
// The first message.updated of a message only starts it: under load OpenCode has serialised the
// creation event from the already finished message (test/agents/opencode/fixtures/recorded/README.md).
import type { ContentPart } from '../../schema/events.js';
import type { Draft, DraftItem } from '../types.js';
import { tokenUsage } from '../token-usage.js';
import { FilePart, PatchPart, TextPart, ToolPart, type MessageInfo, type ToolState } from './native.js';

export interface OpenMessage {
  /** Text of its text parts by part id, in part order. */
  readonly texts: Readonly<Record<string, string>>;
  /** file_ref parts from file and patch parts. */
  readonly files: readonly ContentPart[];
  readonly completed: boolean;
}

export interface PartsState {
  /** User message ids of this turn: their parts are skipped. */
  readonly users: Readonly<Record<string, true>>;
  /** This turn's assistant messages. */
  readonly messages: Readonly<Record<string, OpenMessage>>;
  /** Part id → part type, so a delta knows where it goes. */
  readonly partTypes: Readonly<Record<string, string>>;
  /** Tool part id → characters of its output already streamed. */
  readonly outputs: Readonly<Record<string, number>>;
  /** The session's MCP server names (from the driver): OpenCode names their tools `<server>_<tool>`. */
  readonly mcpServers: readonly string[];
}

export const initialParts = (): PartsState => ({ users: {}, messages: {}, partTypes: {}, outputs: {}, mcpServers: [] });

type Out = { parts: PartsState; events: Draft[] };
const EMPTY: OpenMessage = { texts: {}, files: [], completed: false };

export function messageUpdated(s: PartsState, info: MessageInfo): Out {
  if (info.role === 'user') return { parts: { ...s, users: { ...s.users, [info.id]: true } }, events: [] };
  const known = s.messages[info.id];
  if (!known) {
    const parts = { ...s, messages: { ...s.messages, [info.id]: EMPTY } };
    return { parts, events: [{ type: 'item.started', item: message(info.id, [], 'in_progress') }] };
  }
  if (known.completed || (info.time?.completed === undefined && info.error === undefined)) return { parts: s, events: [] };
  return complete(s, info.id, info.error ? 'failed' : 'completed');
}

/** Completes an assistant message with the parts it holds. */
export function complete(s: PartsState, id: string, status: 'completed' | 'failed'): Out {
  const m = s.messages[id] ?? EMPTY;
  if (m.completed) return { parts: s, events: [] };
  const text = Object.values(m.texts).join('');
  const content: ContentPart[] = [...(text !== '' ? [{ type: 'text' as const, text }] : []), ...m.files];
  const parts = { ...s, messages: { ...s.messages, [id]: { ...m, completed: true } } };
  return { parts, events: [{ type: 'item.completed', item: message(id, content, status) }] };
}

/** Ids of the assistant messages still open (closed when the turn ends). */
export const openMessages = (s: PartsState) => Object.keys(s.messages).filter((id) => !s.messages[id]!.completed);

export function partUpdated(s: PartsState, raw: { id: string; messageID: string; type: string }): Out | undefined {
  if (s.users[raw.messageID]) return { parts: s, events: [] };
  const typed = { ...s, partTypes: { ...s.partTypes, [raw.id]: raw.type } };
  const stub = s.messages[raw.messageID] ? [] : [{ type: 'item.started' as const, item: message(raw.messageID, [], 'in_progress') }];
  const withMessage = (p: PartsState): PartsState => (p.messages[raw.messageID] ? p : { ...p, messages: { ...p.messages, [raw.messageID]: EMPTY } });
  const out = (p: PartsState, events: Draft[]): Out => ({ parts: withMessage(p), events: [...stub, ...events] });
  switch (raw.type) {
    case 'text': {
      const part = TextPart.safeParse(raw);
      if (!part.success) return undefined;
      const m = s.messages[raw.messageID] ?? EMPTY;
      const messages = { ...typed.messages, [raw.messageID]: { ...m, texts: { ...m.texts, [raw.id]: part.data.text } } };
      return out({ ...typed, messages }, []);
    }
    case 'reasoning': {
      const part = TextPart.safeParse(raw);
      if (!part.success) return undefined;
      const done = part.data.time?.end !== undefined;
      const item: DraftItem = {
        key: raw.id,
        native_item_id: raw.id,
        parent_key: raw.messageID,
        kind: 'message',
        role: 'assistant',
        content: done ? [{ type: 'reasoning', text: part.data.text, visibility: 'public' }] : [],
        status: done ? 'completed' : 'in_progress',
      };
      return out(typed, [{ type: done ? 'item.completed' : 'item.started', item }]);
    }
    case 'tool': {
      const part = ToolPart.safeParse(raw);
      return part.success ? out(...tool(typed, part.data)) : undefined;
    }
    case 'file': {
      const part = FilePart.safeParse(raw);
      if (!part.success) return undefined;
      return out(addFiles(typed, raw.messageID, [fileContent(part.data)]), []);
    }
    case 'patch': {
      const part = PatchPart.safeParse(raw);
      if (!part.success) return undefined;
      return out(addFiles(typed, raw.messageID, part.data.files.map((path): ContentPart => ({ type: 'file_ref', path, action: 'patch' }))), []);
    }
    case 'step-finish': {
      const done = complete(withMessage(typed), raw.messageID, 'completed');
      // The step's tokens and cost, once per part (a repeated update of the same part adds nothing).
      const usage = s.partTypes[raw.id] === 'step-finish' ? [] : stepUsage(raw);
      return { parts: done.parts, events: [...stub, ...done.events, ...usage] };
    }
    default:
      // step-start, snapshot, retry (session.status retry says it), agent, subtask, compaction:
      // bookkeeping of OpenCode's loop, not conversation.
      return out(typed, []);
  }
}

/** A text or reasoning delta: into the message (text) or the reasoning part's own item. */
export function partDelta(s: PartsState, messageID: string, partID: string, delta: string): Out {
  if (s.users[messageID]) return { parts: s, events: [] };
  if (s.partTypes[partID] === 'reasoning') {
    return { parts: s, events: [{ type: 'item.delta', key: partID, native_item_id: partID, delta, stub: { kind: 'message', role: 'assistant', parent_key: messageID } }] };
  }
  const m = s.messages[messageID] ?? EMPTY;
  const messages = { ...s.messages, [messageID]: { ...m, texts: { ...m.texts, [partID]: (m.texts[partID] ?? '') + delta } } };
  return { parts: { ...s, messages }, events: [{ type: 'item.delta', key: messageID, native_item_id: messageID, delta, stub: { kind: 'message', role: 'assistant' } }] };
}

function addFiles(s: PartsState, id: string, files: ContentPart[]): PartsState {
  const m = s.messages[id] ?? EMPTY;
  return { ...s, messages: { ...s.messages, [id]: { ...m, files: [...m.files, ...files] } } };
}

/** A tool part by state: pending starts the call; running completes it (its input is known) and opens the
 *  result, into which bash output streams; completed / error complete the result. */
function tool(s: PartsState, part: ToolPart): [PartsState, Draft[]] {
  const { id, messageID, callID, state } = part;
  const args = JSON.stringify(state.input);
  const call = (content: ContentPart[], status: DraftItem['status']): DraftItem => ({ key: id, native_item_id: id, parent_key: messageID, kind: 'tool_call', role: 'assistant', content, status });
  const callParts: ContentPart[] = [{ type: 'tool_call', name: part.tool, arguments: args, call_id: callID }, ...mcpTag(s.mcpServers, part.tool), ...fileRefs(part)];
  const resultKey = `result:${id}`;
  const result = (content: ContentPart[], status: DraftItem['status']): DraftItem => ({ key: resultKey, native_item_id: null, parent_key: messageID, kind: 'tool_result', role: 'tool', content, status });
  if (state.status === 'pending') return [s, [{ type: 'item.started', item: call([], 'in_progress') }]];
  const events: Draft[] = [{ type: 'item.completed', item: call(callParts, 'completed') }];
  const output = typeof state.metadata?.output === 'string' ? state.metadata.output : undefined;
  const sent = s.outputs[id] ?? 0;
  let outputs = s.outputs;
  if (state.status === 'running') {
    events.push({ type: 'item.started', item: result([], 'in_progress') });
    if (output !== undefined && output.length > sent) {
      events.push({ type: 'item.delta', key: resultKey, native_item_id: null, delta: output.slice(sent), stub: { kind: 'tool_result', role: 'tool', parent_key: messageID } });
      outputs = { ...outputs, [id]: output.length };
    }
    return [{ ...s, outputs }, events];
  }
  const failed = state.status === 'error';
  const text = failed ? (state.error ?? 'error') : (state.output ?? output ?? '');
  const content: ContentPart[] = [{ type: 'tool_result', call_id: callID, output: text }];
  if (!failed) content.push(...fileRefs(part), ...(state.attachments ?? []).map(fileContent));
  if (state.title) content.push({ type: 'status', label: state.status, detail: exitDetail(state) ?? state.title });
  events.push({ type: 'item.completed', item: result(content, failed ? 'failed' : 'completed') });
  const { [id]: _dropped, ...rest } = outputs;
  return [{ ...s, outputs: rest }, events];
}

/** `{mcp_server, tool}` when the tool is one of the session's MCP servers' (OpenCode's key is the
 *  server and tool names with anything but [A-Za-z0-9_-] replaced by `_`, joined by `_`). */
function mcpTag(servers: readonly string[], name: string): ContentPart[] {
  for (const server of servers) {
    const prefix = `${server.replace(/[^a-zA-Z0-9_-]/g, '_')}_`;
    if (name.startsWith(prefix) && name.length > prefix.length) return [{ type: 'json', json: { mcp_server: server, tool: name.slice(prefix.length) } }];
  }
  return [];
}

/** A FilePart: an `image` part for image types (a read of a picture, a generated image), else a
 *  `file_ref`. Named by its path or filename; a data: URL is not a name (raw keeps it). */
function fileContent(file: { mime: string; url: string; filename?: string | undefined; source?: { path?: string | undefined } | undefined }): ContentPart {
  const path = file.source?.path ?? file.filename ?? (file.url.startsWith('data:') ? '(inline)' : file.url);
  return file.mime.startsWith('image/') ? { type: 'image', path, mime: file.mime } : { type: 'file_ref', path, action: 'read' };
}

function exitDetail(state: ToolState): string | undefined {
  const exit = state.metadata?.exit;
  return typeof exit === 'number' ? `exit code ${exit}` : undefined;
}

/** The files a write/edit/patch tool touches, with a diff when OpenCode gives one (or it is a new file). */
function fileRefs(part: ToolPart): ContentPart[] {
  const { input, metadata } = part.state;
  const path = typeof metadata?.filepath === 'string' ? metadata.filepath : typeof input.filePath === 'string' ? input.filePath : undefined;
  if (!path || !['write', 'edit', 'patch', 'multiedit'].includes(part.tool)) return [];
  let diff: string | undefined = typeof metadata?.diff === 'string' ? metadata.diff : undefined;
  if (diff === undefined && part.tool === 'write' && metadata?.exists === false && typeof input.content === 'string') diff = newFileDiff(path, input.content);
  return [{ type: 'file_ref', path, action: part.tool === 'write' ? 'write' : 'patch', ...(diff !== undefined ? { diff } : {}) }];
}

function newFileDiff(path: string, text: string): string {
  const lines = text === '' ? [] : text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const range = lines.length === 1 ? '1' : lines.length === 0 ? '0,0' : `1,${lines.length}`;
  return `--- /dev/null\n+++ b/${path}\n@@ -0,0 +${range} @@\n${lines.map((l) => `+${l}\n`).join('')}`;
}

function message(id: string, content: ContentPart[], status: DraftItem['status']): DraftItem {
  return { key: id, native_item_id: id, kind: 'message', role: 'assistant', content, status };
}

/**
 * A step-finish part's `tokens` and `cost` as a usage step (docs/budgets.md). OpenCode's `input`
 * leaves its cache reads and writes out, as Anthropic's does; the universal count has them.
 */
function stepUsage(raw: Record<string, unknown>): Draft[] {
  const t = raw.tokens as { input?: unknown; output?: unknown; reasoning?: unknown; cache?: { read?: unknown; write?: unknown } } | undefined;
  if (typeof t !== 'object' || t === null) return [];
  const read = t.cache?.read ?? 0;
  const write = t.cache?.write ?? 0;
  const input = typeof t.input === 'number' && typeof read === 'number' && typeof write === 'number' ? t.input + read + write : undefined;
  const usage = tokenUsage({ input, output: t.output, cacheRead: t.cache?.read, cacheCreation: t.cache?.write, reasoning: t.reasoning });
  if (!usage) return [];
  const cost = typeof raw.cost === 'number' && raw.cost >= 0 ? { cost_usd: raw.cost } : {};
  return [{ type: 'usage', usage, ...cost }];
}
