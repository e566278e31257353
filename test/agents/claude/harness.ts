// Claude Code (the pinned @anthropic-ai/claude-code) run the way the Claude adapter will run it: ONE
// long-lived process per session, stream-json both ways, permission prompts over stdio, against
// the fake model server on 127.0.0.1.
//
//   claude -p --input-format stream-json --output-format stream-json --verbose
//          --include-partial-messages --permission-prompt-tool stdio
//          [--model M] [--permission-mode P | --dangerously-skip-permissions]
//
//   startClaude({fake, sandbox})  spawns it (own process group) in the sandbox's work dir; a handle
//                                 to write stdin lines and read the parsed stdout lines.
//   recordClaude(scenario)        the whole flow for one harness scenario: initialize, one user
//                                 message per prompt, each read until its `result`, permission
//                                 requests answered; returns the normalised transcript.
//
// Protocol facts (2.1.337) are in test/agents/claude/fixtures/recorded/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { testAgentExecutable } from '../../support/test-agents.js';
import { startFakeModel, type FakeModel, type RequestLogEntry } from '../../fake-model/server.js';
import { normalizeClaudeTranscript, type TranscriptLine } from './harness-normalize.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import type { HarnessScenario } from '../../support/scenarios.js';

export type { TranscriptLine } from './harness-normalize.js';

/** One stdout line of Claude Code, parsed (a non-JSON line becomes `{$unparsed: line}`). */
export type ClaudeLine = Record<string, unknown> & { type?: string; subtype?: string };

/** `control_request` the CLI sends (can_use_tool, …) or we send (initialize, interrupt, …). */
export interface ControlRequest {
  type: 'control_request';
  request_id: string;
  request: { subtype: string; [key: string]: unknown };
}

/** The CLI's `can_use_tool` request body (2.1.337). */
export interface CanUseToolRequest {
  subtype: 'can_use_tool';
  tool_name: string;
  display_name?: string;
  input: Record<string, unknown>;
  description?: string;
  permission_suggestions?: unknown[];
  tool_use_id?: string;
  [key: string]: unknown;
}

/** Our answer to a control request of the CLI: the SDK's envelope. */
export interface ControlResponse {
  type: 'control_response';
  response: { subtype: 'success'; request_id: string; response: Record<string, unknown> } | { subtype: 'error'; request_id: string; error: string };
}

export interface ClaudeOptions {
  fake: FakeModel;
  sandbox: Sandbox;
  /** `--dangerously-skip-permissions` (with IS_SANDBOX=1, required as root). Default false: the CLI
   *  asks over stdio (`can_use_tool`) for anything its permission mode does not allow. */
  bypass?: boolean;
  /** `--permission-mode` (ignored with bypass). Not passed when unset: the CLI's default mode. */
  permissionMode?: string;
  /** `--model`. Not passed when unset: the CLI's default model (claude-opus-5-5 on 2.1.337). */
  model?: string;
  /** Extra environment on top of the sandbox's and the fake-model settings. */
  env?: Record<string, string>;
  /** Longest wait of waitFor() and initialize() (default 30 s). */
  timeoutMs?: number;
}

