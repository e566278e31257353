// Request and response bodies of the REST API. Field names follow the reference API (camelCase)
// so its clients work unchanged; events inside keep the spec's snake_case.
import { ERROR_CODES } from '../errors.js';
import { AgentId, Capabilities, EXACT_VERSION } from './agents.js';
import { Delivery, ForkedFrom } from './delivery.js';
import { UniversalEvent } from './events.js';
import { Budget, UsageTotals } from './usage.js';
import { Attachment, SessionIdParam } from './session-id.js';
export { Attachment, SessionIdParam, SessionRef } from './session-id.js';
import { orNull, z } from './zod.js';

// Values that end up in an agent's argv or environment: NUL cannot be passed to exec at all.
const ArgText = z.string().min(1).max(4096).regex(/^[^\0]*$/, 'must not contain NUL characters');
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are letters, digits and _');

export const PermissionMode = z.enum(['default', 'plan', 'bypass', 'acceptEdits']).openapi('PermissionMode');

export const CreateSessionRequest = z
  .object({
    agent: AgentId,
    agentMode: ArgText.optional(),
    permissionMode: PermissionMode.optional(),
    model: ArgText.optional(),
    variant: ArgText.optional(),
    agentVersion: ArgText.optional(),
    title: z.string().max(500).optional(),
    cwd: ArgText.optional().openapi({ description: "The agent's working directory; must exist. Default: the daemon's cwd" }),
    env: z.record(EnvName, z.string().max(65_536).regex(/^[^\0]*$/, 'must not contain NUL characters')).optional().openapi({ description: 'Extra environment for the agent process' }),
    mcp: z
      .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'MCP server names are letters, digits, _ and -'), z.record(z.string(), z.unknown()))
      .optional()
      .openapi({ description: 'MCP servers by name, in the agent\'s own config shape ({command, args, env} or {type, url}); passed to the agent for this session' }),
    nativeSessionId: ArgText.optional().openapi({
      description: "Re-open the agent's own earlier session with this id (Claude: --resume), so the conversation continues",
    }),
    permissionPolicy: z
      .enum(['ask', 'allow', 'deny'])
      .optional()
      .openapi({ description: 'Who answers permission requests: the client (ask), or the daemon, allowing or denying. Default --permission-policy' }),
    hitlTimeoutMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: 'Deny a pending permission / reject a pending question after this many ms; 0 waits forever. Default --hitl-timeout-ms' }),
    budget: Budget.optional().openapi({ description: 'Limits on tokens, cost and turns that pause the session and ask when crossed (docs/budgets.md). Default: the daemon\'s --budget-* flags' }),
  })
  .strict()
  .openapi('CreateSessionRequest');
export type CreateSessionRequest = z.infer<typeof CreateSessionRequest>;

export const SessionStatus = z.enum(['idle', 'running', 'waiting', 'ended']).openapi('SessionStatus');
export type SessionStatus = z.infer<typeof SessionStatus>;

export const SessionInfo = z
  .object({
    sessionId: z.string(),
    agent: AgentId,
    agentMode: z.string(),
    permissionMode: PermissionMode,
    model: z.string().optional(),
    variant: z.string().optional(),
    nativeSessionId: z.string().optional(),
    ended: z.boolean(),
    eventCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    title: z.string().optional(),
    cwd: z.string(),
    status: SessionStatus,
    restored: z.boolean().openapi({ description: 'The session was created before the daemon last started and was restored from the store' }),
    permissionPolicy: z.enum(['ask', 'allow', 'deny']),
    hitlTimeoutMs: z.number().int(),
    forkedFrom: ForkedFrom.optional().openapi({ description: 'Set on a fork (POST …/fork): the parent and the last of its events the fork copied' }),
    queued: z.number().int().min(0).openapi({ description: 'Messages waiting in its queue (GET …/queue)' }),
    usage: UsageTotals.openapi({ description: 'What the session has spent so far (the totals of its last usage.updated)' }),
    budget: Budget.openapi({ description: "The budget in force, raised by each approved budget request; {} when it has none" }),
  })
  .openapi('SessionInfo');
