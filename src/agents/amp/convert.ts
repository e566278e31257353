// Amp's converter: `--stream-json-thinking` stdout lines and the driver's own `agentwire.*`
// messages (native.ts) → draft events. Pure (rule: Pure converters). Amp gives messages no id, so a message
// item's key is `msg:<n>`, counted per session; tool items are keyed by the tool_use id. Every
// assistant line is a whole message (Amp does not stream): it completes at once, and the normalizer
// adds the one full-text delta.
import type { ContentPart, TokenUsage } from '../../schema/events.js';
import { addUsage, fromAnthropic } from '../token-usage.js';
import { summariseIssues, unparsedDraft, guardedConverter } from '../unparsed.js';
import type { Converter, Draft, DraftItem } from '../types.js';
import { toolCallItem, toolRef, toolResultItem, type ToolRef } from './convert-tools.js';
import { AmpOut, AssistantBlock, ToolResultBlock } from './native.js';

export interface AmpState {
  /** Assistant messages seen in the session (the next message is `msg:<messages + 1>`). */
  readonly messages: number;
  /** This turn's tool calls by tool_use id, for their results. Cleared at `result`. */
  readonly tools: Readonly<Record<string, ToolRef>>;
  /** This turn's tokens so far: Amp reports usage per assistant message, never in `result`. */
  readonly usage?: TokenUsage | undefined;
}

type Out = { state: AmpState; events: Draft[] };
type LineOf<K extends AmpOut['type']> = Extract<AmpOut, { type: K }>;

const LOCATION = 'amp.convert';
const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);

export const ampConverter: Converter<AmpState> = guardedConverter(LOCATION, () => ({ messages: 0, tools: {} }), convertLine);

function convertLine(state: AmpState, native: unknown): Out {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  const parsed = AmpOut.safeParse(native);
  if (!parsed.success) return { state, events: [unparsed(summariseIssues(parsed.error.issues, native), native)] };
  const line = parsed.data;
  switch (line.type) {
    case 'system':
      return system(state, line, native);
    case 'assistant':
      return assistant(state, line);
    case 'user':
      return user(state, line);
    case 'result':
      return result(state, line);
    case 'agentwire.permission':
      return { state, events: permission(line) };
    case 'agentwire.exit':
      return { state: { ...state, tools: {}, usage: undefined }, events: exited(line, state.usage) };
  }
}

function system(state: AmpState, line: LineOf<'system'>, native: unknown): Out {
  if (line.subtype !== 'init' || line.session_id === undefined) return { state, events: [unparsed(`system line without init/session_id`, native)] };
  // Printed first by every turn's process; the normalizer keeps the first as the session's start.
  const { cwd, tools, mcp_servers, agent_mode } = line;
  return { state, events: [{ type: 'session.started', native_session_id: line.session_id, data: { metadata: { cwd, tools, mcp_servers, agent_mode } } }] };
}

function assistant(state: AmpState, line: LineOf<'assistant'>): Out {
  const n = state.messages + 1;
  const key = `msg:${n}`;
  const parts: ContentPart[] = [];
  const calls: DraftItem[] = [];
  let tools = state.tools;
  const hasParts = line.message.content.some((b) => b.type !== 'tool_use');
  for (const raw of line.message.content) {
    const block = AssistantBlock.safeParse(raw);
    if (!block.success) {
      parts.push({ type: 'json', json: raw }); // a block type this build does not write: kept, not lost
      continue;
    }
    const b = block.data;
    if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'thinking') parts.push({ type: 'reasoning', text: b.thinking, visibility: 'public' });
    else if (b.type === 'redacted_thinking') parts.push({ type: 'reasoning', text: '', visibility: 'private' });
    else {
      // A message of tool calls only has no item of its own: its calls have no parent.
      const parent = hasParts ? key : null;
      tools = { ...tools, [b.id]: toolRef(parent, b) };
      calls.push(toolCallItem(parent, b));
    }
  }
  const events: Draft[] = [];
  if (hasParts) {
    // stop_reason null: the message was cut short (a cancelled turn).
    const status = line.message.stop_reason === null ? 'failed' : 'completed';
    events.push({ type: 'item.completed', item: { key, native_item_id: null, kind: 'message', role: 'assistant', content: parts, status } });
  }
  for (const item of calls) events.push({ type: 'item.completed', item });
  const usage = addUsage(state.usage, fromAnthropic(line.message.usage));
  return { state: { messages: hasParts ? n : state.messages, tools, usage }, events };
}

function user(state: AmpState, line: LineOf<'user'>): Out {
  // Text blocks are Amp's echo of our prompt: the daemon already logged the user message.
  const content = typeof line.message.content === 'string' ? [] : line.message.content;
  const events: Draft[] = [];
  for (const raw of content) {
    if (raw.type !== 'tool_result') continue;
    const block = ToolResultBlock.safeParse(raw);
    if (!block.success) {
      events.push(unparsed(`user: ${summariseIssues(block.error.issues, raw)}`, raw));
      continue;
    }
    const { tool_use_id, content: output, is_error } = block.data;
    events.push({ type: 'item.completed', item: toolResultItem(tool_use_id, output, is_error === true, state.tools[tool_use_id]) });
  }
  return { state, events };
}

function result(state: AmpState, line: LineOf<'result'>): Out {
  const events: Draft[] = [];
  // An error result comes with exit code 0: is_error is the only sign of failure.
  if (line.is_error) events.push({ type: 'error', data: { message: line.error ?? line.subtype, code: `amp_${line.subtype}` } });
  const { subtype, duration_ms, num_turns } = line;
  const reason = line.is_error ? 'error' : 'completed';
  const usage = state.usage ? { usage: state.usage } : {};
  events.push({ type: 'turn.ended', data: { metadata: { reason, ...usage, subtype, duration_ms, num_turns, ...(line.is_error ? {} : { result: line.result }) } } });
  // Message keys stay counted across turns: they must be unique in the session.
  return { state: { messages: state.messages, tools: {} }, events };
}

function permission(line: LineOf<'agentwire.permission'>): Draft[] {
  const metadata = { input: line.input, ...(line.thread_id ? { thread_id: line.thread_id } : {}) };
  const requested: Draft = { type: 'permission.requested', data: { permission_id: line.id, action: line.tool, status: 'requested', metadata } };
  if (line.decided !== 'always') return [requested];
  // Answered at once by an `always` reply given earlier in this session: shown, not asked.
  const resolved: Draft = {
    type: 'permission.resolved',
    source: 'daemon',
    synthetic: true,
    data: { permission_id: line.id, action: line.tool, status: 'approved', metadata: { ...metadata, reply: 'always', reason: 'remembered' } },
  };
  return [requested, resolved];
}

function exited(line: LineOf<'agentwire.exit'>, usage: TokenUsage | undefined): Draft[] {
  const details = { exit_code: line.exit_code, signal: line.signal };
  if (line.interrupted) {
    return [
      { type: 'error', data: { message: line.message, code: 'amp_interrupted', details } },
      { type: 'turn.ended', data: { metadata: { reason: 'interrupted', ...(usage ? { usage } : {}), subtype: 'interrupted' } } },
    ];
  }
  return [
    { type: 'error', data: { message: line.message, code: line.resume_failed ? 'native_resume_failed' : 'amp_exited', details } },
    {
      type: 'session.ended',
      data: { reason: 'error', terminated_by: 'agent', message: line.message, exit_code: line.exit_code, ...(line.stderr ? { stderr: line.stderr as never } : {}) },
    },
  ];
}