export interface ClaudeHandle {
  readonly pid: number;
  /** The argv after the executable. */
  readonly args: string[];
  /** Every stdout line, parsed, in order. */
  readonly lines: ClaudeLine[];
  /** Stdout lines and, where we wrote to stdin, `{$sent: <what we wrote>}`, in the order it happened. */
  readonly transcript: TranscriptLine[];
  /** Writes one JSON line to stdin (recorded as `$sent`). */
  write(message: unknown): void;
  /** Sends the `initialize` control request and resolves with the CLI's answer (its `response`). */
  initialize(request?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Writes one user message; returns the index in `lines` from which its output starts. */
  send(text: string): number;
  /** send() and wait for that turn's `result` line. */
  turn(text: string): Promise<ClaudeLine>;
  /** Writes our answer to a control request of the CLI (see allow() / deny()). */
  respond(response: ControlResponse): void;
  /** Called for every stdout line as it arrives (before waitFor() waiters are resolved). */
  onLine(listener: (line: ClaudeLine) => void): void;
  /** The first line (at index `from` or later) matching `predicate`; rejects on timeout or exit. */
  waitFor(predicate: (line: ClaudeLine) => boolean, options?: { from?: number; what?: string; timeoutMs?: number }): Promise<ClaudeLine>;
  stderr(): string;
  /** Resolves when the process has exited and been reaped. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes stdin (the CLI exits on EOF), then SIGTERM and SIGKILL to the whole process group;
   *  resolves once reaped. */
  close(): Promise<void>;
}

export const CLAUDE_FLAGS = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--permission-prompt-tool', 'stdio'];
const STDERR_KEEP = 64 * 1024;

/** The installed pinned Claude Code executable; throws (never skips) when it is missing. */
export async function claudeExecutable(): Promise<string> {
  return testAgentExecutable('claude');
}

/** The environment Claude Code runs with against the fake model. */
export function claudeEnv(fake: FakeModel, sandbox: Sandbox, bypass: boolean): Record<string, string> {
  return {
    ...sandbox.env,
    ANTHROPIC_BASE_URL: fake.url, // no /v1: the CLI appends /v1/messages itself
    ANTHROPIC_API_KEY: 'sk-ant-agentwire-fake',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '2',
    // --dangerously-skip-permissions refuses to run as root unless it is told it is sandboxed.
    ...(bypass ? { IS_SANDBOX: '1' } : {}),
  };
}

/** The user message envelope (what the Agent SDK writes for a prompt). */
export function userMessage(text: string): Record<string, unknown> {
  return { type: 'user', message: { role: 'user', content: [{ type: 'text', text }] }, parent_tool_use_id: null, session_id: '' };
}

/** Allows a `can_use_tool` request; `updatedInput` defaults to the input the CLI asked about. */
export function allow(request: ControlRequest, updatedInput?: Record<string, unknown>): ControlResponse {
  const input = (request.request as CanUseToolRequest).input;
  return { type: 'control_response', response: { subtype: 'success', request_id: request.request_id, response: { behavior: 'allow', updatedInput: updatedInput ?? input } } };
}

/** Denies a `can_use_tool` request; `message` is what the model is told. */
export function deny(request: ControlRequest, message: string, interrupt?: boolean): ControlResponse {
  const response: Record<string, unknown> = { behavior: 'deny', message };
  if (interrupt !== undefined) response.interrupt = interrupt;
  return { type: 'control_response', response: { subtype: 'success', request_id: request.request_id, response } };
}

export const isResult = (l: ClaudeLine) => l.type === 'result';
export const isControlRequest = (l: ClaudeLine): l is ClaudeLine & ControlRequest => l.type === 'control_request';
export const isPermissionRequest = (l: ClaudeLine): l is ClaudeLine & ControlRequest & { request: CanUseToolRequest } =>
  isControlRequest(l) && (l.request as { subtype?: unknown } | undefined)?.subtype === 'can_use_tool';

export async function startClaude(options: ClaudeOptions): Promise<ClaudeHandle> {
  const { fake, sandbox } = options;
  const bypass = options.bypass ?? false;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const executable = await claudeExecutable();
  const args = [...CLAUDE_FLAGS];
  if (options.model) args.push('--model', options.model);
  if (bypass) args.push('--dangerously-skip-permissions');
  else if (options.permissionMode) args.push('--permission-mode', options.permissionMode);
  const env = { ...claudeEnv(fake, sandbox, bypass), ...options.env };

  const child: ChildProcess = spawn(executable, args, {
    cwd: sandbox.work,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group: close() signals the group, the agent's shells included
  });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((r) => child.once('error', r));
    throw new Error(`could not spawn ${executable}: ${error.message}`);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((e) => {
    exitInfo = e;
    for (const w of [...waiters]) w.fail(new Error(`claude exited (${e.signal ?? e.code}) while waiting for ${w.what}${context()}`));
  });

  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.length > STDERR_KEEP * 2) stderr = stderr.slice(0, STDERR_KEEP) + '\n[…]\n' + stderr.slice(-STDERR_KEEP);
  });
  child.stdin!.on('error', () => undefined); // EPIPE after exit is reported through `exited`

  const lines: ClaudeLine[] = [];
  const transcript: TranscriptLine[] = [];
  const listeners: Array<(l: ClaudeLine) => void> = [];
  interface Waiter {
    predicate: (l: ClaudeLine) => boolean;
    from: number;
    what: string;
    done: (l: ClaudeLine) => void;
    fail: (e: Error) => void;
  }
  const waiters: Waiter[] = [];
  let nextRequest = 0;

  const context = () => {
    const last = lines.slice(-5).map((l) => JSON.stringify(l).slice(0, 400));
    return `\nlast lines:\n${last.join('\n') || '(none)'}\nstderr tail:\n${stderr.slice(-2000) || '(empty)'}`;
  };

  createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (text) => {
    let line: ClaudeLine;
    try {
      const parsed: unknown = JSON.parse(text);
      line = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as ClaudeLine) : { $unparsed: text };
    } catch {
      line = { $unparsed: text }; // kept visible rather than dropped
    }
    lines.push(line);
    transcript.push(line);
    for (const listener of listeners) listener(line);
    const index = lines.length - 1;
    for (const w of [...waiters]) if (index >= w.from && w.predicate(line)) w.done(line);
  });

  const handle: ClaudeHandle = {
    pid,
    args,
    lines,
    transcript,
    exited,
    write(message) {
      if (exitInfo) throw new Error(`claude has exited; cannot send ${JSON.stringify(message).slice(0, 200)}`);
      transcript.push({ $sent: message });
      child.stdin!.write(`${JSON.stringify(message)}\n`);
    },
    async initialize(request = { hooks: null }) {
      const requestId = `agentwire-${++nextRequest}`;
      const from = lines.length;
      handle.write({ type: 'control_request', request_id: requestId, request: { subtype: 'initialize', ...request } });
      const answer = await handle.waitFor(
        (l) => l.type === 'control_response' && (l.response as { request_id?: unknown } | undefined)?.request_id === requestId,
        { from, what: 'the initialize control_response' },
      );
      const response = answer.response as { subtype?: string; error?: string; response?: Record<string, unknown> };
      if (response.subtype !== 'success') throw new Error(`initialize failed: ${response.error ?? JSON.stringify(response)}`);
      return response.response ?? {};
    },
    send(text) {
      const from = lines.length;
      handle.write(userMessage(text));
      return from;
    },
    turn(text) {
      const from = handle.send(text);
      return handle.waitFor(isResult, { from, what: `the result of '${text}'` });
    },
    respond(response) {
      handle.write(response);
    },
    onLine(listener) {
      listeners.push(listener);
    },
    waitFor(predicate, opts = {}) {
      const from = opts.from ?? 0;
      const what = opts.what ?? 'a matching line';
      const found = lines.slice(from).find(predicate);
      if (found) return Promise.resolve(found);
      if (exitInfo) return Promise.reject(new Error(`claude has exited; no ${what}${context()}`));
      const wait = opts.timeoutMs ?? timeoutMs;
      return new Promise<ClaudeLine>((resolve, reject) => {
        const waiter: Waiter = {
          predicate,
          from,
          what,
          done: (l) => (remove(), resolve(l)),
          fail: (e) => (remove(), reject(e)),
        };
        const timer = setTimeout(() => waiter.fail(new Error(`timed out after ${wait} ms waiting for ${what}${context()}`)), wait);
        const remove = () => {
          clearTimeout(timer);
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
        };
        waiters.push(waiter);
      });
    },
    stderr: () => stderr,
    close() {
      closing ??= closeOnce();
      return closing;
    },
  };
  let closing: Promise<void> | undefined;
  const closeOnce = async () => {
    if (!exitInfo) {
      child.stdin!.end(); // in stream-json input mode the CLI finishes and exits 0 on EOF
      const gone = await Promise.race([exited.then(() => true), sleep(3000).then(() => false)]);
      if (!gone) {
        killGroup(pid, 'SIGTERM');
        const termed = await Promise.race([exited.then(() => true), sleep(2000).then(() => false)]);
        if (!termed) killGroup(pid, 'SIGKILL');
      }
      await exited;
    }
    // The leader is reaped; anything it left in its group (a shell a tool started) goes too.
    killGroup(pid, 'SIGKILL');
  };
  return handle;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// One scenario, recorded.

