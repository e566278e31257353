// How Claude Code is run: ONE long-lived `claude -p` process per session, stream-json both ways,
// permission prompts over stdio (`--permission-prompt-tool stdio`). Protocol facts (2.1.330) are in
// test/agents/claude/fixtures/recorded/README.md; the shapes written here are the Agent SDK's.
//
//   start      spawn, write the `initialize` control_request, ready = its control_response
//   send       one `user` line (text, images as base64 blocks, other attachments named by path)
//   replies    a `control_response` to the CLI's `can_use_tool` control_request, found by its
//              request_id (which the converter uses as the permission / question id)
//   interrupt  our own `interrupt` control_request: the turn ends with a `result`, the process stays
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, resolve } from 'node:path';
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import { ChildProcess } from '../../process/spawn.js';
import type { Attachment, PermissionReply } from '../../schema/api.js';
import { agentLocator } from '../locator.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, AgentHandle, AgentSink, StartOptions, TurnInput } from '../types.js';
import { claudeCapabilities } from './capabilities.js';
import { claudeConverter } from './convert.js';
import { askClaude, modelsFrom, modesFrom } from './offerings.js';

export const CLAUDE_BASE_ARGS = [
  '-p',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--verbose',
  '--include-partial-messages',
  '--permission-prompt-tool',
  'stdio',
];

/** `default` runs Claude Code's own main agent; any other agentMode names an agent (`--agent`),
 *  built in or the user's, as listed by the CLI (offerings.ts). Plan-only work is permissionMode `plan`. */
const CLAUDE_MODES = [{ id: 'default', name: 'Default', description: "Claude Code's main agent (no --agent)." }];

/** The aliases `--model` accepts on 2.1.330 and their effort levels, as its initialize answer lists
 *  them (any full model id is passed through too). Used when the CLI cannot be asked. */
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];
const CLAUDE_MODELS = {
  models: [
    { id: 'default', name: 'Default (recommended)', variants: EFFORTS },
    { id: 'opus', name: 'Opus', variants: EFFORTS },
    { id: 'sonnet', name: 'Sonnet', variants: EFFORTS },
    { id: 'haiku', name: 'Haiku', variants: EFFORTS },
  ],
  defaultModel: 'default',
};

/** Resolves the claude executable, or throws a catalogue error. */
export type LocateClaude = () => Promise<string>;

/** The default locator: --claude-bin, the agents dir's install, PATH (src/agents/discovery.ts). */
export function claudeLocator(config: Partial<Pick<Config, 'agentsDir' | 'claudeBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateClaude {
  return agentLocator('claude', 'Claude Code', config, env);
}

export function createClaudeDriver(limits: ProcessLimits, locate: LocateClaude = claudeLocator()): AgentDriver {
  return {
    id: 'claude',
    capabilities: claudeCapabilities,
    converter: claudeConverter,
    modes: CLAUDE_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: CLAUDE_MODELS,
    listModels: async (ctx) => modelsFrom(await askClaude(await locate(), ctx)),
    listModes: async (ctx) => modesFrom(await askClaude(await locate(), ctx)),
    start: (options, sink) => startClaude(options, sink, limits, locate),
    // cwd, model, effort, agent and permission mode are fixed on its command line at spawn.
    spareServes: sameSpareOptions,
  };
}

/** The argv after the executable for one session. */
export function claudeArgs(options: Pick<StartOptions, 'model' | 'variant' | 'agentMode' | 'permissionMode' | 'nativeSessionId' | 'mcp'>): string[] {
  const args = [...CLAUDE_BASE_ARGS];
  if (options.model) args.push('--model', options.model);
  if (options.variant) args.push('--effort', options.variant);
  if (options.agentMode && options.agentMode !== 'default') args.push('--agent', options.agentMode);
  if (options.permissionMode === 'bypass') args.push('--dangerously-skip-permissions');
  else if (options.permissionMode === 'plan' || options.permissionMode === 'acceptEdits') args.push('--permission-mode', options.permissionMode);
  if (options.nativeSessionId) args.push('--resume', options.nativeSessionId);
  // Claude takes MCP servers as a JSON document on the command line, for this process only.
  if (options.mcp && Object.keys(options.mcp).length > 0) args.push('--mcp-config', JSON.stringify({ mcpServers: options.mcp }));
  return args;
}

