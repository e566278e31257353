// Codex ThreadItems (item/started, item/completed) → draft items. Pure. Keys are Codex's item ids
// (the model's msg_/rs_/call_ ids or UUIDs); a tool's result is a separate item `result:<id>`.
//
// Tools (commandExecution, fileChange, mcpToolCall): at item/started the call is whole (command,
// changes, arguments), so its tool_call item completes at once and its tool_result item is opened
// empty, so output deltas (item/commandExecution/outputDelta, item/fileChange/outputDelta) stream
// into it; item/completed completes the result (and repeats the call, which the normalizer drops
// as a duplicate, or starts it if item/started was missed). A tool item's parent is the turn's
// latest agent message, if any, fixed when the tool starts.
import type { ContentPart } from '../../schema/events.js';
import type { Draft, DraftItem } from '../types.js';
import { AnyItem, KnownItem, type FileUpdateChange } from './native.js';

export interface ItemContext {
  /** The key of the turn's latest agent message: a tool's parent. */
  lastMessage: string | null;
  /** Parents of this turn's tool items, by item id (so call and result agree). */
  parents: Readonly<Record<string, string | null>>;
}

type Phase = 'started' | 'completed';
export interface ItemOut {
  events: Draft[];
  lastMessage: string | null;
  /** The tool item's parent, to remember; undefined for other items. */
  parent?: { id: string; key: string | null };
  /** A fileChange's changes, remembered for its approval request. */
  changes?: { id: string; changes: FileUpdateChange[] };
}

export function convertItem(phase: Phase, raw: { type: string }, ctx: ItemContext): ItemOut | undefined {
  const parsed = KnownItem.safeParse(raw);
  if (!parsed.success) {
    const any = AnyItem.safeParse(raw);
    if (!any.success) return undefined; // no id: not an item we can track
    // Known types with unexpected fields land here too: kept whole rather than lost.
    const item: DraftItem = { key: any.data.id, native_item_id: any.data.id, kind: 'unknown', role: null, content: [{ type: 'json', json: raw }], status: statusOf(phase) };
    return { events: [{ type: phase === 'started' ? 'item.started' : 'item.completed', item }], lastMessage: ctx.lastMessage };
  }
  const item = parsed.data;
  const type = phase === 'started' ? ('item.started' as const) : ('item.completed' as const);
  const same = (d: DraftItem): ItemOut => ({ events: [{ type, item: d }], lastMessage: ctx.lastMessage });
  switch (item.type) {
    case 'userMessage': {
      const content: ContentPart[] = phase === 'started' ? [] : item.content.flatMap(userPart);
      return same(message(item.id, 'user', content, phase));
    }
    case 'agentMessage': {
      const content: ContentPart[] = phase === 'completed' && item.text !== '' ? [{ type: 'text', text: item.text }] : [];
      return { events: [{ type, item: message(item.id, 'assistant', content, phase) }], lastMessage: item.id };
    }
    case 'reasoning': {
      // Summary parts are what the model shows (public); raw reasoning content is private.
      const content: ContentPart[] =
        phase === 'started'
          ? []
          : [
              ...item.summary.map((text) => ({ type: 'reasoning' as const, text, visibility: 'public' as const })),
              ...item.content.map((text) => ({ type: 'reasoning' as const, text, visibility: 'private' as const })),
            ];
      return same(message(item.id, 'assistant', content, phase));
    }
    case 'imageView':
      return same(message(item.id, 'assistant', [{ type: 'image', path: item.path }], phase));
    case 'webSearch': {
      const args = JSON.stringify({ query: item.query, ...(item.action != null ? { action: item.action } : {}) });
      const content: ContentPart[] = [{ type: 'tool_call', name: 'web_search', arguments: args, call_id: item.id }];
      if (item.results) content.push({ type: 'json', json: { results: item.results } });
      const parent = parentOf(item.id, ctx);
      return { ...same(call(item.id, parent, content, statusOf(phase))), parent: { id: item.id, key: parent } };
    }
    case 'commandExecution':
    case 'fileChange':
    case 'mcpToolCall':
      return toolItem(phase, item, ctx);
  }
}

type ToolItem = Extract<KnownItem, { type: 'commandExecution' | 'fileChange' | 'mcpToolCall' }>;

