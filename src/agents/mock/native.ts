// The mock agent's own wire format: NDJSON, one object per line, in both directions. It is
// deliberately NOT the universal schema, so the mock is converted exactly like a real agent.
import { z } from 'zod';

// ---- mock → daemon (stdout) ------------------------------------------------------------------

/** A piece of message content in the mock's vocabulary. */
export const MockPart = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), value: z.string() }),
  z.object({ kind: z.literal('thinking'), value: z.string(), private: z.boolean().optional() }),
  z.object({ kind: z.literal('data'), value: z.unknown() }),
  z.object({
    kind: z.literal('file'),
    path: z.string(),
    op: z.enum(['read', 'write', 'patch']),
    diff: z.string().optional(),
  }),
  z.object({ kind: z.literal('picture'), path: z.string(), mime: z.string().optional() }),
  z.object({ kind: z.literal('progress'), label: z.string(), detail: z.string().optional() }),
]);
export type MockPart = z.infer<typeof MockPart>;

/** On the lines a sub-agent produces: its id (from its subagent_start). */
const inAgent = { agent: z.string().optional() };

export const MockOut = z.discriminatedUnion('type', [
  /** First line after start: the mock's own session id and what it runs with. After `--resume`,
   * `resumed: true` and `turns`, the number of prompts the session had already been sent. */
  z.object({
    type: z.literal('ready'),
    session: z.string(),
    model: z.string(),
    mode: z.string().optional(),
    cwd: z.string(),
    pid: z.number(),
    resumed: z.boolean().optional(),
    turns: z.number().int().nonnegative().optional(),
    /** After `--fork`: the session this one is a copy of. */
    forked_from: z.string().optional(),
  }),
  /** An assistant (or system) message begins; `text` deltas follow; `message_end` closes it. */
  z.object({ type: z.literal('message_start'), id: z.string(), role: z.enum(['assistant', 'system']), ...inAgent }),
  z.object({ type: z.literal('text'), id: z.string(), chunk: z.string(), ...inAgent }),
  z.object({
    type: z.literal('message_end'),
    id: z.string(),
    role: z.enum(['assistant', 'system']),
    parts: z.array(MockPart),
    interrupted: z.boolean().optional(),
    ...inAgent,
  }),
  /** A tool invocation belonging to message `parent`. */
  z.object({
    type: z.literal('tool_call'),
    id: z.string(),
    parent: z.string(),
    tool: z.string(),
    input: z.record(z.string(), z.unknown()),
    ...inAgent,
  }),
  z.object({
    type: z.literal('tool_result'),
    id: z.string(),
    call: z.string(),
    parent: z.string(),
    output: z.string(),
    files: z.array(MockPart).optional(),
    failed: z.boolean().optional(),
    ...inAgent,
  }),
  /** A progress notice that is not part of any message. */
  z.object({ type: z.literal('progress'), id: z.string(), label: z.string(), detail: z.string().optional() }),
  /** Something the mock has no better name for; becomes an item of kind `unknown`. */
  z.object({ type: z.literal('artifact'), id: z.string(), payload: z.unknown() }),
  // call: the id of the tool call the permission is for (it follows, once allowed).
  z.object({ type: z.literal('ask_permission'), id: z.string(), action: z.string(), input: z.unknown().optional(), call: z.string().optional() }),
  z.object({ type: z.literal('ask_question'), id: z.string(), prompt: z.string(), options: z.array(z.string()) }),
  z.object({ type: z.literal('failure'), message: z.string(), code: z.string().optional() }),
  /** What one step (one "model call") used; with `wait`, the mock waits for `continue` before its next step. */
  z.object({
    type: z.literal('usage'),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cache_read_input_tokens: z.number().int().nonnegative().optional(),
    model: z.string().optional(),
    wait: z.boolean().optional(),
  }),
  /** The turn is over; `usage` is the turn's total, when it reported any. */
  z.object({
    type: z.literal('done'),
    reason: z.enum(['completed', 'interrupted']),
    usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative(), cache_read_input_tokens: z.number().int().nonnegative().optional() }).optional(),
  }),
  /** A sub-agent starts, launched by tool call `call`; lines it produces carry `agent: id`. */
  z.object({
    type: z.literal('subagent_start'),
    id: z.string(),
    call: z.string(),
    description: z.string().optional(),
    prompt: z.string().optional(),
    agent_type: z.string().optional(),
  }),
  z.object({ type: z.literal('subagent_end'), id: z.string(), outcome: z.enum(['completed', 'failed', 'interrupted']), summary: z.string().optional() }),
  /** The mock ends its session on its own (command `end`) and exits 0 right after. */
  z.object({ type: z.literal('bye') }),
]);
export type MockOut = z.infer<typeof MockOut>;

/** Any line the mock's sub-agent produced carries the sub-agent's id here. */
export const subagentOf = (line: unknown): string | undefined => {
  const agent = line !== null && typeof line === 'object' ? (line as { agent?: unknown }).agent : undefined;
  return typeof agent === 'string' ? agent : undefined;
};

// ---- daemon → mock (stdin) -------------------------------------------------------------------

export const MockIn = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('prompt'),
    text: z.string(),
    attachments: z.array(z.object({ path: z.string(), mime: z.string().optional() })).optional(),
  }),
  z.object({ type: z.literal('permission_reply'), id: z.string(), reply: z.enum(['once', 'always', 'reject']) }),
  z.object({ type: z.literal('question_reply'), id: z.string(), answers: z.array(z.array(z.string())).nullable() }),
  z.object({ type: z.literal('interrupt') }),
  /** The daemon lets a turn held after a `usage` line with `wait` go on to its next step. */
  z.object({ type: z.literal('continue') }),
  /** A message for the running turn: the mock adds it to what it is saying (or says it took it). */
  z.object({ type: z.literal('steer'), text: z.string() }),
]);
export type MockIn = z.infer<typeof MockIn>;