interface ControlRequest {
  type: 'control_request';
  request_id: string;
  request: { subtype?: string; tool_name?: string; input?: Record<string, unknown>; permission_suggestions?: unknown[]; tool_use_id?: string };
}

/** Lines held back until the CLI answered initialize (past this they are let through, in order; none expected). */
const MAX_HELD = 1_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function startClaude(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateClaude): Promise<AgentHandle> {
  const executable = await locate();
  const bypass = options.permissionMode === 'bypass';
  // --dangerously-skip-permissions refuses to run as root unless told it is sandboxed.
  const env = { ...options.env, ...(bypass ? { IS_SANDBOX: '1' } : {}) };
  let nextId = 0;
  const ourId = () => `agentwire-${++nextId}`;
  const initId = ourId();
  /** The CLI's pending control requests by request_id (and by tool_use_id, as a fallback key). */
  const pending = new Map<string, ControlRequest>();

  // What the CLI prints before it answered initialize is held back: on a failed start it must not
  // reach the session (a failed --resume prints an error `result` before it exits, which would end
  // a turn the daemon is still opening); on success it is delivered first, in order.
  let held: unknown[] | undefined = [];
  const flush = () => {
    const early = held ?? [];
    held = undefined;
    for (const message of early) sink.native(message);
  };
  const deliver = (message: unknown) => {
    if (held && held.length >= MAX_HELD) flush();
    if (held) held.push(message);
    else sink.native(message);
  };

  let markReady: (ok: { ok: true } | { ok: false; error: string }) => void = () => {};
  const ready = new Promise<{ ok: true } | { ok: false; error: string }>((r) => (markReady = r));
  let child: ChildProcess | undefined;

  const write = async (message: unknown) => {
    try {
      if (!child) throw new Error('not started');
      await child.writeLine(JSON.stringify(message));
    } catch (err) {
      throw new ApiError('agent_io_failed', `Claude Code did not accept input: ${(err as Error).message}`, { agent: 'claude' });
    }
  };

  const onMessage = (message: unknown) => {
    if (isObject(message)) {
      if (message.type === 'control_response' && isObject(message.response) && message.response.request_id === initId) {
        markReady(message.response.subtype === 'success' ? { ok: true } : { ok: false, error: String(message.response.error ?? 'initialize failed') });
      } else if (message.type === 'control_request' && typeof message.request_id === 'string' && isObject(message.request)) {
        const request = message as unknown as ControlRequest;
        if (request.request.subtype === 'can_use_tool') {
          pending.set(request.request_id, request);
        } else {
          // Nothing else is expected without hooks or SDK MCP servers; answer so the CLI never hangs.
          void write({
            type: 'control_response',
            response: { subtype: 'error', request_id: request.request_id, error: `agentwire does not handle '${request.request.subtype}' requests` },
          }).catch(() => {});
        }
      } else if (message.type === 'control_cancel_request' && typeof message.request_id === 'string') {
        pending.delete(message.request_id);
      }
    }
    deliver(message);
  };

  child = await ChildProcess.start(
    {
      command: executable,
      args: claudeArgs(options),
      cwd: options.cwd,
      env,
      ...processSpawnOptions(limits, options.logger),
    },
    (line) => onMessage(parseNativeLine(line.text, line.truncated)),
  );
  const proc = child;
  await write({ type: 'control_request', request_id: initId, request: { subtype: 'initialize', hooks: null } }).catch(() => undefined);

  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), limits.startTimeoutMs).unref());
  const first = await Promise.race([ready, proc.exited, timeout]);
  if (first === 'timeout' || !('ok' in first) || !first.ok) {
    const exit = first === 'timeout' || 'ok' in first ? await proc.kill() : first;
    const why =
      first === 'timeout'
        ? 'did not answer initialize in time'
        : 'ok' in first
          ? `refused initialize: ${(first as { error: string }).error}`
          : `exited with code ${exit.exitCode ?? exit.signal} before it was ready`;
    throw new ApiError('agent_start_failed', `Claude Code ${why}.${exit.stderr.head ? ` stderr: ${exit.stderr.head}` : ''}`, { agent: 'claude' });
  }
  flush();
  proc.exited.then((exit) => sink.exit({ exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, requested: exit.killed }));

  const take = (id: string): ControlRequest => {
    let request = pending.get(id);
    if (!request) request = [...pending.values()].find((r) => r.request.tool_use_id === id);
    if (!request) throw new ApiError('agent_io_failed', `Claude Code has no pending request '${id}'.`, { agent: 'claude' });
    pending.delete(request.request_id);
    return request;
  };
  const respond = (request: ControlRequest, response: Record<string, unknown>) =>
    write({ type: 'control_response', response: { subtype: 'success', request_id: request.request_id, response } });
  const allow = (request: ControlRequest, updatedInput: Record<string, unknown> = request.request.input ?? {}, extra: Record<string, unknown> = {}) =>
    respond(request, { behavior: 'allow', updatedInput, ...extra });
  const deny = (request: ControlRequest, message: string) => respond(request, { behavior: 'deny', message });

  return {
    get pid() {
      return proc.pid;
    },
    send: async (turn) => write(await userLine(turn, options.cwd)),
    replyPermission: (id, reply: PermissionReply) => {
      const request = take(id);
      if (reply === 'reject') return deny(request, 'The user rejected this tool use.');
      const suggestions = request.request.permission_suggestions;
      const extra = reply === 'always' && Array.isArray(suggestions) && suggestions.length > 0 ? { updatedPermissions: suggestions } : {};
      return allow(request, undefined, extra);
    },
    replyQuestion: (id, answers) => {
      const request = take(id);
      const input = request.request.input ?? {};
      if (answers === null) return deny(request, 'The user declined to answer.');
      if (request.request.tool_name === 'AskUserQuestion') return allow(request, { ...input, answers: questionAnswers(input, answers) });
      if (request.request.tool_name === 'ExitPlanMode') {
        return answers[0]?.[0]?.trim().toLowerCase() === 'approve' ? allow(request) : deny(request, 'The user did not approve the plan; keep planning.');
      }
      return allow(request);
    },
    interrupt: () => write({ type: 'control_request', request_id: ourId(), request: { subtype: 'interrupt' } }),
    terminate: async () => {
      await proc.kill();
    },
  };
}

