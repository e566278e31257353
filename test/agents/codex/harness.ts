// Codex (the pinned @openai/codex) run the way the Codex adapter will run it: `codex app-server`,
// JSON-RPC over stdio (one JSON object per line; Codex omits the `jsonrpc` field and so do we),
// one process per session, against the fake model server on 127.0.0.1.
//
//   startCodex({fake, sandbox})  spawns it (own process group) with CODEX_HOME=<home>/.codex holding a
//                                config.toml for the fake provider; a handle to talk JSON-RPC to it.
//   recordCodex(scenario)        the whole flow for one harness scenario: initialize + initialized,
//                                thread/start, one turn/start per prompt, each read until its
//                                turn/completed, approvals answered; returns the normalised transcript.
//
// Protocol facts (0.171.0) are in test/agents/codex/fixtures/recorded/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { testAgentExecutable } from '../../support/test-agents.js';
import { startFakeModel, type FakeModel, type RequestLogEntry } from '../../fake-model/server.js';
import { normalizeCodexTranscript, type TranscriptEntry } from './harness-normalize.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import type { HarnessScenario } from '../../support/scenarios.js';

export type RpcId = number | string;
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}
/** Any JSON-RPC message: a request (id + method), a notification (method), a response (id + result/error). */
export interface RpcMessage {
  id?: RpcId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: RpcError;
  [key: string]: unknown;
}

export type Approvals = 'ask' | 'bypass';

export interface CodexOptions {
  fake: FakeModel;
  sandbox: Sandbox;
  /** 'ask' (default 'bypass'): the thread asks before writing, so approval requests reach the client. */
  approvals?: Approvals;
  /** Model id in config.toml (default gpt-5.5, which Codex knows, so no model-metadata warnings). */
  model?: string;
  /** Longest wait of request() and waitFor() (default 30 s). */
  timeoutMs?: number;
}

export interface CodexHandle {
  readonly pid: number;
  readonly codexHome: string;
  /** thread/start params for the chosen approvals: cwd, approvalPolicy, sandbox. */
  readonly threadParams: { cwd: string; approvalPolicy: string; sandbox: string };
  /** Sends a request; resolves with its result, rejects with the JSON-RPC error. */
  request<T = unknown>(method: string, params?: unknown): Promise<T>;
  notify(method: string, params?: unknown): void;
  /** Answers a request the server sent (approvals and the like). */
  respond(id: RpcId, result: unknown): void;
  respondError(id: RpcId, error: RpcError): void;
  /** Every message received, in order. */
  readonly messages: RpcMessage[];
  /** Everything received and sent, in the order it happened. */
  readonly transcript: TranscriptEntry[];
  /** Called for every message as it arrives (before waitFor() waiters are resolved). */
  onMessage(listener: (message: RpcMessage) => void): void;
  /** The first message (at index `from` or later) matching `predicate`; rejects on timeout or exit. */
  waitFor(predicate: (message: RpcMessage) => boolean, options?: { from?: number; what?: string; timeoutMs?: number }): Promise<RpcMessage>;
  stderr(): string;
  /** Resolves when the process has exited and been reaped. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes stdin, then SIGTERM and SIGKILL to the whole process group; resolves once reaped. */
  close(): Promise<void>;
}

const STDERR_KEEP = 64 * 1024;
/** The variable named by the provider's env_key; Codex sends it as the bearer token. */
export const FAKE_KEY_ENV = 'AGENTWIRE_FAKE_API_KEY';
export const DEFAULT_MODEL = 'gpt-5.5';
export const CLIENT_INFO = { name: 'agentwire', title: null, version: '0.0.0' };

/** The installed pinned Codex executable; throws (never skips) when it is missing. */
export async function codexExecutable(): Promise<string> {
  return testAgentExecutable('codex');
}

/** config.toml for the fake provider. Approval policy and sandbox are per thread (thread/start). */
export function codexConfig(fake: FakeModel, model = DEFAULT_MODEL): string {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "agentwire fake model"',
    `base_url = "${fake.url}/v1"`,
    `env_key = "${FAKE_KEY_ENV}"`,
    'wire_api = "responses"',
    // The model-error scenario fails once with a 500: Codex retries the request (silently, no
    // JSON-RPC notification), after the retry-after the fake sends (1 s).
    'request_max_retries = 2',
    'stream_max_retries = 1',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // With plugins on (the default), app-server resolves api.github.com and chatgpt.com at startup
    // (curated plugin list), seen with strace: the only non-loopback traffic it attempts here.
    '[features]',
    'plugins = false',
    '',
  ].join('\n');
}