export interface ClaudeRecording {
  /** Normalised transcript, one JSON object per line (see harness-normalize.ts). */
  lines: unknown[];
  /** The same, not normalised. */
  raw: TranscriptLine[];
  /** Every stdout line, in order. */
  stdout: ClaudeLine[];
  /** The `result` line of each prompt, in order. */
  results: ClaudeLine[];
  /** The `can_use_tool` requests the CLI sent. */
  permissionRequests: ControlRequest[];
  /** Control requests of the CLI other than can_use_tool (answered with an error). */
  unexpectedRequests: ControlRequest[];
  /** The answer to our initialize request. */
  initialize: Record<string, unknown>;
  /** The fake model's request log. */
  requests: RequestLogEntry[];
  /** Every regular file in the work dir after the run, by path relative to it. */
  files: Record<string, string>;
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  ms: number;
}

export interface RecordOptions {
  /** How `can_use_tool` requests are answered (default allow, with updatedInput = the input). */
  decision?: 'allow' | 'deny';
  /** The message of a deny. */
  denyMessage?: string;
  model?: string;
}

/**
 * Runs one harness scenario through a fresh sandbox, fake model and Claude Code process (one process
 * for all its prompts), and cleans all up. The scenario's askPermission runs it without bypass.
 */
export async function recordClaude(scenario: HarnessScenario, options: RecordOptions = {}): Promise<ClaudeRecording> {
  const started = Date.now();
  const decision = options.decision ?? 'allow';
  const sandbox = makeSandbox('claude');
  const fake = await startFakeModel({ scenario: scenario.model });
  let claude: ClaudeHandle | undefined;
  try {
    claude = await startClaude({ fake, sandbox, bypass: !scenario.askPermission, ...(options.model ? { model: options.model } : {}) });
    const h = claude;
    const permissionRequests: ControlRequest[] = [];
    const unexpectedRequests: ControlRequest[] = [];
    // Control requests are answered the moment they arrive, so the answer's place in the transcript
    // (right after the request) does not depend on timing.
    h.onLine((l) => {
      if (!isControlRequest(l)) return;
      if (isPermissionRequest(l)) {
        permissionRequests.push(l);
        h.respond(decision === 'allow' ? allow(l) : deny(l, options.denyMessage ?? 'The user denied this.'));
      } else {
        unexpectedRequests.push(l);
        h.respond({ type: 'control_response', response: { subtype: 'error', request_id: l.request_id, error: `the test harness does not handle ${l.request.subtype}` } });
      }
    });

    // Initialize first and wait for its answer, so the first user message always follows it.
    const init = await h.initialize();
    const results: ClaudeLine[] = [];
    // One turn at a time: the next user message is written only after the previous `result`.
    for (const text of scenario.prompts) results.push(await h.turn(text));
    // EOF on stdin: the CLI exits 0. Whatever it prints until then belongs to the transcript.
    await h.close();
    const exit = await h.exited;
    const raw = [...h.transcript];
    return {
      lines: normalizeClaudeTranscript(raw, { sandbox, port: fake.port, pid: h.pid }),
      raw,
      stdout: [...h.lines],
      results,
      permissionRequests,
      unexpectedRequests,
      initialize: init,
      requests: fake.requests,
      files: readFiles(sandbox.work),
      stderr: h.stderr(),
      exit,
      ms: Date.now() - started,
    };
  } finally {
    await claude?.close();
    await fake.close();
    sandbox.cleanup();
  }
}

/** Every regular file under `dir` (skipping the CLI's own dot-directories), path -> content. */
export function readFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (name !== '.claude' && name !== '.git') walk(p);
      } else if (st.isFile()) out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}
