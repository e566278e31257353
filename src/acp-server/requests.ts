// ACP requests as the daemon's own: initialize's answer from the agent's capabilities,
// session/new as a CreateSessionRequest (cwd, MCP servers, and any create field in
// `_meta.agentwire`), session/prompt's content blocks as a MessageRequest, and turn.ended as
// session/prompt's stop reason. Pure.
import type { AgentDriver } from '../agents/types.js';
import { CreateSessionRequest, type MessageRequest, type SessionInfo } from '../schema/api.js';
import type { TurnEndedData } from '../schema/events.js';
import { VERSION } from '../version.js';
import { isObject } from '../util/is-object.js';
import { INTERNAL_ERROR, INVALID_PARAMS, RpcError } from './json-rpc.js';

/** The protocol version this server speaks: ACP 1, what the current SDKs negotiate. */
export const ACP_PROTOCOL_VERSION = 1;

export function initializeResult(driver: AgentDriver): Record<string, unknown> {
  const caps = driver.capabilities;
  return {
    protocolVersion: ACP_PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      // Images reach an agent as files (attachments): a block naming a local file:// uri.
      promptCapabilities: { image: caps.images, audio: false, embeddedContext: true },
      mcpCapabilities: { http: caps.mcpTools, sse: false },
      // close and resume are stable in ACP 1 (the SDK's schema); agentwire ends ACP-made sessions
      // on close and when their client goes away for good (lifetime.ts).
      sessionCapabilities: { list: {}, close: {}, resume: {} },
    },
    authMethods: [],
    agentInfo: { name: 'agentwire', title: `agentwire (${driver.id})`, version: VERSION },
    _meta: { agentwire: { agent: driver.id, capabilities: caps } },
  };
}

/** `_meta.agentwire` of a request, if it is an object. */
export function agentwireMeta(params: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(params._meta) ? params._meta.agentwire : undefined;
  return isObject(meta) ? meta : {};
}

/** session/new → the create request; `_meta.agentwire` may set any of its fields (agent, model …). */
export function createRequest(params: Record<string, unknown>, defaultAgent: string): CreateSessionRequest {
  // after_sequence and keep are the ACP server's own (resume, lifetime), not create fields.
  const { after_sequence: _after, keep: _keep, ...fields } = agentwireMeta(params);
  const mcp = mcpServers(params.mcpServers);
  const body = {
    agent: defaultAgent,
    ...(typeof params.cwd === 'string' ? { cwd: params.cwd } : {}),
    ...(Object.keys(mcp).length > 0 ? { mcp } : {}),
    ...fields,
  };
  const parsed = CreateSessionRequest.safeParse(body);
  if (!parsed.success) throw new RpcError(INVALID_PARAMS, `session/new: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** ACP's MCP servers (a list; env and headers as name/value lists) in the create request's shape. */
function mcpServers(list: unknown): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  if (!Array.isArray(list)) return out;
  for (const s of list) {
    if (!isObject(s) || typeof s.name !== 'string') throw new RpcError(INVALID_PARAMS, 'session/new: an MCP server needs a name');
    const pairs = (v: unknown) => Object.fromEntries((Array.isArray(v) ? v : []).filter(isObject).map((p) => [String(p.name), String(p.value)]));
    const name = s.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'mcp';
    out[name] =
      typeof s.url === 'string'
        ? { type: typeof s.type === 'string' ? s.type : 'http', url: s.url, headers: pairs(s.headers) }
        : { command: s.command, args: Array.isArray(s.args) ? s.args : [], env: pairs(s.env) };
  }
  return out;
}

/**
 * session/prompt's blocks as one message: text as it is, an embedded text resource as a fenced
 * block naming its uri, a resource link as its uri, an image given as a local file:// uri as an
 * attachment. Inline image or audio data has nowhere to go (an agent reads attachments from
 * files), so it is refused rather than dropped.
 */
export function messageRequest(prompt: unknown): MessageRequest {
  if (!Array.isArray(prompt) || prompt.length === 0) throw new RpcError(INVALID_PARAMS, 'session/prompt: prompt must be a non-empty list of content blocks');
  const texts: string[] = [];
  const attachments: { path: string; mime?: string }[] = [];
  for (const block of prompt) {
    if (!isObject(block)) throw new RpcError(INVALID_PARAMS, 'session/prompt: a content block must be an object');
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'resource_link' && typeof block.uri === 'string') texts.push(block.uri);
    else if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.text === 'string') {
      texts.push(`${String(block.resource.uri ?? '')}\n\`\`\`\n${block.resource.text}\n\`\`\``);
    } else if (block.type === 'image' && typeof block.uri === 'string' && block.uri.startsWith('file://')) {
      attachments.push({ path: decodeURIComponent(block.uri.slice('file://'.length)), ...(typeof block.mimeType === 'string' ? { mime: block.mimeType } : {}) });
    } else {
      throw new RpcError(INVALID_PARAMS, `session/prompt: a '${String(block.type)}' block this server cannot pass on (images must name a local file:// uri; inline data and audio are not taken)`);
    }
  }
  const message = texts.join('\n\n');
  if (message.trim() === '') throw new RpcError(INVALID_PARAMS, 'session/prompt: the prompt has no text');
  return { message, ...(attachments.length > 0 ? { attachments } : {}) };
}