export type SessionInfo = z.infer<typeof SessionInfo>;

export const CreateSessionResponse = z
  .object({ healthy: z.literal(true), nativeSessionId: z.string().optional() })
  .openapi('CreateSessionResponse');
export const SessionList = z.object({ sessions: z.array(SessionInfo) }).openapi('SessionList');


export const MessageRequest = z
  .object({
    message: z.string().min(1),
    attachments: z.array(Attachment).max(64).optional(),
    delivery: Delivery.optional(),
  })
  .strict()
  .openapi('MessageRequest');
export type MessageRequest = z.infer<typeof MessageRequest>;

export const PermissionReply = z.enum(['once', 'always', 'reject']);
export type PermissionReply = z.infer<typeof PermissionReply>;
export type PermissionMode = z.infer<typeof PermissionMode>;
export const PermissionReplyRequest = z.object({ reply: PermissionReply }).strict().openapi('PermissionReplyRequest');
export const QuestionReplyRequest = z
  .object({ answers: z.array(z.array(z.string())) })
  .strict()
  .openapi('QuestionReplyRequest', { description: 'One array of chosen answers per question asked' });

// Query strings: both the spec's snake_case and the reference client's camelCase are accepted.
const boolish = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/** A non-negative decimal integer, exactly (no '', '0x10', '1e3' or repeated parameters). */
export const Cursor = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a non-negative integer')
  .transform(Number);

// Strict, as bodies are: a misspelt parameter (`?ofset=`) is an error, not a silent default.
export const EventsQuery = z
  .object({
    offset: Cursor.optional(),
    limit: Cursor.pipe(z.number().min(1).max(10_000)).optional(),
    include_raw: boolish.optional(),
    includeRaw: boolish.optional(),
  })
  .strict();
/** GET …/events/sse. `token` is the browser EventSource's way to authenticate. */
export const SseQuery = z
  .object({
    offset: Cursor.optional(),
    include_raw: boolish.optional(),
    includeRaw: boolish.optional(),
    token: z.string().optional(),
  })
  .strict();
/** POST …/messages/stream: the turn's events start at the message, so no cursor. No `token`:
 *  a POST never comes from an EventSource, and whatever sends it can send the header. */
export const TurnStreamQuery = z
  .object({
    include_raw: boolish.optional(),
    includeRaw: boolish.optional(),
    abort_on_disconnect: boolish.optional(),
    abortOnDisconnect: boolish.optional(),
  })
  .strict();

export const EventsResponse = z
  .object({ events: z.array(UniversalEvent), hasMore: z.boolean() })
  .openapi('EventsResponse');

export const HealthResponse = z
  .object({
    status: z.enum(['ok', 'draining']).openapi({ description: "'draining' (with a 503) while the daemon shuts down" }),
    version: z.string(),
    uptimeMs: z.number().int(),
  })
  .openapi('HealthResponse');

export const AgentIdParam = z.object({ agent: AgentId });

export const AgentSource = z
  .enum(['flag', 'install-dir', 'path'])
  .openapi('AgentSource', { description: 'Where the executable was found: an explicit --<agent>-bin (or an --acp-agent command), the daemon install directory, or PATH' });

export const WarmInfo = z
  .object({
    size: z.number().int().openapi({ description: 'Spares kept ready (--warm <agent>=<n>)' }),
    ready: z.number().int().openapi({ description: 'Spares that a new session can take now' }),
    starting: z.number().int().openapi({ description: 'Spares booting (refills)' }),
  })
  .openapi('WarmInfo');

