// session/request_permission both ways: the request as a permission.requested draft (the
// permission id is the JSON-RPC request id as text, so the driver answers that request), and a
// client's reply (once / always / reject) as the option to select among those the agent offered.
import type { PermissionReply } from '../../schema/api.js';
import type { Draft } from '../types.js';
import { unifiedDiff } from './diff.js';
import type { PermissionOption, ToolCallFields } from './native.js';
import { defined } from './state.js';

/** The universal action for an ACP tool kind (the names other agents' permissions use). */
const ACTIONS: Readonly<Record<string, string>> = {
  execute: 'command_execution',
  edit: 'file_change',
  delete: 'file_change',
  move: 'file_change',
  fetch: 'web_fetch',
};

export function permissionRequested(id: string, toolCall: ToolCallFields, options: readonly PermissionOption[]): { draft: Draft; action: string; metadata: Record<string, unknown> } {
  const action = ACTIONS[toolCall.kind ?? ''] ?? 'tool_call';
  const changes = (toolCall.content ?? [])
    .filter((c) => c.type === 'diff' && typeof c.path === 'string' && typeof c.newText === 'string')
    .map((c) => ({ path: c.path, diff: unifiedDiff(c.path!, c.oldText, c.newText!) }));
  const metadata = defined({
    toolCallId: toolCall.toolCallId,
    title: toolCall.title,
    kind: toolCall.kind,
    rawInput: toolCall.rawInput,
    locations: toolCall.locations?.map((l) => l.path),
    changes: changes.length > 0 ? changes : undefined,
    options: options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
  });
  return { draft: { type: 'permission.requested', data: { permission_id: id, action, status: 'requested', metadata } }, action, metadata };
}

/** Option kinds in order of preference for each reply: the exact kind first, then the nearest. */
const PREFERENCE: Readonly<Record<PermissionReply, readonly string[]>> = {
  once: ['allow_once', 'allow_always'],
  always: ['allow_always', 'allow_once'],
  reject: ['reject_once', 'reject_always'],
};

/**
 * The RequestPermissionResponse for a reply: the offered option of the preferred kind. A reject the
 * agent offers no option for is answered `cancelled` (the agent then does not run the tool); an
 * allow it offers no option for is undefined (the caller says the agent cannot be told yes).
 */
export function permissionOutcome(reply: PermissionReply, options: readonly PermissionOption[]): Record<string, unknown> | undefined {
  for (const kind of PREFERENCE[reply]) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: 'selected', optionId: option.optionId } };
  }
  return reply === 'reject' ? CANCELLED : undefined;
}

export const CANCELLED = { outcome: { outcome: 'cancelled' } } as const;