const STOP_REASONS = new Set(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled']);

/** What session/prompt answers: a result with its stop reason, or the error of a failed turn. */
export type PromptOutcome = { result: Record<string, unknown> } | { error: RpcError };

/**
 * turn.ended → session/prompt's answer. An ACP agent's own stop reason (kept by the ACP driver as
 * `stop_reason`: refusal, max_tokens …) is passed back; `interrupted` is `cancelled` and
 * `completed` `end_turn`. A turn that failed (error, agent_exited, terminated, budget_exceeded)
 * has no stop reason in ACP: it is a JSON-RPC error (-32603) naming the universal reason, the
 * error the agent reported (`error`, from the turn's `error` event) and the sequence, so a client
 * never reports a crash as done (docs/acp-server.md, "Errors").
 */
export function promptOutcome(data: TurnEndedData, sequence: number, error?: string): PromptOutcome {
  const { reason, usage, stop_reason } = data.metadata;
  const agentwire = { sequence, reason, ...(usage ? { usage } : {}), metadata: data.metadata };
  const own = typeof stop_reason === 'string' && STOP_REASONS.has(stop_reason) ? stop_reason : undefined;
  if (own) return { result: { stopReason: own, _meta: { agentwire } } };
  if (reason === 'interrupted') return { result: { stopReason: 'cancelled', _meta: { agentwire } } };
  if (reason === 'completed') return { result: { stopReason: 'end_turn', _meta: { agentwire } } };
  const what = FAILURES[reason] ?? `ended (${reason})`;
  return { error: new RpcError(INTERNAL_ERROR, `The turn ${what}${error ? `: ${error}` : ''}`, { agentwire: { ...agentwire, ...(error ? { error } : {}) } }) };
}

const FAILURES: Readonly<Record<string, string>> = {
  error: 'failed',
  agent_exited: 'ended because the agent exited',
  terminated: 'ended because the session was terminated',
  budget_exceeded: "was stopped by the session's budget",
};

/** agentwire's sessions as session/list entries. */
export function listEntry(info: SessionInfo): Record<string, unknown> {
  return {
    sessionId: info.sessionId,
    cwd: info.cwd,
    title: info.title ?? null,
    updatedAt: info.updatedAt,
    _meta: { agentwire: { agent: info.agent, status: info.status, ended: info.ended, eventCount: info.eventCount, createdAt: info.createdAt } },
  };
}

/** The session's mode state (its agentMode is fixed at creation). */
export function modeState(driver: AgentDriver, current: string): Record<string, unknown> {
  const modes = driver.modes.some((m) => m.id === current) ? driver.modes : [...driver.modes, { id: current, name: current, description: '' }];
  return { currentModeId: current, availableModes: modes.map((m) => ({ id: m.id, name: m.name, description: m.description })) };
}
