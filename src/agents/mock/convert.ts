// The mock's converter: MockOut lines → draft events. Pure (rule: Pure converters): the only memory is the
// role of each message that has started and not yet ended, which is what a `text` line lacks.
import type { ContentPart } from '../../schema/events.js';
import type { Converter, Draft, DraftItem } from '../types.js';
import { summariseIssues, unparsedDraft, guardedConverter } from '../unparsed.js';
import { tokenUsage } from '../token-usage.js';
import { MockOut, subagentOf, type MockPart } from './native.js';

type Role = 'assistant' | 'system';

export interface MockState {
  /** Messages between message_start and message_end, by the mock's id. Cleared at `done`. */
  readonly open: Readonly<Record<string, Role>>;
}

const LOCATION = 'mock.convert';

export const mockConverter: Converter<MockState> = guardedConverter(LOCATION, () => ({ open: {} }), (state, native) => {
  const out = convertLine(state, native);
  const agent = subagentOf(native);
  return agent === undefined ? out : { state: out.state, events: out.events.map((d) => ({ ...d, subagent_key: agent })) };
});

function convertLine(state: MockState, native: unknown): { state: MockState; events: Draft[] } {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  const parsed = MockOut.safeParse(native);
  if (!parsed.success) return { state, events: [unparsed(summarise(parsed.error.issues, native), native)] };
  const line = parsed.data;
  switch (line.type) {
    case 'ready': {
      const resumed = line.resumed ? { resumed: true, ...(line.turns !== undefined ? { earlier_turns: line.turns } : {}) } : {};
      return emit(state, {
        type: 'session.started',
        native_session_id: line.session,
        data: { metadata: { model: line.model, ...(line.mode ? { mode: line.mode } : {}), cwd: line.cwd, pid: line.pid, ...resumed } },
      });
    }
    case 'message_start':
      return emit(withOpen(state, line.id, line.role), {
        type: 'item.started',
        item: messageItem(line.id, line.role, [], 'in_progress'),
      });
    case 'text': {
      const known = Object.hasOwn(state.open, line.id);
      return emit(state, {
        type: 'item.delta',
        key: line.id,
        native_item_id: line.id,
        delta: line.chunk,
        // A chunk without its start still needs an item to land in; assistant is the mock's default.
        ...(known ? {} : { stub: { kind: 'message', role: 'assistant' } }),
      });
    }
    case 'message_end':
      return emit(withoutOpen(state, line.id), {
        type: 'item.completed',
        item: messageItem(line.id, line.role, line.parts.map(toPart), 'completed'),
      });
    case 'tool_call':
    case 'tool_result':
    case 'progress':
    case 'artifact':
    case 'ask_permission':
    case 'ask_question':
    case 'failure':
      return emit(state, statelessDraft(line));
    case 'usage': {
      const usage = tokenUsage({ input: line.input_tokens, output: line.output_tokens, cacheRead: line.cache_read_input_tokens });
      if (!usage) return emit(state, unparsed('usage: counts are not whole numbers', native));
      return emit(state, { type: 'usage', usage, ...(line.model ? { model: line.model } : {}), ...(line.wait ? { held: true } : {}) });
    }
    case 'subagent_start':
    case 'subagent_end':
      return emit(state, subagentDraft(line));
    case 'done': {
      // A turn never leaves a message open on purpose; forget any so the state stays bounded.
      const u = line.usage && tokenUsage({ input: line.usage.input_tokens, output: line.usage.output_tokens, cacheRead: line.usage.cache_read_input_tokens });
      return emit({ open: {} }, { type: 'turn.ended', data: { metadata: { reason: line.reason, ...(u ? { usage: u } : {}) } } });
    }
    case 'bye':
      return emit({ open: {} }, { type: 'session.ended', data: { reason: 'completed', terminated_by: 'agent' } });
  }
}

