// POST /stream (docs/stream.md): the sandbox stream a chat backend already speaks
// (the chat backend's sandbox envelope reference). Its request, a chat dispatch (the conversation's recent
// turns, the new message last, the agent and the options a create takes), and the four line
// types it answers with: log, step, result, error. Nothing else is ever written, and no line has
// a top-level key the reference does not name, so the line schemas are strict.
import { CreateSessionRequest, SessionRef } from './api.js';
import { z } from './zod.js';

export const ChatMessage = z
  .object({
    role: z.enum(['user', 'assistant', 'system']),
    content: z.string().max(1_000_000),
  })
  .strict()
  .openapi('ChatMessage');
export type ChatMessage = z.infer<typeof ChatMessage>;

/** Who answers the agent's permission requests and questions on a stream, where nobody can. */
export const StreamPermissions = z
  .enum(['allow', 'deny', 'daemon'])
  .openapi('StreamPermissions', {
    description:
      "allow: permissions approved once, a question answered with its first option; deny: permissions denied, questions rejected; daemon: the daemon's --permission-policy (its `ask` means deny here: nobody on this stream can answer). Default daemon. Every decision is a log line",
  });
export type StreamPermissions = z.infer<typeof StreamPermissions>;

const create = CreateSessionRequest.shape;

export const StreamRequest = z
  .object({
    messages: z
      .array(ChatMessage)
      .min(1)
      .max(201)
      .openapi({ description: 'The conversation, oldest first: up to the last 20 turns, then the new message, which must be the last and from the user' }),
    agent: create.agent.optional().openapi({ description: 'The agent of a fresh session; required unless sessionId names one' }),
    sessionId: SessionRef.optional().openapi({
      description: "Continue this session (one agentwire still holds, idle) natively: only the last message is sent, nothing is replayed, and the session's own options stand",
    }),
    keepSession: z.boolean().optional().openapi({
      description: 'Keep a session this dispatch created running after the turn (its id is the `agentwire-session-id` header and the first log line), to continue it with sessionId. Default false: it is ended and its agent reaped when the stream ends',
    }),
    permissions: StreamPermissions.optional(),
    model: create.model,
    variant: create.variant,
    agentMode: create.agentMode,
    permissionMode: create.permissionMode,
    agentVersion: create.agentVersion,
    title: create.title,
    cwd: create.cwd,
    env: create.env,
    mcp: create.mcp,
    budget: create.budget,
  })
  .strict()
  .openapi('StreamRequest', {
    example: {
      agent: 'claude',
      model: 'sonnet',
      permissions: 'allow',
      messages: [
        { role: 'user', content: 'What does the build script do?' },
        { role: 'assistant', content: 'It compiles src/ with tsc and bundles dist/main.js.' },
        { role: 'user', content: 'Add a --watch flag to it.' },
      ],
    },
  });
export type StreamRequest = z.infer<typeof StreamRequest>;

const ts = z.number().int().openapi({ description: 'Unix epoch milliseconds' });

export const StreamLogLine = z
  .object({ type: z.literal('log'), level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string(), ts })
  .strict()
  .openapi('StreamLogLine', { description: 'A diagnostic line for traces: status items, warnings, agent stderr, decisions the policy took' });

export const StreamStepLine = z
  .object({
    type: z.literal('step'),
    id: z.string().openapi({ description: 'The same on the running line and the final one' }),
    name: z.string().openapi({ description: 'The tool the step ran' }),
    status: z.enum(['running', 'succeeded', 'failed']),
    args: z.unknown().optional().openapi({ description: "The call's input (running line)" }),
    result: z.unknown().optional().openapi({ description: "The tool's output (succeeded line)" }),
    error: z.string().optional().openapi({ description: 'Why it failed (failed line)' }),
    durationMs: z.number().int().min(0).optional().openapi({ description: 'From the call to its result, measured by the daemon (final line)' }),
    ts,
  })
  .strict()
  .openapi('StreamStepLine', { description: 'One tool call: a running line, then a succeeded or failed one with the same id' });

export const StreamResultLine = z
  .object({ type: z.literal('result'), message: z.string(), ts })
  .strict()
  .openapi('StreamResultLine', { description: "The turn's final assistant message, once, after the last step; the stream ends after it" });

/** The stable codes of an error line (docs/stream.md, "Error codes"). */
export const STREAM_ERROR_CODES = [
  'agent_crashed',
  'agent_exited',
  'model_error',
  'agent_error',
  'interrupted',
  'terminated',
  'budget_exceeded',
  'session_ended',
  'slow_reader',
  'internal_error',
] as const;
export const StreamErrorCode = z.enum(STREAM_ERROR_CODES).openapi('StreamErrorCode');
export type StreamErrorCode = z.infer<typeof StreamErrorCode>;

export const StreamErrorLine = z
  .object({ type: z.literal('error'), code: StreamErrorCode, message: z.string(), ts })
  .strict()
  .openapi('StreamErrorLine', { description: 'The turn failed: in place of the result; the stream ends after it' });

export const StreamLine = z
  .discriminatedUnion('type', [StreamLogLine, StreamStepLine, StreamResultLine, StreamErrorLine])
  .openapi('StreamLine', { description: 'One NDJSON line of POST /stream' });
export type StreamLine = z.infer<typeof StreamLine>;
export type StreamLogLine = z.infer<typeof StreamLogLine>;
export type StreamStepLine = z.infer<typeof StreamStepLine>;