/** AskUserQuestion's answer: question text → the chosen label(s), joined with ", ". */
export function questionAnswers(input: Record<string, unknown>, answers: string[][]): Record<string, string> {
  const questions = Array.isArray(input.questions) ? input.questions : [];
  const out: Record<string, string> = {};
  questions.forEach((q, i) => {
    const text = isObject(q) && typeof q.question === 'string' ? q.question : undefined;
    const chosen = answers[i];
    if (text !== undefined && chosen && chosen.length > 0) out[text] = chosen.join(', ');
  });
  return out;
}

const IMAGE_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };

function imageType(a: Attachment): string | undefined {
  const known = new Set(Object.values(IMAGE_TYPES));
  if (a.mime) return known.has(a.mime) ? a.mime : undefined;
  return IMAGE_TYPES[extname(a.path).toLowerCase()];
}

/** The Agent SDK's user message envelope for one turn. */
export async function userLine(turn: TurnInput, cwd: string): Promise<Record<string, unknown>> {
  const content: Record<string, unknown>[] = [];
  const files: string[] = [];
  for (const a of turn.attachments) {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    const media = imageType(a);
    if (!media) {
      files.push(path);
      continue;
    }
    let data: Buffer;
    try {
      data = await readFile(path);
    } catch (err) {
      throw new ApiError('invalid_request', `Attachment '${a.path}' cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
        path: a.path,
      });
    }
    content.push({ type: 'image', source: { type: 'base64', media_type: media, data: data.toString('base64') } });
  }
  const text = files.length > 0 ? `${turn.message}\n\nAttached files:\n${files.map((f) => `- ${f}`).join('\n')}` : turn.message;
  content.unshift({ type: 'text', text });
  return { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' };
}
