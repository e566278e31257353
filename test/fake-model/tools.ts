// Abstract steps -> concrete blocks, using the tools the request actually offers. The protocols
// list tools differently (Anthropic `input_schema`, Responses flat `function`/`custom` tools, Chat
// `{function:{…}}`); each is read into one OfferedTool list, then a shell or write step is mapped
// onto the first matching tool, with arguments built from that tool's JSON schema.
import type { Step, ShellStep, WriteStep, CallStep } from './scenario.js';
import { asList, asObj } from './wire.js';

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

export interface OfferedTool {
  name: string;
  /** `custom`: a Responses freeform tool (Codex's `apply_patch`), whose input is a plain string. */
  kind: 'function' | 'custom' | 'tool_search';
  schema?: JsonSchema;
  /** Responses `namespace` tools (Codex's MCP servers): the namespace and the tool's own name;
   *  `name` is then `<namespace>__<tool>`, so scenarios call e.g. `mcp__probe__echo`. */
  namespace?: { name: string; tool: string };
}

export type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool'; name: string; args: Record<string, unknown>; namespace?: string; toolSearch?: boolean }
  | { type: 'custom'; name: string; input: string }
  | { type: 'sleep'; ms: number };

type Obj = Record<string, unknown>;

/** Anthropic Messages: `tools: [{name, description, input_schema}]` (server tools have a `type`). */
export function anthropicTools(body: Obj): OfferedTool[] {
  return asList(body.tools)
    .map(asObj)
    .filter((t) => typeof t.name === 'string')
    .map((t) => ({ name: t.name as string, kind: 'function', schema: t.input_schema as JsonSchema | undefined }));
}

/** OpenAI Responses: `tools: [{type:'function', name, parameters} | {type:'custom', name, format}]`. */
export function responsesTools(body: Obj): OfferedTool[] {
  return asList(body.tools)
    .map(asObj)
    .filter((t) => typeof t.name === 'string' && (t.type === 'function' || t.type === 'custom'))
    .map((t): OfferedTool => ({
      name: t.name as string,
      kind: t.type === 'custom' ? 'custom' : 'function',
      schema: t.parameters as JsonSchema | undefined,
    }))
    .concat(responsesNamespaceTools(body))
    .concat(responsesToolSearch(body));
}

/**
 * Codex defers MCP tools behind a client-executed `{type:'tool_search'}` tool (offered as
 * `tool_search`); what a search found comes back as `tool_search_output {tools: [namespace…]}` in
 * `input`, and those tools are callable from then on.
 */
function responsesToolSearch(body: Obj): OfferedTool[] {
  const tools = asList(body.tools).map(asObj);
  const search = tools.find((t) => t.type === 'tool_search');
  const offered: OfferedTool[] = search ? [{ name: 'tool_search', kind: 'tool_search', schema: search.parameters as JsonSchema | undefined }] : [];
  const found = asList(body.input)
    .map(asObj)
    .filter((i) => i.type === 'tool_search_output')
    .flatMap((i) => asList(i.tools));
  return offered.concat(responsesNamespaceTools({ tools: found }));
}

/** The function tools inside Responses `{type:'namespace', name, tools}` entries, flattened. */
function responsesNamespaceTools(body: Obj): OfferedTool[] {
  return asList(body.tools)
    .map(asObj)
    .filter((t) => t.type === 'namespace' && typeof t.name === 'string')
    .flatMap((ns) =>
      asList(ns.tools)
        .map(asObj)
        .filter((t) => typeof t.name === 'string' && t.type === 'function')
        .map((t): OfferedTool => ({
          name: `${ns.name as string}__${t.name as string}`,
          kind: 'function',
          schema: t.parameters as JsonSchema | undefined,
          namespace: { name: ns.name as string, tool: t.name as string },
        })),
    );
}

/** OpenAI Chat Completions: `tools: [{type:'function', function:{name, parameters}}]`. */
export function chatTools(body: Obj): OfferedTool[] {
  return asList(body.tools)
    .map(asObj)
    .map((t) => asObj(t.function))
    .filter((f) => typeof f.name === 'string')
    .map((f) => ({ name: f.name as string, kind: 'function', schema: f.parameters as JsonSchema | undefined }));
}

/**
 * Gemini API: `tools: [{functionDeclarations: [{name, parametersJsonSchema | parameters}]}]`. The
 * older `parameters` is Google's OpenAPI subset with upper-case types (`OBJECT`, `STRING`); they are
 * lower-cased so the schema reads like JSON Schema.
 */
export function geminiTools(body: Obj): OfferedTool[] {
  return asList(body.tools)
    .map(asObj)
    .flatMap((t) => asList(t.functionDeclarations))
    .map(asObj)
    .filter((f) => typeof f.name === 'string')
    .map((f) => ({ name: f.name as string, kind: 'function', schema: lowerTypes(f.parametersJsonSchema ?? f.parameters) as JsonSchema | undefined }));
}

function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'type' && typeof v === 'string' ? v.toLowerCase() : lowerTypes(v);
  return out;
}

/** Claude `Bash`, OpenCode `bash`, Codex `exec_command` / `shell_command` / `shell`, Gemini CLI
 *  and Qwen Code `run_shell_command`. */
export const SHELL_TOOLS = ['Bash', 'bash', 'exec_command', 'shell_command', 'shell', 'run_shell_command'];
/** Claude `Write`, OpenCode `write`, Codex `apply_patch`, Gemini CLI and Qwen Code `write_file`. */
export const WRITE_TOOLS = ['Write', 'write', 'apply_patch', 'write_file'];