export async function startCodex(options: CodexOptions): Promise<CodexHandle> {
  const { fake, sandbox } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const executable = await codexExecutable();
  const codexHome = join(sandbox.home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(join(codexHome, 'config.toml'), codexConfig(fake, options.model));
  const env = { ...sandbox.env, CODEX_HOME: codexHome, [FAKE_KEY_ENV]: 'sk-agentwire-fake' };
  const threadParams =
    options.approvals === 'ask'
      ? // Read-only sandbox, and "untrusted": every write (apply_patch) and every shell command,
        // `echo` included, is put to the client first.
        { cwd: sandbox.work, approvalPolicy: 'untrusted', sandbox: 'read-only' }
      : { cwd: sandbox.work, approvalPolicy: 'never', sandbox: 'danger-full-access' };

  const messages: RpcMessage[] = [];
  const transcript: TranscriptEntry[] = [];
  const listeners: Array<(m: RpcMessage) => void> = [];
  const pending = new Map<RpcId, { method: string; resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  interface Waiter {
    predicate: (m: RpcMessage) => boolean;
    from: number;
    what: string;
    done: (m: RpcMessage) => void;
    fail: (e: Error) => void;
  }
  const waiters: Waiter[] = [];
  let nextId = 0;
  let stderr = '';
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let closing: Promise<void> | undefined;
  const context = () => {
    const last = messages.slice(-5).map((m) => JSON.stringify(m).slice(0, 400));
    return `\nlast messages:\n${last.join('\n') || '(none)'}\nstderr tail:\n${stderr.slice(-2000) || '(empty)'}`;
  };

  // --strict-config: a config.toml key this version does not know is an error, not ignored.
  const child: ChildProcess = spawn(executable, ['app-server', '--strict-config'], {
    cwd: sandbox.work,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group: close() signals the group, the agent's children included
  });
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((r) => child.once('error', r));
    throw new Error(`could not spawn ${executable}: ${error.message}`);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  void exited.then((e) => {
    exitInfo = e;
    const how = e.signal ?? `code ${e.code}`;
    for (const w of [...waiters]) w.fail(new Error(`codex app-server exited (${how}) while waiting for ${w.what}${context()}`));
    for (const [, p] of pending) p.reject(new Error(`codex app-server exited (${how}) before answering ${p.method}${context()}`));
    pending.clear();
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.length > STDERR_KEEP * 2) stderr = `${stderr.slice(0, STDERR_KEEP)}\n[…]\n${stderr.slice(-STDERR_KEEP)}`;
  });
  child.stdin!.on('error', () => undefined); // EPIPE after an exit: reported through `exited`

  createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => {
    let message: RpcMessage;
    try {
      message = JSON.parse(line) as RpcMessage;
    } catch {
      // Not JSON: kept visible in the transcript rather than dropped.
      transcript.push({ received: { $unparsed: line } });
      return;
    }
    messages.push(message);
    transcript.push({ received: message });
    if (message.method === undefined && message.id !== undefined) {
      const p = pending.get(message.id);
      if (p) {
        pending.delete(message.id);
        if (message.error) p.reject(Object.assign(new Error(`${p.method} failed: ${message.error.code} ${message.error.message}`), { rpcError: message.error }));
        else p.resolve(message.result);
      }
    }
    for (const listener of listeners) listener(message);
    const index = messages.length - 1;
    for (const w of [...waiters]) if (index >= w.from && w.predicate(message)) w.done(message);
  });

  const write = (message: RpcMessage) => {
    if (exitInfo) throw new Error(`codex app-server has exited; cannot send ${JSON.stringify(message).slice(0, 200)}`);
    transcript.push({ sent: message });
    child.stdin!.write(`${JSON.stringify(message)}\n`);
  };

  const closeOnce = async () => {
    if (!exitInfo) {
      child.stdin!.end(); // app-server exits on EOF
      if (!(await within(exited, 2000))) {
        killGroup(pid, 'SIGTERM');
        if (!(await within(exited, 2000))) killGroup(pid, 'SIGKILL');
      }
      await exited; // reaped
    }
    // Whatever the leader left in its group (a shell it started) goes too.
    killGroup(pid, 'SIGKILL');
  };

  const handle: CodexHandle = {
    pid,
    codexHome,
    threadParams,
    messages,
    transcript,
    exited,
    request<T>(method: string, params?: unknown): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no answer to ${method} within ${timeoutMs} ms${context()}`));
        }, timeoutMs);
        pending.set(id, {
          method,
          resolve: (v) => (clearTimeout(timer), resolve(v as T)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        try {
          write(params === undefined ? { id, method } : { id, method, params });
        } catch (e) {
          pending.delete(id);
          clearTimeout(timer);
          reject(e as Error);
        }
      });
    },
    notify(method, params) {
      write(params === undefined ? { method } : { method, params });
    },
    respond(id, result) {
      write({ id, result });
    },
    respondError(id, error) {
      write({ id, error });
    },
    onMessage(listener) {
      listeners.push(listener);
    },
    waitFor(predicate, opts = {}) {
      const from = opts.from ?? 0;
      const what = opts.what ?? 'a matching message';
      const wait = opts.timeoutMs ?? timeoutMs;
      const found = messages.slice(from).find(predicate);
      if (found) return Promise.resolve(found);
      if (exitInfo) return Promise.reject(new Error(`codex app-server has exited; no ${what}${context()}`));
      return new Promise<RpcMessage>((resolve, reject) => {
        const remove = () => {
          clearTimeout(timer);
          const i = waiters.indexOf(waiter);
          if (i >= 0) waiters.splice(i, 1);
        };
        const waiter: Waiter = { predicate, from, what, done: (m) => (remove(), resolve(m)), fail: (e) => (remove(), reject(e)) };
        const timer = setTimeout(() => waiter.fail(new Error(`timed out after ${wait} ms waiting for ${what}${context()}`)), wait);
        waiters.push(waiter);
      });
    },
    stderr: () => stderr,
    close() {
      closing ??= closeOnce();
      return closing;
    },
  };
  return handle;
}

/** True when `promise` settles within `ms` (the timer does not outlive it). */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// One scenario, recorded.

export interface ThreadStartResult {
  thread: { id: string };
}
export interface TurnStartResult {
  turn: { id: string };
}

export interface CodexRecording {
  /** Normalised transcript, one JSON line per message (see harness-normalize.ts). */
  lines: string[];
  /** The same, not normalised. */
  raw: TranscriptEntry[];
  /** Every message received, in order. */
  messages: RpcMessage[];
  /** The native thread id (thread/start result). */
  threadId: string;
  /** turn/completed notification of each prompt, in order. */
  turnsCompleted: RpcMessage[];
  /** Server requests that were not approvals (answered with a JSON-RPC error). */
  unexpectedRequests: RpcMessage[];
  /** The fake model's request log. */
  requests: RequestLogEntry[];
  /** Every regular file in the work dir after the run, by path relative to it. */
  files: Record<string, string>;
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  ms: number;
}

const APPROVAL_METHODS = new Set(['item/commandExecution/requestApproval', 'item/fileChange/requestApproval']);
const LEGACY_APPROVAL_METHODS = new Set(['execCommandApproval', 'applyPatchApproval']);

/**
 * Runs one harness scenario through a fresh sandbox, fake model and app-server, and cleans all up.
 * `decision`: how approval requests are answered (v2: accept / decline; the legacy v1 requests, never
 * seen on the v2 thread API: approved / {denied: {rejection}}).
 */
export async function recordCodex(scenario: HarnessScenario, options: { decision?: 'accept' | 'decline'; model?: string } = {}): Promise<CodexRecording> {
  const started = Date.now();
  const decision = options.decision ?? 'accept';
  const sandbox = makeSandbox('codex');
  const fake = await startFakeModel({ scenario: scenario.model });
  let codex: CodexHandle | undefined;
  try {
    codex = await startCodex({ fake, sandbox, approvals: scenario.askPermission ? 'ask' : 'bypass', ...(options.model ? { model: options.model } : {}) });
    const h = codex;
    const unexpectedRequests: RpcMessage[] = [];
    // Server requests are answered the moment they arrive, so the answer's place in the
    // transcript (right after the request) does not depend on timing.
    h.onMessage((m) => {
      if (m.method === undefined || m.id === undefined) return;
      if (APPROVAL_METHODS.has(m.method)) h.respond(m.id, { decision });
      else if (LEGACY_APPROVAL_METHODS.has(m.method)) h.respond(m.id, { decision: decision === 'accept' ? 'approved' : { denied: { rejection: 'declined by the test harness' } } });
      else {
        unexpectedRequests.push(m);
        h.respondError(m.id, { code: -32601, message: `the test harness does not handle ${m.method}` });
      }
    });

    await h.request('initialize', { clientInfo: CLIENT_INFO, capabilities: null });
    h.notify('initialized');
    const start = await h.request<ThreadStartResult>('thread/start', h.threadParams);
    const threadId = start.thread.id;
    // thread/started follows the thread/start response; waiting for it before the first
    // turn/start keeps its place in the transcript fixed.
    await h.waitFor((m) => m.method === 'thread/started' && threadOf(m) === threadId, { what: 'thread/started' });

    const turnsCompleted: RpcMessage[] = [];
    for (const text of scenario.prompts) {
      const from = h.messages.length;
      const turn = await h.request<TurnStartResult>('turn/start', { threadId, input: [{ type: 'text', text, text_elements: [] }] });
      const turnId = turn.turn.id;
      turnsCompleted.push(
        await h.waitFor((m) => m.method === 'turn/completed' && (m.params as { turn?: { id?: string } } | undefined)?.turn?.id === turnId, {
          from,
          what: `turn/completed of turn ${turnsCompleted.length + 1} ('${text}')`,
        }),
      );
    }
    // What arrived up to the last turn/completed is the transcript; the close itself is not.
    const raw = [...h.transcript];
    await h.close();
    const exit = await h.exited;
    return {
      lines: normalizeCodexTranscript(raw, { sandbox, port: fake.port }),
      raw,
      messages: [...h.messages],
      threadId,
      turnsCompleted,
      unexpectedRequests,
      requests: fake.requests,
      files: readFiles(sandbox.work),
      stderr: h.stderr(),
      exit,
      ms: Date.now() - started,
    };
  } finally {
    await codex?.close();
    await fake.close();
    sandbox.cleanup();
  }
}

function threadOf(m: RpcMessage): string | undefined {
  return (m.params as { thread?: { id?: string } } | undefined)?.thread?.id;
}

function readFiles(dir: string, root = dir, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) readFiles(path, root, out);
    else if (st.isFile()) out[relative(root, path)] = readFileSync(path, 'utf8');
  }
  return out;
}
