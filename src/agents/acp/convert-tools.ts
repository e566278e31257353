// tool_call and tool_call_update → a tool_call item and its tool_result item (the Codex shape):
// the call item carries what the call said (name, raw input, title, the files it touches: diffs as
// file_ref write/patch with a unified diff, locations as file_ref read); the result item opens when
// the call item completes and completes when the status turns completed or failed, with the
// output (text content, terminal output, else rawOutput) and the diffs the call did not carry.
//
// When the call item completes: ACP's `pending` means the call "hasn't started running yet because
// the input is either streaming or we're awaiting approval", and agents do announce a call before
// its input (a name and an empty rawInput first, the arguments in the next update). A pending call
// without input therefore stays open (item.started) and completes with the first update, or the
// permission request, that brings its input, or when it starts running or ends, whichever is first;
// any other call completes at once. A call still waiting when the turn ends never ran: it fails.
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
import { boundedJson, defined, type AcpState, type CallFields, type Out, type ToolState } from './state.js';
import { isObject } from '../../util/is-object.js';

const FINAL = new Set(['completed', 'failed']);

export function toolCall(state: AcpState, call: ToolCallFields): Out {
  const closed = closeMessage(state);
  const next = merge(begin(closed.state, call), call, true);
  const moved = advance(next, call.toolCallId);
  return { state: moved.state, events: [...closed.events, ...moved.events] };
}

export function toolCallUpdate(state: AcpState, update: ToolCallFields): Out {
  const id = update.toolCallId;
  // An update for a call we never saw (it began before a session/load, or the agent skipped it).
  const started = state.tools[id] ? { state, events: [] as Draft[] } : closeMessage(state);
  const known = state.tools[id] ? state : begin(started.state, update);
  if (known.tools[id]!.done) return started;
  const events = [...started.events];
  const meta = isObject(update._meta) ? update._meta : {};
  const prior = known.tools[id]!;
  const terminal = isObject(meta.terminal_output) ? meta.terminal_output : undefined;
  let output = prior.output;
  if (terminal && typeof terminal.data === 'string' && terminal.data !== '') {
    // Output before the result item started (its call still open) gets a stub start from the
    // normalizer; the result's own start then changes nothing.
    output += terminal.data;
    events.push({ type: 'item.delta', key: `result:${id}`, native_item_id: null, delta: terminal.data, stub: { kind: 'tool_result', role: 'tool', parent_key: prior.parent } });
  }
  const tool: ToolState = {
    ...prior,
    content: update.content ?? prior.content,
    rawOutput: update.rawOutput !== undefined ? update.rawOutput : prior.rawOutput,
    output,
    exit: meta.terminal_exit ?? prior.exit,
  };
  const moved = advance(merge({ ...known, tools: { ...known.tools, [id]: tool } }, update, true), id);
  return { state: moved.state, events: [...events, ...moved.events] };
}

/** A permission request describes its call (ACP sends a tool_call_update in it): a call still
 *  waiting for its input takes what the request says, before the permission is shown. */
export function permissionCall(state: AcpState, call: ToolCallFields): Out {
  const tool = state.tools[call.toolCallId];
  if (!tool || tool.phase === 'done') return { state, events: [] };
  return advance(merge(state, call, false), call.toolCallId);
}

/** Closes the calls of an ending turn that never got their input: they did not run. */
export function failWaitingCalls(state: AcpState): Draft[] {
  return Object.entries(state.tools)
    .filter(([, t]) => t.phase === 'open')
    .map(([id, t]) => ({ type: 'item.completed', item: callItem(id, t, 'failed') }));
}

function begin(state: AcpState, call: ToolCallFields): AcpState {
  const tool: ToolState = {
    parent: state.lastMessage,
    call: { title: null, name: null, kind: null, status: 'pending', rawInput: undefined, locations: [], content: [] },
    phase: 'new',
    content: call.content ?? [],
    rawOutput: call.rawOutput,
    output: '',
    exit: undefined,
    diffs: [],
    done: false,
  };
  return { ...state, tools: { ...state.tools, [call.toolCallId]: tool } };
}

/** Takes what an update says about the call itself; each field given replaces the earlier one. */
function merge(state: AcpState, f: ToolCallFields, withStatus: boolean): AcpState {
  const tool = state.tools[f.toolCallId]!;
  const c = tool.call;
  const call: CallFields = {
    title: f.title ?? c.title,
    name: f.name ?? c.name,
    kind: f.kind ?? c.kind,
    status: (withStatus ? f.status : undefined) ?? c.status,
    rawInput: f.rawInput !== undefined && f.rawInput !== null ? f.rawInput : c.rawInput,
    locations: f.locations ?? c.locations,
    content: f.content ?? c.content,
  };
  return { ...state, tools: { ...state.tools, [f.toolCallId]: { ...tool, call } } };
}

/** Moves a call on after a change: starts, completes its item, finishes its result, as due. */
function advance(state: AcpState, id: string): Out {
  const tool = state.tools[id]!;
  const final = FINAL.has(tool.call.status);
  if (tool.phase !== 'done' && (final || !waitingForInput(tool.call))) {
    const diffs = tool.call.content.filter(isDiff).map((d) => d.path!);
    const next: AcpState = { ...state, tools: { ...state.tools, [id]: { ...tool, phase: 'done', diffs } } };
    const events: Draft[] = [
      { type: 'item.completed', item: callItem(id, tool, 'completed') },
      { type: 'item.started', item: resultItem(id, tool.parent, [], 'in_progress') },
    ];
    const done = final ? finish(next, id, tool.call.status) : { state: next, events: [] };
    return { state: done.state, events: [...events, ...done.events] };
  }
  if (tool.phase === 'new') {
    const next: AcpState = { ...state, tools: { ...state.tools, [id]: { ...tool, phase: 'open' } } };
    return { state: next, events: [{ type: 'item.started', item: callItem(id, tool, 'in_progress') }] };
  }
  return final && tool.phase === 'done' && !tool.done ? finish(state, id, tool.call.status) : { state, events: [] };
}

function waitingForInput(call: CallFields): boolean {
  const input = call.rawInput;
  return call.status === 'pending' && (input === undefined || (isObject(input) && Object.keys(input).length === 0));
}

function callItem(id: string, tool: ToolState, status: DraftItem['status']): DraftItem {
  const { call } = tool;
  const diffs = call.content.filter(isDiff);
  const content: ContentPart[] = [
    { type: 'tool_call', name: call.name ?? call.kind ?? 'tool', arguments: JSON.stringify(call.rawInput ?? {}), call_id: id },
    ...(call.title ? [{ type: 'text' as const, text: call.title }] : []),
    ...diffs.map(diffPart),
    ...call.locations.filter((l) => !diffs.some((d) => d.path === l.path)).map((l) => ({ type: 'file_ref' as const, path: l.path, action: 'read' as const })),
  ];
  return { key: `tool:${id}`, native_item_id: id, parent_key: tool.parent, kind: 'tool_call', role: 'assistant', content, status };
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