export const AgentInfo = z
  .object({
    id: AgentId,
    installed: z.boolean(),
    version: z.string().optional().openapi({ description: 'From `<bin> --version` (or the install record)' }),
    path: z.string().optional().openapi({ description: 'The executable the daemon would run' }),
    credentialsAvailable: z
      .boolean()
      .openapi({ description: "An API-key variable is set in the daemon's environment, or the CLI's own credential file exists" }),
    capabilities: orNull(Capabilities).openapi({ description: 'null when this build has no adapter for the agent' }),
    adapterAvailable: z.boolean().openapi({ description: 'This build can run sessions with the agent' }),
    pinnedVersion: z.string().nullable().openapi({ description: 'The CLI version this build is tested against and installs by default' }),
    source: orNull(AgentSource).openapi({ description: 'null when not installed, or for an agent bundled with the daemon (mock)' }),
    warm: WarmInfo.optional().openapi({ description: 'The warm pool of this agent (--warm); all zero without one' }),
  })
  .openapi('AgentInfo');
export type AgentInfo = z.infer<typeof AgentInfo>;

export const AgentList = z.object({ agents: z.array(AgentInfo) }).openapi('AgentList');
export type AgentList = z.infer<typeof AgentList>;

export const InstallAgentRequest = z
  .object({
    reinstall: z.boolean().optional().openapi({ description: 'Install again even if a complete install of that version exists' }),
    version: z
      .string()
      .regex(EXACT_VERSION, 'an exact version (x.y.z, no range or tag)')
      .max(100)
      .optional()
      .openapi({ description: 'Exact version to install; default: the pinned one' }),
  })
  .strict()
  .openapi('InstallAgentRequest');
export type InstallAgentRequest = z.infer<typeof InstallAgentRequest>;

export const ChoiceSource = z
  .enum(['agent', 'builtin'])
  .openapi('ChoiceSource', { description: "'agent': asked the agent CLI itself; 'builtin': the list this build ships (the agent is not installed, could not be asked, or cannot tell)" });

export const ModelInfo = z
  .object({
    id: z.string().openapi({ description: 'The value to pass as `model` at session create' }),
    name: z.string().optional(),
    variants: z.array(z.string()).optional().openapi({ description: 'Values for `variant` (e.g. reasoning effort) with this model' }),
    defaultVariant: z.string().optional(),
  })
  .openapi('ModelInfo');
/** One model (GET /v1/agents/{agent}/models); variants are what the session's `variant` selects. */
export type ModelInfo = z.infer<typeof ModelInfo>;

export const ModelsResponse = z
  .object({
    models: z.array(ModelInfo),
    defaultModel: z.string().optional(),
    source: ChoiceSource,
  })
  .openapi('ModelsResponse');
export type ModelsResponse = z.infer<typeof ModelsResponse>;
/** What an agent says of its models: the response without `source`, which src/agents/offerings.ts adds. */
export type ModelList = Omit<ModelsResponse, 'source'>;

export const ModeInfo = z
  .object({
    id: z.string().openapi({ description: 'The value to pass as `agentMode` at session create' }),
    name: z.string(),
    description: z.string(),
  })
  .openapi('ModeInfo');
/** One agentMode value an agent accepts (GET /v1/agents/{agent}/modes). */
export type ModeInfo = z.infer<typeof ModeInfo>;

export const ModesResponse = z
  .object({
    modes: z.array(ModeInfo),
    defaultMode: z.string().openapi({ description: 'The agentMode a session gets when it names none' }),
    permissionModes: z.array(PermissionMode).openapi({ description: 'The permissionMode values this agent honours; the first is the default' }),
    source: ChoiceSource,
  })
  .openapi('ModesResponse');
export type ModesResponse = z.infer<typeof ModesResponse>;

export const Problem = z
  .object({
    type: z.string().openapi({ example: 'https://agentwire.dev/problems/session_not_found' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    // The catalogue is the one list (errors.ts): a new entry there is a new value here.
    code: z.enum(ERROR_CODES).openapi({ description: 'Stable; the catalogue is in docs/http-api.md' }),
  })
  .catchall(z.unknown())
  .openapi('Problem', { description: 'RFC 9457 problem details; context fields such as sessionId may follow' });

/** The body of a route that takes none: absent, or `{}` (some clients always send a JSON body). */
export const EmptyBody = z
  .object({})
  .strict()
  .openapi('EmptyBody', { description: 'Nothing: this route takes no body, but an empty object is accepted (some clients always send one)' });
