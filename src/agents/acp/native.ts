// The Agent Client Protocol's messages as an agent writes them on stdout (JSON-RPC 2.0, one object
// per line; protocol version 1, the schema of @agentclientprotocol/sdk 2.x). LOOSE on purpose:
// objects keep the fields they do not list (z.looseObject) and only what the converter or the
// driver reads is required, so a newer agent's additions never make a message unreadable.
import { z } from 'zod';

export const Id = z.union([z.string(), z.number()]);
const Opt = z.string().nullable().optional();
const Meta = z.record(z.string(), z.unknown()).nullable().optional();

// ---- envelopes ---------------------------------------------------------------------------------

/** A request from the agent: it waits for our answer (permissions; fs/terminal we refuse). */
export const AgentRequest = z.looseObject({ id: Id, method: z.string(), params: z.unknown().optional() });
export const AgentNotification = z.looseObject({ method: z.string(), params: z.unknown().optional() });
export const Response = z.looseObject({
  id: Id,
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional(), data: z.unknown().optional() }).optional(),
});

// ---- content -----------------------------------------------------------------------------------

/** ContentBlock: text, image, audio, resource_link, resource. Only `type` is required here; the
 *  converter reads the fields of the kinds it knows and keeps any other kind as json. */
export const ContentBlock = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  data: z.string().optional(),
  mimeType: Opt,
  uri: Opt,
  name: Opt,
  resource: z.looseObject({ uri: z.string(), text: z.string().optional(), mimeType: Opt }).optional(),
});
export type ContentBlock = z.infer<typeof ContentBlock>;

/** ToolCallContent: `content` (a ContentBlock), `diff` (path, oldText, newText), `terminal`. */
export const ToolCallContent = z.looseObject({
  type: z.string(),
  content: ContentBlock.optional(),
  path: z.string().optional(),
  oldText: Opt,
  newText: z.string().optional(),
  terminalId: z.string().optional(),
});
export type ToolCallContent = z.infer<typeof ToolCallContent>;

export const ToolCallLocation = z.looseObject({ path: z.string(), line: z.number().nullable().optional() });
export type ToolCallLocation = z.infer<typeof ToolCallLocation>;

/** tool_call and tool_call_update share one shape: an update carries only what changed. */
export const ToolCallFields = z.looseObject({
  toolCallId: z.string(),
  title: Opt,
  name: Opt,
  kind: Opt,
  status: Opt,
  content: z.array(ToolCallContent).nullable().optional(),
  locations: z.array(ToolCallLocation).nullable().optional(),
  rawInput: z.unknown().optional(),
  rawOutput: z.unknown().optional(),
  _meta: Meta,
});
export type ToolCallFields = z.infer<typeof ToolCallFields>;

// ---- session/update ----------------------------------------------------------------------------

export const SessionNotification = z.looseObject({
  sessionId: z.string(),
  update: z.looseObject({ sessionUpdate: z.string() }),
});

export const ContentChunk = z.looseObject({ content: ContentBlock, messageId: Opt });
export const PlanEntry = z.looseObject({ content: z.string(), priority: z.string().optional(), status: z.string().optional() });
export const Plan = z.looseObject({ entries: z.array(PlanEntry) });
export const AvailableCommand = z.looseObject({ name: z.string(), description: z.string().optional() });
export const AvailableCommandsUpdate = z.looseObject({ availableCommands: z.array(AvailableCommand) });
export const CurrentModeUpdate = z.looseObject({ currentModeId: z.string() });

// ---- requests from the agent -------------------------------------------------------------------

export const PermissionOption = z.looseObject({ optionId: z.string(), name: z.string(), kind: z.string() });
export type PermissionOption = z.infer<typeof PermissionOption>;
export const RequestPermission = z.looseObject({
  sessionId: z.string(),
  toolCall: ToolCallFields,
  options: z.array(PermissionOption),
});
/** `$/cancel_request`: the agent withdraws a request it sent (e.g. a permission after session/cancel). */
export const CancelRequest = z.looseObject({ requestId: Id });

// ---- answers to our requests -------------------------------------------------------------------

export const SessionMode = z.looseObject({ id: z.string(), name: z.string(), description: Opt });
export const ModeState = z.looseObject({ currentModeId: z.string(), availableModes: z.array(SessionMode) });
/** Unstable in protocol 1 (`session/set_model`); agents of the 0.x SDK offer models this way. */
export const ModelState = z.looseObject({
  currentModelId: z.string(),
  availableModels: z.array(z.looseObject({ modelId: z.string(), name: z.string().optional(), description: Opt })),
});
export const ConfigSelectOption = z.looseObject({ value: z.string(), name: z.string().optional(), description: Opt });
/** A session config option; `select` options list values flat or in groups. */
export const ConfigOption = z.looseObject({
  id: z.string(),
  name: z.string(),
  type: z.string().optional(),
  category: Opt,
  currentValue: z.unknown().optional(),
  options: z.array(z.looseObject({ value: z.string().optional(), options: z.array(ConfigSelectOption).optional() })).optional(),
});
export type ConfigOption = z.infer<typeof ConfigOption>;

export const SessionSetup = z.looseObject({
  modes: ModeState.nullable().optional(),
  models: ModelState.nullable().optional(),
  configOptions: z.array(ConfigOption).nullable().optional(),
});
export const NewSessionResult = SessionSetup.extend({ sessionId: z.string() });
export type SessionSetup = z.infer<typeof SessionSetup>;

export const PromptResult = z.looseObject({ stopReason: z.string(), usage: z.unknown().optional() });

export const InitializeResult = z.looseObject({
  protocolVersion: z.number(),
  agentCapabilities: z
    .looseObject({
      loadSession: z.boolean().optional(),
      promptCapabilities: z.looseObject({ image: z.boolean().optional(), audio: z.boolean().optional(), embeddedContext: z.boolean().optional() }).optional(),
      mcpCapabilities: z.looseObject({ http: z.boolean().optional(), sse: z.boolean().optional() }).optional(),
      sessionCapabilities: z.looseObject({ resume: z.unknown().optional(), fork: z.unknown().optional() }).nullable().optional(),
    })
    .optional(),
  agentInfo: z.looseObject({ name: z.string(), version: z.string().optional(), title: Opt }).nullable().optional(),
  authMethods: z.array(z.unknown()).optional(),
});
export type InitializeResult = z.infer<typeof InitializeResult>;
