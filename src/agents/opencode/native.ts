// The shapes of the OpenCode server's events (GET /event) that the converter reads, after the
// pinned server's own OpenAPI document (GET /doc, 1.18.33). Loose (passthrough) where OpenCode adds
// fields freely; only what the converter depends on is required.
import { z } from 'zod';

/** Every SSE frame's data: `{id: "evt_…", type, properties}`. */
export const Envelope = z.object({ id: z.string().optional(), type: z.string(), properties: z.record(z.string(), z.unknown()).default({}) }).passthrough();

export const SessionInfo = z.object({ id: z.string(), directory: z.string().optional(), version: z.string().optional(), title: z.string().optional() }).passthrough();
export const SessionCreated = z.object({ sessionID: z.string().optional(), info: SessionInfo }).passthrough();

export const MessageInfo = z
  .object({
    id: z.string(),
    role: z.enum(['user', 'assistant']),
    sessionID: z.string(),
    finish: z.string().optional(),
    error: z.object({ name: z.string(), data: z.record(z.string(), z.unknown()).optional() }).passthrough().optional(),
    time: z.object({ created: z.unknown(), completed: z.unknown().optional() }).passthrough().optional(),
    modelID: z.string().optional(),
    providerID: z.string().optional(),
    tokens: z.unknown().optional(),
  })
  .passthrough();
export type MessageInfo = z.infer<typeof MessageInfo>;
export const MessageUpdated = z.object({ info: MessageInfo }).passthrough();

const PartBase = z.object({ id: z.string(), messageID: z.string(), sessionID: z.string() }).passthrough();
export const TextPart = PartBase.extend({ type: z.enum(['text', 'reasoning']), text: z.string(), time: z.object({ end: z.unknown().optional() }).passthrough().optional() });
export const ToolState = z
  .object({
    status: z.enum(['pending', 'running', 'completed', 'error']),
    input: z.record(z.string(), z.unknown()).default({}),
    output: z.string().optional(),
    error: z.string().optional(),
    title: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** ToolStateCompleted.attachments: FilePart-shaped files the tool produced (read of an image). */
    attachments: z.array(z.object({ mime: z.string(), url: z.string(), filename: z.string().optional(), source: z.object({ path: z.string().optional() }).passthrough().optional() }).passthrough()).optional(),
  })
  .passthrough();
export type ToolState = z.infer<typeof ToolState>;
export const ToolPart = PartBase.extend({ type: z.literal('tool'), tool: z.string(), callID: z.string(), state: ToolState });
export type ToolPart = z.infer<typeof ToolPart>;
export const FilePart = PartBase.extend({
  type: z.literal('file'),
  mime: z.string(),
  url: z.string(),
  filename: z.string().optional(),
  source: z.object({ path: z.string().optional() }).passthrough().optional(),
});
export const PatchPart = PartBase.extend({ type: z.literal('patch'), files: z.array(z.string()) });
export const OtherPart = PartBase.extend({ type: z.string() });
export const PartUpdated = z.object({ part: OtherPart }).passthrough();
export const PartDelta = z.object({ messageID: z.string(), partID: z.string(), field: z.string(), delta: z.string() }).passthrough();

export const SessionStatus = z.object({
  sessionID: z.string(),
  status: z.discriminatedUnion('type', [
    z.object({ type: z.literal('idle') }).passthrough(),
    z.object({ type: z.literal('busy') }).passthrough(),
    z.object({ type: z.literal('retry'), attempt: z.number(), message: z.string(), next: z.unknown().optional() }).passthrough(),
  ]),
});
export const SessionError = z
  .object({ sessionID: z.string().optional(), error: z.object({ name: z.string(), data: z.record(z.string(), z.unknown()).optional() }).passthrough().optional() })
  .passthrough();

export const PermissionAsked = z
  .object({
    id: z.string(),
    sessionID: z.string(),
    permission: z.string(),
    patterns: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()).default({}),
    always: z.array(z.string()).default([]),
    tool: z.object({ messageID: z.string(), callID: z.string() }).optional(),
  })
  .passthrough();
export const PermissionReplied = z.object({ sessionID: z.string(), requestID: z.string(), reply: z.enum(['once', 'always', 'reject']) }).passthrough();

const QuestionInfo = z.object({ question: z.string(), header: z.string().optional(), options: z.array(z.object({ label: z.string() }).passthrough()), multiple: z.boolean().optional() }).passthrough();
export const QuestionAsked = z.object({ id: z.string(), sessionID: z.string(), questions: z.array(QuestionInfo) }).passthrough();
export const QuestionReplied = z.object({ sessionID: z.string(), requestID: z.string(), answers: z.array(z.array(z.string())) }).passthrough();
export const QuestionRejected = z.object({ sessionID: z.string(), requestID: z.string() }).passthrough();