/** A sub-agent's start or end: keyed by the mock's id for it, started under tool call `call`. */
function subagentDraft(line: Extract<MockOut, { type: 'subagent_start' | 'subagent_end' }>): Draft {
  if (line.type === 'subagent_end') {
    return { type: 'subagent.ended', key: line.id, data: { outcome: line.outcome, ...(line.summary !== undefined ? { summary: line.summary } : {}) } };
  }
  const { id, call, description, prompt, agent_type } = line;
  const data = { ...(description !== undefined ? { description } : {}), ...(prompt !== undefined ? { prompt } : {}), ...(agent_type !== undefined ? { agent_type } : {}) };
  return { type: 'subagent.started', key: id, parent_key: call, native_subagent_id: id, data };
}

type StatelessLine = Extract<MockOut, { type: 'tool_call' | 'tool_result' | 'progress' | 'artifact' | 'ask_permission' | 'ask_question' | 'failure' }>;

/** The lines that need no state: each is one draft of its own. */
function statelessDraft(line: StatelessLine): Draft {
  switch (line.type) {
    case 'tool_call':
      return {
        type: 'item.completed',
        item: {
          ...keyed(line.id),
          parent_key: line.parent,
          kind: 'tool_call',
          role: 'assistant',
          content: [{ type: 'tool_call', name: line.tool, arguments: JSON.stringify(line.input), call_id: line.id }],
          status: 'completed',
        },
      };
    case 'tool_result':
      return {
        type: 'item.completed',
        item: {
          ...keyed(line.id),
          parent_key: line.parent,
          kind: 'tool_result',
          role: 'tool',
          content: [{ type: 'tool_result', call_id: line.call, output: line.output }, ...(line.files ?? []).map(toPart)],
          status: line.failed ? 'failed' : 'completed',
        },
      };
    case 'progress':
      return {
        type: 'item.completed',
        item: { ...keyed(line.id), kind: 'status', role: null, content: [statusPart(line.label, line.detail)], status: 'completed' },
      };
    case 'artifact':
      return {
        type: 'item.completed',
        item: { ...keyed(line.id), kind: 'unknown', role: null, content: [{ type: 'json', json: line.payload }], status: 'completed' },
      };
    case 'ask_permission':
      return {
        type: 'permission.requested',
        data: {
          permission_id: line.id,
          action: line.action,
          status: 'requested',
          ...(line.input !== undefined || line.call !== undefined ? { metadata: { ...(line.input !== undefined ? { input: line.input } : {}), ...(line.call !== undefined ? { call_id: line.call } : {}) } } : {}),
        },
      };
    case 'ask_question':
      return {
        type: 'question.requested',
        data: { question_id: line.id, prompt: line.prompt, options: line.options, status: 'requested' },
      };
    case 'failure':
      return {
        type: 'error',
        data: { message: line.message, ...(line.code !== undefined ? { code: line.code } : {}) },
      };
  }
}

function emit(state: MockState, draft: Draft): { state: MockState; events: Draft[] } {
  return { state, events: [draft] };
}

function withOpen(state: MockState, id: string, role: Role): MockState {
  return { open: { ...state.open, [id]: role } };
}

function withoutOpen(state: MockState, id: string): MockState {
  if (!Object.hasOwn(state.open, id)) return state;
  const { [id]: _closed, ...open } = state.open;
  return { open };
}

function keyed(id: string): Pick<DraftItem, 'key' | 'native_item_id'> {
  return { key: id, native_item_id: id };
}

function messageItem(id: string, role: Role, content: ContentPart[], status: DraftItem['status']): DraftItem {
  return { ...keyed(id), kind: role === 'system' ? 'system' : 'message', role, content, status };
}

function statusPart(label: string, detail: string | undefined): ContentPart {
  return { type: 'status', label, ...(detail !== undefined ? { detail } : {}) };
}

function toPart(part: MockPart): ContentPart {
  switch (part.kind) {
    case 'text':
      return { type: 'text', text: part.value };
    case 'thinking':
      return { type: 'reasoning', text: part.value, visibility: part.private ? 'private' : 'public' };
    case 'data':
      return { type: 'json', json: part.value };
    case 'file':
      return { type: 'file_ref', path: part.path, action: part.op, ...(part.diff !== undefined ? { diff: part.diff } : {}) };
    case 'picture':
      return { type: 'image', path: part.path, ...(part.mime !== undefined ? { mime: part.mime } : {}) };
    case 'progress':
      return statusPart(part.label, part.detail);
  }
}

const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);
const summarise = summariseIssues;
