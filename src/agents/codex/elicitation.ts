// `mcpServer/elicitation/request`: an MCP server asking the user, relayed by Codex (v2/
// McpServerElicitationRequestParams). Two kinds are seen on 0.171.0 (test/agents/codex/e2e-mcp.test.ts):
//
// - Codex's own approval of an MCP tool call, under an asking approval policy (permissionMode
//   default): `_meta.codex_approval_kind: "mcp_tool_call"` with the tool's name and params, an empty
//   form, `persist: ["session", "always"]`. It is a permission: accepted `{action: "accept",
//   content: {}}`, for the session with `_meta: {persist: "session"}` (the same tool is then not
//   asked again), rejected `{action: "decline"}`. Under approvalPolicy `never` Codex declines the
//   server's own elicitations itself and never asks.
// - The server's own form (`mode: "form"`, `requestedSchema` {properties: {<field>: {type, title,
//   enum…}}}): a question, one field per line of the prompt, the options those of the first field;
//   the answers (string[][]) fill the fields in order. `mode: "url"` asks the user to open `url`.
//
// Pure: the converter uses it for the drafts, the driver for the answers.
import { z } from 'zod';

const Field = z.looseObject({
  type: z.string().optional(),
  title: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  enum: z.array(z.string()).optional(),
  oneOf: z.array(z.looseObject({ const: z.string() })).optional(),
  items: z.looseObject({ enum: z.array(z.string()).optional(), anyOf: z.array(z.looseObject({ const: z.string() })).optional() }).optional(),
});
const Form = z.looseObject({ properties: z.record(z.string(), Field).optional() });

export const McpElicitation = z.looseObject({
  serverName: z.string(),
  mode: z.string(),
  message: z.string(),
  url: z.string().optional(),
  requestedSchema: z.unknown().optional(),
  _meta: z
    .looseObject({ codex_approval_kind: z.string().optional(), tool_name: z.string().optional(), tool_params: z.unknown().optional() })
    .nullable()
    .optional(),
});
export type McpElicitation = z.infer<typeof McpElicitation>;

export interface ElicitationField {
  name: string;
  type: string;
  label: string;
  options: string[];
}

/** True when the elicitation is Codex asking to run an MCP tool (a permission, not a form). */
export const isToolApproval = (e: McpElicitation) => typeof e._meta?.codex_approval_kind === 'string';

/** The form's fields, in the order the server listed them. */
export function elicitationFields(requestedSchema: unknown): ElicitationField[] {
  const form = Form.safeParse(requestedSchema);
  if (!form.success) return [];
  return Object.entries(form.data.properties ?? {}).map(([name, f]) => ({
    name,
    type: f.type ?? 'string',
    label: [f.title ?? name, f.description].filter(Boolean).join(': '),
    options: f.enum ?? f.oneOf?.map((o) => o.const) ?? f.items?.enum ?? f.items?.anyOf?.map((o) => o.const) ?? (f.type === 'boolean' ? ['true', 'false'] : []),
  }));
}

/** The question's prompt: the message (and url), then one line per field. */
export function elicitationPrompt(e: McpElicitation): string {
  const fields = elicitationFields(e.requestedSchema);
  const lines = [e.message, ...(e.url ? [e.url] : []), ...(fields.length > 1 ? fields.map((f) => f.label) : [])];
  return lines.join('\n');
}

/** The accepted form's `content`: answer i fills field i, typed as the field says. */
export function elicitationContent(requestedSchema: unknown, answers: string[][]): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  elicitationFields(requestedSchema).forEach((f, i) => {
    const answer = answers[i];
    if (!answer || answer.length === 0) return;
    if (f.type === 'array') content[f.name] = answer;
    else if (f.type === 'number' || f.type === 'integer') content[f.name] = Number(answer[0]);
    else if (f.type === 'boolean') content[f.name] = answer[0] === 'true' || answer[0] === 'yes';
    else content[f.name] = answer[0];
  });
  return content;
}
