// The requests `codex app-server` sends us and how each is answered (v2 schema, 0.171.0): which
// are kept for a client's reply, and the answer to a permission reply, a question's answers or a
// decline (reject, terminate). Pure: the session (session.ts) finds the request and sends the answer.
import type { PermissionReply } from '../../schema/api.js';
import type { RpcServerRequest } from '../json-rpc.js';
import { elicitationContent } from './elicitation.js';
import { userInputAnswers } from './input.js';
import { isObject } from '../../util/is-object.js';

const APPROVALS = new Set(['item/commandExecution/requestApproval', 'item/fileChange/requestApproval']);
const LEGACY_APPROVALS = new Set(['execCommandApproval', 'applyPatchApproval']);
const USER_INPUT = 'item/tool/requestUserInput';
const ELICITATION = 'mcpServer/elicitation/request';
const PERMISSIONS = 'item/permissions/requestApproval';
/** Requests kept for a client reply; any other server request is answered with an error at once. */
const ANSWERABLE = new Set([...APPROVALS, ...LEGACY_APPROVALS, USER_INPUT, ELICITATION, PERMISSIONS]);


/** Kept for the client's reply (approvals, user input, elicitations, permission grants). */
export const isAnswerable = (request: RpcServerRequest): boolean => ANSWERABLE.has(request.method);

/** The "no" answer to a pending server request (reject, or terminate). */
export function declineResult(request: RpcServerRequest): unknown {
  if (APPROVALS.has(request.method)) return { decision: 'decline' };
  if (LEGACY_APPROVALS.has(request.method)) return { decision: 'denied' };
  if (request.method === USER_INPUT) return { answers: {} };
  if (request.method === ELICITATION) return { action: 'decline', content: null };
  return { permissions: {}, scope: 'turn' };
}

/** The answer to a permission reply. */
export function permissionResult(request: RpcServerRequest, reply: PermissionReply): unknown {
  if (reply === 'reject') return declineResult(request);
  if (LEGACY_APPROVALS.has(request.method)) return { decision: reply === 'always' ? 'approved_for_session' : 'approved' };
  if (request.method === ELICITATION) {
    // Codex's MCP tool approval (elicitation.ts): 'always' persists it for the session.
    return { action: 'accept', content: {}, ...(reply === 'always' ? { _meta: { persist: 'session' } } : {}) };
  }
  if (request.method === PERMISSIONS) {
    const params = isObject(request.params) ? request.params : {};
    return { permissions: params.permissions ?? {}, scope: reply === 'always' ? 'session' : 'turn' };
  }
  return { decision: reply === 'always' ? 'acceptForSession' : 'accept' };
}

/** The answer to a question's answers (null: the question was rejected). */
export function questionResult(request: RpcServerRequest, answers: string[][] | null): unknown {
  if (answers === null) return declineResult(request);
  if (request.method === USER_INPUT) return { answers: userInputAnswers(request.params, answers) };
  if (request.method === ELICITATION) {
    const schema = isObject(request.params) ? request.params.requestedSchema : undefined;
    return { action: 'accept', content: elicitationContent(schema, answers) };
  }
  return { decision: 'accept' };
}