function find(tools: OfferedTool[], names: string[]): OfferedTool | undefined {
  for (const n of names) {
    const t = tools.find((x) => x.name === n);
    if (t) return t;
  }
  return undefined;
}

const props = (t: OfferedTool) => t.schema?.properties ?? {};
const hasType = (s: JsonSchema | undefined, type: string) =>
  s?.type === type || (Array.isArray(s?.type) && s.type.includes(type));

/** Gives every required property the schema names but the arguments lack a neutral value. */
function fillRequired(args: Obj, schema: JsonSchema | undefined): Obj {
  for (const key of schema?.required ?? []) {
    if (key in args) continue;
    const p = schema?.properties?.[key];
    if (hasType(p, 'string')) args[key] = '';
    else if (hasType(p, 'number') || hasType(p, 'integer')) args[key] = 0;
    else if (hasType(p, 'boolean')) args[key] = false;
    else if (hasType(p, 'array')) args[key] = [];
    else args[key] = {};
  }
  return args;
}

function shellBlock(step: ShellStep, tools: OfferedTool[]): Block {
  const tool = find(tools, SHELL_TOOLS);
  if (!tool) return noTool('shell', tools, `would run: ${step.command}`);
  const p = props(tool);
  const args: Obj = {};
  // Codex exec_command: {cmd: string}; Codex shell: {command: string[]}; everyone else a string.
  if ('cmd' in p || (!('command' in p) && tool.name === 'exec_command')) args.cmd = step.command;
  else if (hasType(p.command, 'array') || (!p.command && tool.name === 'shell'))
    args.command = ['bash', '-lc', step.command];
  else args.command = step.command;
  if ('description' in p) args.description = step.description ?? `Run ${step.command}`;
  return { type: 'tool', name: tool.name, args: fillRequired(args, tool.schema) };
}

/** A patch in Codex's apply_patch format that creates (or replaces) one file. */
export function addFilePatch(path: string, content: string): string {
  const body = content.endsWith('\n') ? content.slice(0, -1) : content;
  const lines = body === '' ? [] : body.split('\n');
  return ['*** Begin Patch', `*** Add File: ${path}`, ...lines.map((l) => `+${l}`), '*** End Patch'].join('\n');
}

function writeBlock(step: WriteStep, tools: OfferedTool[]): Block {
  const tool = find(tools, WRITE_TOOLS);
  if (!tool) return noTool('write', tools, `would write ${step.path}`);
  if (tool.name === 'apply_patch') {
    const patch = addFilePatch(step.path, step.content);
    if (tool.kind === 'custom') return { type: 'custom', name: tool.name, input: patch };
    return { type: 'tool', name: tool.name, args: fillRequired({ input: patch }, tool.schema) };
  }
  const p = props(tool);
  const defaultKey = tool.name === 'Write' ? 'file_path' : tool.name === 'write' ? 'filePath' : 'path';
  const pathKey = ['file_path', 'filePath', 'path'].find((k) => k in p) ?? defaultKey;
  const args: Obj = { [pathKey]: step.path, content: step.content };
  return { type: 'tool', name: tool.name, args: fillRequired(args, tool.schema) };
}

function callBlock(step: CallStep, tools: OfferedTool[]): Block {
  const tool = tools.find((t) => t.name === step.call);
  if (!tool) return noTool(step.call, tools, 'call skipped');
  if (tool.kind === 'custom') {
    const input = typeof step.input === 'string' ? step.input : JSON.stringify(step.input);
    return { type: 'custom', name: tool.name, input };
  }
  // A Responses `tool_search_call` (client-executed), not a function_call.
  if (tool.kind === 'tool_search' && typeof step.input !== 'string') return { type: 'tool', name: tool.name, args: step.input, toolSearch: true };
  if (tool.namespace && typeof step.input !== 'string') return { type: 'tool', name: tool.namespace.tool, namespace: tool.namespace.name, args: step.input };
  if (typeof step.input !== 'string') return { type: 'tool', name: tool.name, args: step.input };
  try {
    const parsed = JSON.parse(step.input) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { type: 'tool', name: tool.name, args: parsed as Obj };
    }
  } catch {
    // fall through
  }
  return noTool(step.call, tools, 'its input is not a JSON object');
}

function noTool(what: string, tools: OfferedTool[], detail: string): Block {
  const offered = tools.map((t) => t.name).join(', ') || 'none';
  return { type: 'text', text: `[fake model] no ${what} tool is offered (tools: ${offered}); ${detail}` };
}

/** Maps a turn's steps onto blocks for this request's tools; adjacent text steps become one block. */
export function toBlocks(steps: Step[], tools: OfferedTool[]): Block[] {
  const out: Block[] = [];
  for (const step of steps) {
    let block: Block | undefined;
    if ('text' in step) block = { type: 'text', text: step.text };
    else if ('thinking' in step) block = { type: 'thinking', text: step.thinking };
    else if ('tool' in step) block = step.tool === 'shell' ? shellBlock(step, tools) : writeBlock(step, tools);
    else if ('call' in step) block = callBlock(step, tools);
    else if ('sleepMs' in step) block = { type: 'sleep', ms: step.sleepMs };
    if (!block) continue;
    const last = out[out.length - 1];
    // Adjacent text steps make one block; a fallback text (no such tool) stays a block of its own.
    if (block.type === 'text' && last?.type === 'text' && 'text' in step) last.text += block.text;
    else out.push(block);
  }
  return out;
}

/** True when a request offers no tools at all (title generation, summaries, quota probes). */
export const offersNoTools = (tools: OfferedTool[], body: Obj) => tools.length === 0 && asList(body.tools).length === 0;
