// Pure helpers of the Claude converter: content blocks → universal parts and tool items, the
// file_ref diffs of the file-editing tools, and the agent.unparsed draft. No state, no I/O.
import type { ContentPart } from '../../schema/events.js';
import { summariseIssues, unparsedDraft } from '../unparsed.js';
import type { Draft, DraftItem } from '../types.js';
import { AssistantBlock, ImageBlock, ToolResultBlock, type ToolUseBlock } from './native.js';

export const LOCATION = 'claude.convert';

/** What the converter remembers of a tool call until its result: enough to parent and describe it. */
export interface ToolRef {
  /** The API message id (the message item's key) whose response held the tool_use. */
  parent: string;
  name: string;
  /** The file the tool works on (file_path / notebook_path), as the model wrote it. */
  path?: string;
  /** The sub-agent that called it (its key: the Agent call's tool_use id), for its permission request. */
  subagent?: string;
}

/** Tools that change files, with the file_ref action their call stands for. */
const FILE_TOOLS: Record<string, 'write' | 'patch'> = { Write: 'write', Edit: 'patch', MultiEdit: 'patch', NotebookEdit: 'patch' };

/** A non-tool block as a message part; `undefined` for tool_use (it becomes its own item). */
export function messagePart(block: { type: string }): ContentPart | undefined {
  const parsed = AssistantBlock.safeParse(block);
  if (!parsed.success) return { type: 'json', json: block }; // e.g. server_tool_use: kept, not lost
  const b = parsed.data;
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'thinking':
      return { type: 'reasoning', text: b.thinking, visibility: 'public' };
    case 'redacted_thinking':
      // The model's reasoning is encrypted in `data`; there is nothing to show but that it happened.
      return { type: 'reasoning', text: '', visibility: 'private' };
    case 'tool_use':
      return undefined;
  }
}

export function toolUse(block: { type: string }): ToolUseBlock | undefined {
  const parsed = AssistantBlock.safeParse(block);
  return parsed.success && parsed.data.type === 'tool_use' ? parsed.data : undefined;
}

export function toolRef(parent: string, block: ToolUseBlock): ToolRef {
  const path = filePath(block.input);
  return { parent, name: block.name, ...(path !== undefined ? { path } : {}) };
}

/** The separate tool_call item of a tool_use block, parented to its message. */
export function toolCallItem(parent: string, block: ToolUseBlock): DraftItem {
  const content: ContentPart[] = [
    { type: 'tool_call', name: block.name, arguments: JSON.stringify(block.input), call_id: block.id },
  ];
  const action = FILE_TOOLS[block.name];
  const path = filePath(block.input);
  if (action && path !== undefined) {
    const diff = diffOf(block.name, path, block.input);
    content.push({ type: 'file_ref', path, action, ...(diff !== undefined ? { diff } : {}) });
  }
  const mcp = /^mcp__(.+?)__(.+)$/.exec(block.name);
  if (mcp) content.push({ type: 'json', json: { mcp_server: mcp[1], tool: mcp[2] } });
  return { key: block.id, native_item_id: block.id, parent_key: parent, kind: 'tool_call', role: 'assistant', content, status: 'completed' };
}

/** The tool_result item of one tool_result block of a `user` line. */
export function toolResultItem(block: { type: string }, ref: ToolRef | undefined): DraftItem | undefined {
  const parsed = ToolResultBlock.safeParse(block);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  const texts: string[] = [];
  const extra: ContentPart[] = [];
  if (typeof r.content === 'string') texts.push(r.content);
  for (const part of Array.isArray(r.content) ? r.content : []) {
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    const image = ImageBlock.safeParse(part);
    if (image.success) extra.push(imagePart(image.data, ref));
  }
  const failed = r.is_error === true;
  const action = ref ? FILE_TOOLS[ref.name] : undefined;
  if (!failed && action && ref?.path !== undefined) extra.push({ type: 'file_ref', path: ref.path, action });
  return {
    key: `result:${r.tool_use_id}`,
    native_item_id: null, // the result has no id of its own; its call_id names the call
    parent_key: ref?.parent ?? null,
    kind: 'tool_result',
    role: 'tool',
    content: [{ type: 'tool_result', call_id: r.tool_use_id, output: texts.join('\n') }, ...extra],
    status: failed ? 'failed' : 'completed',
  };
}

/** Images carry no path: the file the tool read when there is one, else the image as a data URL. */
function imagePart(image: ImageBlock, ref: ToolRef | undefined): ContentPart {
  const mime = image.source.media_type;
  const path =
    ref?.path ??
    image.source.url ??
    (image.source.data !== undefined ? `data:${mime ?? 'application/octet-stream'};base64,${image.source.data}` : 'image');
  return { type: 'image', path, ...(mime !== undefined ? { mime } : {}) };
}

function filePath(input: Record<string, unknown>): string | undefined {
  const path = input.file_path ?? input.notebook_path;
  return typeof path === 'string' ? path : undefined;
}

/** A minimal unified diff: Write as a new file; edits as hunks without line numbers (unknown here). */
function diffOf(tool: string, path: string, input: Record<string, unknown>): string | undefined {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (tool === 'Write') {
    const added = lines(str(input.content) ?? '');
    return `--- /dev/null\n+++ b/${path}\n@@ -0,0 +${range(1, added.length)} @@\n${mark('+', added)}`;
  }
  const edits: { old: string; new: string }[] = [];
  if (tool === 'Edit') edits.push({ old: str(input.old_string) ?? '', new: str(input.new_string) ?? '' });
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
    for (const e of input.edits as Record<string, unknown>[]) edits.push({ old: str(e?.old_string) ?? '', new: str(e?.new_string) ?? '' });
  }
  if (tool === 'NotebookEdit') edits.push({ old: '', new: str(input.new_source) ?? '' });
  if (edits.length === 0) return undefined;
  const hunks = edits.map((e) => `@@ @@\n${mark('-', lines(e.old))}${mark('+', lines(e.new))}`);
  return `--- a/${path}\n+++ b/${path}\n${hunks.join('')}`;
}

function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split('\n');
  return text.endsWith('\n') ? all.slice(0, -1) : all;
}

const mark = (sign: string, ls: string[]) => ls.map((l) => `${sign}${l}\n`).join('');
const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count === 0 ? 0 : start},${count}`);

export const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);
export { summariseIssues as summarise };
