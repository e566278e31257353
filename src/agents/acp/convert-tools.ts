// tool_call and tool_call_update → a tool_call item and its tool_result item (the Codex shape):
// the call item completes at once with what the call said (name, raw input, title, the files it
// touches: diffs as file_ref write/patch with a unified diff, locations as file_ref read); the
// result item opens beside it and completes when the status turns completed or failed, with the
// output (text content, terminal output, else rawOutput) and the diffs the call did not carry.
//
// Terminal output: we advertise no client terminal, so an agent runs commands itself and reports
// their output as text content or rawOutput. Agents that stream it as the `_meta.terminal_output`
// extension ({terminal_id, data}; `_meta.terminal_exit` {exit_code, signal}) have it streamed
// as deltas of the result item. A `terminal` content (a client terminal id) is named in the output.
import type { ContentPart } from '../../schema/events.js';
import type { Draft, DraftItem } from '../types.js';
import { blockPart, blockText, closeMessage } from './convert-messages.js';
import { unifiedDiff } from './diff.js';
import type { ToolCallContent, ToolCallFields } from './native.js';
import { boundedJson, defined, isObject, type AcpState, type Out, type ToolState } from './state.js';

const FINAL = new Set(['completed', 'failed']);

export function toolCall(state: AcpState, call: ToolCallFields): Out {
  const closed = closeMessage(state);
  const id = call.toolCallId;
  const parent = closed.state.lastMessage;
  const diffs = (call.content ?? []).filter(isDiff);
  const callParts: ContentPart[] = [
    { type: 'tool_call', name: call.name ?? call.kind ?? 'tool', arguments: JSON.stringify(call.rawInput ?? {}), call_id: id },
    ...(call.title ? [{ type: 'text' as const, text: call.title }] : []),
    ...diffs.map(diffPart),
    ...(call.locations ?? []).filter((l) => !diffs.some((d) => d.path === l.path)).map((l) => ({ type: 'file_ref' as const, path: l.path, action: 'read' as const })),
  ];
  const base = { native_item_id: id, parent_key: parent };
  const events: Draft[] = [
    { type: 'item.completed', item: { ...base, key: `tool:${id}`, kind: 'tool_call', role: 'assistant', content: callParts, status: 'completed' } },
    { type: 'item.started', item: resultItem(id, parent, [], 'in_progress') },
  ];
  const tool: ToolState = {
    parent,
    kind: call.kind ?? null,
    content: call.content ?? [],
    rawOutput: call.rawOutput,
    output: '',
    exit: undefined,
    diffs: diffs.map((d) => d.path!),
    done: false,
  };
  const next: AcpState = { ...closed.state, tools: { ...closed.state.tools, [id]: tool } };
  const out = FINAL.has(call.status ?? '') ? finish(next, id, call.status!) : { state: next, events: [] };
  return { state: out.state, events: [...closed.events, ...events, ...out.events] };
}

export function toolCallUpdate(state: AcpState, update: ToolCallFields): Out {
  const id = update.toolCallId;
  // An update for a call we never saw (it began before a session/load, or the agent skipped it).
  const started = state.tools[id] ? { state, events: [] as Draft[] } : toolCall(state, { ...update, status: null });
  const prior = started.state.tools[id]!;
  if (prior.done) return started;
  const events = [...started.events];
  const meta = isObject(update._meta) ? update._meta : {};
  let output = prior.output;
  const terminal = isObject(meta.terminal_output) ? meta.terminal_output : undefined;
  if (terminal && typeof terminal.data === 'string' && terminal.data !== '') {
    output += terminal.data;
    events.push({ type: 'item.delta', key: `result:${id}`, native_item_id: null, delta: terminal.data, stub: { kind: 'tool_result', role: 'tool', parent_key: prior.parent } });
  }
  const tool: ToolState = {
    ...prior,
    kind: update.kind ?? prior.kind,
    content: update.content ?? prior.content,
    rawOutput: update.rawOutput !== undefined ? update.rawOutput : prior.rawOutput,
    output,
    exit: meta.terminal_exit ?? prior.exit,
  };
  const next: AcpState = { ...started.state, tools: { ...started.state.tools, [id]: tool } };
  if (!FINAL.has(update.status ?? '')) return { state: next, events };
  const done = finish(next, id, update.status!);
  return { state: done.state, events: [...events, ...done.events] };
}

/** Completes a tool's result item. */
function finish(state: AcpState, id: string, status: string): Out {
  const tool = state.tools[id]!;
  const texts: string[] = [];
  const extra: ContentPart[] = [];
  for (const c of tool.content) {
    if (c.type === 'content' && c.content) {
      const text = blockText(c.content);
      if (text !== undefined) texts.push(text);
      else extra.push(blockPart(c.content));
    } else if (isDiff(c)) {
      if (!tool.diffs.includes(c.path!)) extra.push(diffPart(c));
    } else if (c.type === 'terminal') {
      if (tool.output === '') texts.push(`(terminal ${c.terminalId ?? ''})`);
    } else extra.push({ type: 'json', json: c });
  }
  if (tool.output !== '') texts.push(tool.output);
  let output = texts.join('\n');
  if (output === '' && tool.rawOutput !== undefined) output = boundedJson(tool.rawOutput);
  const parts: ContentPart[] = [{ type: 'tool_result', call_id: id, output }, ...extra];
  if (tool.exit !== undefined) parts.push({ type: 'json', json: defined({ terminal_exit: tool.exit }) });
  const item = resultItem(id, tool.parent, parts, status === 'failed' ? 'failed' : 'completed');
  return { state: { ...state, tools: { ...state.tools, [id]: { ...tool, done: true } } }, events: [{ type: 'item.completed', item }] };
}

function resultItem(id: string, parent: string | null, content: ContentPart[], status: DraftItem['status']): DraftItem {
  return { key: `result:${id}`, native_item_id: null, parent_key: parent, kind: 'tool_result', role: 'tool', content, status };
}

const isDiff = (c: ToolCallContent): boolean => c.type === 'diff' && typeof c.path === 'string' && typeof c.newText === 'string';

/** A diff as a file change: a new file (no old text) is a write, anything else a patch. */
function diffPart(c: ToolCallContent): ContentPart {
  const path = c.path!;
  return { type: 'file_ref', path, action: c.oldText == null ? 'write' : 'patch', diff: unifiedDiff(path, c.oldText, c.newText!) };
}
