// Pure helpers of the Amp converter for tools: a tool_use block → its tool_call item (with a
// file_ref part for the file-changing tools), a tool_result block → its tool_result item (Bash's
// `{"output","exitCode"}` unpacked). No state, no I/O.
import type { ContentPart } from '../../schema/events.js';
import type { DraftItem } from '../types.js';
import type { ToolUseBlock } from './native.js';

/** What the converter keeps of a tool call until its result. */
export interface ToolRef {
  parent: string | null;
  name: string;
  path?: string;
}

/** Amp's file-changing tools and the file_ref action each stands for. */
const FILE_TOOLS: Record<string, 'write' | 'patch'> = { create_file: 'write', edit_file: 'patch', apply_patch: 'patch', undo_edit: 'patch' };

export function toolRef(parent: string | null, block: ToolUseBlock): ToolRef {
  const path = typeof block.input.path === 'string' ? block.input.path : undefined;
  return { parent, name: block.name, ...(path !== undefined ? { path } : {}) };
}

export function toolCallItem(parent: string | null, block: ToolUseBlock): DraftItem {
  const content: ContentPart[] = [{ type: 'tool_call', name: block.name, arguments: JSON.stringify(block.input), call_id: block.id }];
  const ref = fileRef(block.name, block.input);
  if (ref) content.push(ref);
  const mcp = /^mcp__(.+?)__(.+)$/.exec(block.name);
  if (mcp) content.push({ type: 'json', json: { mcp_server: mcp[1], tool: mcp[2] } });
  return { key: block.id, native_item_id: block.id, parent_key: parent, kind: 'tool_call', role: 'assistant', content, status: 'completed' };
}

export function toolResultItem(id: string, output: string, isError: boolean, ref: ToolRef | undefined): DraftItem {
  const content: ContentPart[] = [];
  const bash = ref?.name === 'Bash' ? bashResult(output) : undefined;
  content.push({ type: 'tool_result', call_id: id, output: bash ? bash.output : output });
  if (bash) content.push({ type: 'json', json: { exit_code: bash.exitCode } });
  const action = ref ? FILE_TOOLS[ref.name] : undefined;
  if (!isError && action && ref?.path !== undefined) content.push({ type: 'file_ref', path: ref.path, action });
  return {
    key: `result:${id}`,
    native_item_id: null, // a result has no id of its own; call_id names the call
    parent_key: ref?.parent ?? null,
    kind: 'tool_result',
    role: 'tool',
    content,
    status: isError ? 'failed' : 'completed',
  };
}

/** Bash's result is `{"output": "...", "exitCode": N}` as a JSON string. */
function bashResult(text: string): { output: string; exitCode: number } | undefined {
  try {
    const parsed = JSON.parse(text) as { output?: unknown; exitCode?: unknown };
    if (typeof parsed.output === 'string' && typeof parsed.exitCode === 'number') return { output: parsed.output, exitCode: parsed.exitCode };
  } catch {
    // not JSON: the text is the output
  }
  return undefined;
}

function fileRef(tool: string, input: Record<string, unknown>): ContentPart | undefined {
  const action = FILE_TOOLS[tool];
  const path = typeof input.path === 'string' ? input.path : undefined;
  if (!action || path === undefined) return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  let diff: string | undefined;
  if (tool === 'create_file') {
    const added = lines(str(input.content) ?? '');
    diff = `--- /dev/null\n+++ b/${path}\n@@ -0,0 +${added.length === 1 ? '1' : `${added.length === 0 ? 0 : 1},${added.length}`} @@\n${mark('+', added)}`;
  } else if (tool === 'edit_file' && (input.old_str !== undefined || input.new_str !== undefined)) {
    diff = `--- a/${path}\n+++ b/${path}\n@@ @@\n${mark('-', lines(str(input.old_str) ?? ''))}${mark('+', lines(str(input.new_str) ?? ''))}`;
  } else if (tool === 'apply_patch') diff = str(input.patch) ?? str(input.diff);
  return { type: 'file_ref', path, action, ...(diff !== undefined ? { diff } : {}) };
}

function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split('\n');
  return text.endsWith('\n') ? all.slice(0, -1) : all;
}

const mark = (sign: string, ls: string[]) => ls.map((l) => `${sign}${l}\n`).join('');