/** The items that are tool calls: a call item and its result item each (see the header). */
function toolItem(phase: Phase, item: ToolItem, ctx: ItemContext): ItemOut {
  switch (item.type) {
    case 'commandExecution': {
      const args = JSON.stringify({ command: item.command, cwd: item.cwd ?? null });
      const callParts: ContentPart[] = [{ type: 'tool_call', name: 'command_execution', arguments: args, call_id: item.id }];
      const failed = item.status === 'failed' || item.status === 'declined' || (item.exitCode != null && item.exitCode !== 0);
      const detail = item.exitCode != null ? `exit code ${item.exitCode}` : null;
      const resultParts: ContentPart[] = [
        { type: 'tool_result', call_id: item.id, output: item.aggregatedOutput ?? '' },
        { type: 'status', label: item.status, detail },
      ];
      return tool(phase, item.id, ctx, callParts, resultParts, failed);
    }
    case 'fileChange': {
      const args = JSON.stringify({ changes: item.changes.map((c) => ({ path: c.path, kind: c.kind })) });
      const callParts: ContentPart[] = [{ type: 'tool_call', name: 'file_change', arguments: args, call_id: item.id }, ...item.changes.map(fileRef)];
      const failed = item.status === 'failed' || item.status === 'declined';
      const resultParts: ContentPart[] = [
        { type: 'tool_result', call_id: item.id, output: item.status },
        ...(failed ? [] : item.changes.map((c): ContentPart => ({ type: 'file_ref', path: targetPath(c), action: actionOf(c) }))),
        { type: 'status', label: item.status },
      ];
      return { ...tool(phase, item.id, ctx, callParts, resultParts, failed), changes: { id: item.id, changes: item.changes } };
    }
    case 'mcpToolCall': {
      const name = `mcp__${item.server}__${item.tool}`;
      const callParts: ContentPart[] = [
        { type: 'tool_call', name, arguments: JSON.stringify(item.arguments ?? {}), call_id: item.id },
        { type: 'json', json: { mcp_server: item.server, tool: item.tool } },
      ];
      const failed = item.status === 'failed' || item.error != null;
      const output = item.error?.message ?? mcpText(item.result?.content ?? []);
      const resultParts: ContentPart[] = [{ type: 'tool_result', call_id: item.id, output }];
      if (item.result?.structuredContent != null) resultParts.push({ type: 'json', json: item.result.structuredContent });
      return tool(phase, item.id, ctx, callParts, resultParts, failed);
    }
  }
}

/** A tool's call and result items (see the header). */
function tool(phase: Phase, id: string, ctx: ItemContext, callParts: ContentPart[], resultParts: ContentPart[], failed: boolean): ItemOut {
  const parent = parentOf(id, ctx);
  const events: Draft[] = [{ type: 'item.completed', item: call(id, parent, callParts, 'completed') }];
  const key = `result:${id}`;
  const base = { key, native_item_id: null, parent_key: parent, kind: 'tool_result', role: 'tool' } as const;
  if (phase === 'started') events.push({ type: 'item.started', item: { ...base, content: [], status: 'in_progress' } });
  else events.push({ type: 'item.completed', item: { ...base, content: resultParts, status: failed ? 'failed' : 'completed' } });
  return { events, lastMessage: ctx.lastMessage, parent: { id, key: parent } };
}

export function parentOf(id: string, ctx: ItemContext): string | null {
  return Object.hasOwn(ctx.parents, id) ? (ctx.parents[id] ?? null) : ctx.lastMessage;
}

function call(id: string, parent: string | null, content: ContentPart[], status: DraftItem['status']): DraftItem {
  return { key: id, native_item_id: id, parent_key: parent, kind: 'tool_call', role: 'assistant', content, status };
}

function message(id: string, role: 'user' | 'assistant', content: ContentPart[], phase: Phase): DraftItem {
  return { key: id, native_item_id: id, kind: 'message', role, content, status: statusOf(phase) };
}

const statusOf = (phase: Phase): DraftItem['status'] => (phase === 'started' ? 'in_progress' : 'completed');

/** A turn input as the user's message part: text, a local image (path) or a remote one (url). */
function userPart(input: { type: string; text?: string | undefined; path?: string | undefined; url?: string | undefined }): ContentPart[] {
  if (input.type === 'text' && input.text !== undefined) return [{ type: 'text', text: input.text }];
  if ((input.type === 'localImage' || input.type === 'image') && (input.path ?? input.url)) return [{ type: 'image', path: (input.path ?? input.url)! }];
  if (input.path !== undefined) return [{ type: 'file_ref', path: input.path, action: 'read' }]; // skill, mention, localAudio
  return [{ type: 'json', json: input }];
}

/**
 * FileAction has no delete: add → write, delete → write (the file is written away; the diff
 * removes every line), update → patch (move_path, when set, is the +++ side of the diff).
 */
function actionOf(c: FileUpdateChange): 'write' | 'patch' {
  return c.kind.type === 'update' ? 'patch' : 'write';
}

const targetPath = (c: FileUpdateChange) => (c.kind.type === 'update' && c.kind.move_path ? c.kind.move_path : c.path);

/** Codex gives the new content for add, the old content for delete, and a unified diff for update. */
function fileRef(c: FileUpdateChange): ContentPart {
  const text = c.diff ?? '';
  let diff: string;
  if (c.kind.type === 'add') diff = `--- /dev/null\n+++ b/${c.path}\n@@ -0,0 +${range(lines(text).length)} @@\n${mark('+', lines(text))}`;
  else if (c.kind.type === 'delete') diff = `--- a/${c.path}\n+++ /dev/null\n@@ -${range(lines(text).length)} +0,0 @@\n${mark('-', lines(text))}`;
  else diff = text.startsWith('--- ') ? text : `--- a/${c.path}\n+++ b/${targetPath(c)}\n${text}`;
  return { type: 'file_ref', path: c.path, action: actionOf(c), diff };
}

function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split('\n');
  return text.endsWith('\n') ? all.slice(0, -1) : all;
}
const mark = (sign: string, ls: string[]) => ls.map((l) => `${sign}${l}\n`).join('');
const range = (count: number) => (count === 1 ? '1' : count === 0 ? '0,0' : `1,${count}`);

/** MCP content blocks: their text joined; other blocks (images, resources) as JSON. */
function mcpText(content: unknown[]): string {
  return content
    .map((b) => {
      const block = b as { type?: unknown; text?: unknown } | null;
      return block?.type === 'text' && typeof block.text === 'string' ? block.text : JSON.stringify(b);
    })
    .join('\n');
}
