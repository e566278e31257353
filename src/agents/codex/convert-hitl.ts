// Codex's server requests (JSON-RPC requests app-server sends us and waits on) → permission and
// question drafts. The permission/question id is the JSON-RPC request id as a string, so the driver
// answers `{id, result}` with that id. Resolutions are the daemon's (caps.nativeHitlResolution is
// false): `serverRequest/resolved` only confirms our own answer and is dropped in convert.ts.
import type { Draft } from '../types.js';
import { elicitationFields, elicitationPrompt, isToolApproval, McpElicitation } from './elicitation.js';
import {
  ApplyPatchApproval,
  CommandApproval,
  ExecCommandApproval,
  FileChangeApproval,
  PermissionsApproval,
  RequestUserInput,
  type FileUpdateChange,
} from './native.js';

/** The draft for a server request; undefined when its params do not parse (→ agent.unparsed). */
export function serverRequest(
  id: string,
  method: string,
  params: unknown,
  changes: Readonly<Record<string, readonly FileUpdateChange[]>>,
): Draft | undefined {
  switch (method) {
    case 'item/commandExecution/requestApproval': {
      const p = CommandApproval.safeParse(params);
      if (!p.success) return undefined;
      const { itemId, command, cwd, reason, commandActions, availableDecisions, proposedExecpolicyAmendment, networkApprovalContext } = p.data;
      return permission(id, 'command_execution', {
        command, cwd, reason, itemId, commandActions, availableDecisions, proposedExecpolicyAmendment, networkApprovalContext,
      });
    }
    case 'item/fileChange/requestApproval': {
      // The request names only the item: its changes come from the fileChange item/started before it.
      const p = FileChangeApproval.safeParse(params);
      if (!p.success) return undefined;
      const { itemId, reason, grantRoot } = p.data;
      const known = changes[itemId]?.map((c) => ({ path: c.path, kind: c.kind.type, diff: c.diff }));
      return permission(id, 'file_change', { itemId, reason, grantRoot, changes: known });
    }
    case 'item/permissions/requestApproval': {
      // Extra sandbox permissions (file system / network) for the rest of the turn or session.
      const p = PermissionsApproval.safeParse(params);
      if (!p.success) return undefined;
      const { itemId, cwd, reason, permissions } = p.data;
      return permission(id, 'permissions', { itemId, cwd, reason, permissions });
    }
    case 'execCommandApproval': {
      // Legacy v1 (not sent on the v2 thread API; 0.171.0 still defines it).
      const p = ExecCommandApproval.safeParse(params);
      if (!p.success) return undefined;
      const { callId, command, cwd, reason } = p.data;
      return permission(id, 'command_execution', { command: command.join(' '), argv: command, cwd, reason, itemId: callId });
    }
    case 'applyPatchApproval': {
      const p = ApplyPatchApproval.safeParse(params);
      if (!p.success) return undefined;
      const { callId, fileChanges, reason, grantRoot } = p.data;
      return permission(id, 'file_change', { itemId: callId, reason, grantRoot, changes: fileChanges });
    }
  }
  return questionOrUnsupported(id, method, params);
}

/** MCP elicitations (a tool approval is a permission, a form a question), user input questions,
 *  and any other request (an error draft); undefined when its params do not parse. */
function questionOrUnsupported(id: string, method: string, params: unknown): Draft | undefined {
  if (method === 'mcpServer/elicitation/request') {
    // Codex approving an MCP tool call is a permission; the server's own form is a question.
    const p = McpElicitation.safeParse(params);
    if (!p.success) return undefined;
    const e = p.data;
    if (isToolApproval(e)) {
      return permission(id, 'mcp_tool_call', { server: e.serverName, tool: e._meta?.tool_name, arguments: e._meta?.tool_params, reason: e.message });
    }
    const options = elicitationFields(e.requestedSchema)[0]?.options ?? [];
    return { type: 'question.requested', data: { question_id: id, prompt: elicitationPrompt(e), options, status: 'requested' } };
  }
  if (method.endsWith('requestUserInput')) {
    const p = RequestUserInput.safeParse(params);
    if (!p.success || p.data.questions.length === 0) return undefined;
    // Several questions become ONE question (as for Claude): the prompt lists them one a line, the
    // options are the first question's; the answers (string[][]) map back question by question.
    const questions = p.data.questions;
    return {
      type: 'question.requested',
      data: {
        question_id: id,
        prompt: questions.map((q) => q.question).join('\n'),
        options: (questions[0]!.options ?? []).map((o) => o.label),
        status: 'requested',
      },
    };
  }
  // item/tool/call, account/chatgptAuthTokens/refresh,
  // attestation/generate …: nothing a client can answer through the permission/question API. The
  // request is made visible; the driver is expected to answer it with a JSON-RPC error.
  return {
    type: 'error',
    data: { message: `unsupported Codex server request ${method}`, code: 'codex_unsupported_request', details: { method, request_id: id } },
  };
}

function permission(id: string, action: string, metadata: Record<string, unknown>): Draft {
  const defined = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== undefined));
  return { type: 'permission.requested', data: { permission_id: id, action, status: 'requested', metadata: defined } };
}
