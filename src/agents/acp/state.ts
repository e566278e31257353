// The ACP converter's state (pure data, replaced, never mutated) and the small helpers every part
// of the converter shares: item keys, status items, bounded JSON.
import type { ContentPart } from '../../schema/events.js';
import type { Draft, DraftItem } from '../types.js';
import type { ToolCallContent, ToolCallLocation } from './native.js';
import { isObject } from '../../util/is-object.js';

/** The message being streamed. ACP has no "message ended" update: a message ends when a chunk of
 *  another stream (or message id) arrives, a tool call starts, or the turn ends. */
export interface OpenMessage {
  stream: 'agent' | 'thought' | 'user';
  key: string;
  messageId: string | null;
  text: string;
  /** Non-text content (images, resources) kept for the completed item. */
  parts: readonly ContentPart[];
}

/** What describes a call (its item): the latest of each field the tool_call and its updates gave. */
export interface CallFields {
  title: string | null;
  name: string | null;
  kind: string | null;
  /** ACP's status; a tool_call without one is `pending` (the protocol's default). */
  status: string;
  rawInput: unknown;
  locations: readonly ToolCallLocation[];
  content: readonly ToolCallContent[];
}

export interface ToolState {
  parent: string | null;
  call: CallFields;
  /** `new` before any event of it, `open` while the call waits for its input (its item started,
   *  not completed), `done` once the call item has completed and its result item has opened. */
  phase: 'new' | 'open' | 'done';
  /** The latest `content` (an update's content replaces the earlier one) and `rawOutput`. */
  content: readonly ToolCallContent[];
  rawOutput: unknown;
  /** Terminal output streamed so far (the `_meta.terminal_output` extension) and its exit. */
  output: string;
  exit: unknown;
  /** Paths whose diff is already in the call item, so the result item does not repeat them. */
  diffs: readonly string[];
  done: boolean;
}

export interface AcpState {
  /** From the initialize answer: named in session.started. */
  readonly agentInfo: Record<string, unknown> | null;
  readonly open: OpenMessage | null;
  /** Items numbered so far (messages, thoughts, status items): keys stay unique in the session. */
  readonly counter: number;
  /** The turn's latest assistant message key: the parent of the tool items that follow it. */
  readonly lastMessage: string | null;
  readonly tools: Readonly<Record<string, ToolState>>;
  /** Open permission requests by JSON-RPC id: what their resolution repeats if the agent withdraws one. */
  readonly permissions: Readonly<Record<string, { action: string; metadata: Record<string, unknown> }>>;
  /** The last usage_update, reported with turn.ended. */
  readonly usage: unknown;
  /** Tool call ids whose sub-agent is running (convert-subagents.ts). */
  readonly subagents: Readonly<Record<string, true>>;
}

export type Out = { state: AcpState; events: Draft[] };

export const initialState = (): AcpState => ({ agentInfo: null, open: null, counter: 0, lastMessage: null, tools: {}, permissions: {}, usage: undefined, subagents: {} });

export function statusItem(state: AcpState, label: string, detail: string, json?: unknown): Out {
  const n = state.counter + 1;
  const content: ContentPart[] = [{ type: 'status', label, detail }];
  if (json !== undefined) content.push({ type: 'json', json });
  const item: DraftItem = { key: `status:${n}`, native_item_id: null, kind: 'status', role: null, content, status: 'completed' };
  return { state: { ...state, counter: n }, events: [{ type: 'item.completed', item }] };
}

/** A value as text for a status item or a tool's output, cut at 4 KB (raw keeps the whole message). */
export function boundedJson(value: unknown): string {
  const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 4096 ? `${text.slice(0, 4096)}…` : text;
}

export function defined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined && v !== null));
}
