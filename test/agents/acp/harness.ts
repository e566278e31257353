// The ACP CLIs (Gemini CLI, Qwen Code) run the way their adapters run them: `<cli> --acp`, JSON-RPC
// 2.0 over stdio (one JSON object per line), one process per session, with the arguments and
// environment of the adapter's own definition (src/agents/<agent>/definition.ts), against the fake
// model server on 127.0.0.1.
//
//   recordAcp(cli, scenario)  the whole flow for one harness scenario: initialize, session/new,
//                             session/set_model, one session/prompt per prompt (each read until its
//                             answer), permission requests answered allow_once; the normalised
//                             transcript and what the test checks.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import type { AcpAgentDefinition } from '../../../src/agents/acp/definition.js';
import { testAgentExecutable } from '../../support/test-agents.js';
import { startFakeModel, type FakeModel, type RequestLogEntry, type Scenario } from '../../fake-model/server.js';
import { normalizeAcpTranscript, type AcpEntry } from './harness-normalize.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import type { HarnessScenario } from '../../support/scenarios.js';

export interface RpcMessage {
  jsonrpc?: '2.0';
  id?: number | string;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

/** One ACP CLI as the harness runs it. */
export interface AcpCli {
  agent: 'gemini' | 'qwen';
  definition: AcpAgentDefinition;
  /** The environment that points the CLI at the fake model (credentials included). */
  env(fake: FakeModel): Record<string, string>;
  /** session/set_model after session/new, as the adapter does for a session's `model`. */
  model?: string;
  /** Its write tool takes only absolute paths (Qwen Code): write steps get the work dir prefixed. */
  absolutePaths?: boolean;
  /** Files written into the sandbox's home first (path relative to it → JSON content). */
  homeFiles?: Record<string, unknown>;
  /** Shell steps get SETTLE_SHELL appended (Qwen Code: see there). */
  settleShell?: boolean;
}

/**
 * Qwen Code 0.24.4 runs a shell command without a PTY through child_process and, not streaming
 * it, settles the command on the child's `exit` event, which can come before its stdout has been
 * read: a command that prints and exits at once then reports "Output: (empty)" (seen on Node 24
 * about one try in two on a busy machine; read in its shell service, `exitHandler`). Waiting a
 * moment after the output lets it be read first. Its transcripts are recorded with it.
 */
export const SETTLE_SHELL = '; sleep 0.3';

export interface AcpRecording {
  lines: string[];
  messages: RpcMessage[];
  /** The session/prompt answers, one per prompt. */
  answers: RpcMessage[];
  /** Requests from the CLI other than session/request_permission (answered "method not found"). */
  otherRequests: RpcMessage[];
  requests: RequestLogEntry[];
  files: Record<string, string>;
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null };
}

const TIMEOUT_MS = 90_000;

export async function acpExecutable(agent: AcpCli['agent']): Promise<string> {
  return testAgentExecutable(agent);
}

/** The model's steps as this CLI needs them: write paths absolute, shell commands settled. */
function forCli(cli: AcpCli, model: Scenario, work: string): Scenario {
  return model.map((turn) =>
    turn.map((s) => {
      if (!('tool' in s)) return s;
      if (s.tool === 'write' && cli.absolutePaths) return { ...s, path: join(work, s.path) };
      if (s.tool === 'shell' && cli.settleShell) return { ...s, command: `${s.command}${SETTLE_SHELL}` };
      return s;
    }),
  );
}

export async function recordAcp(cli: AcpCli, scenario: HarnessScenario): Promise<AcpRecording> {
  const sandbox = makeSandbox(cli.agent);
  const fake = await startFakeModel({ scenario: forCli(cli, scenario.model, sandbox.work) });
  for (const [path, content] of Object.entries(cli.homeFiles ?? {})) {
    mkdirSync(dirname(join(sandbox.home, path)), { recursive: true });
    writeFileSync(join(sandbox.home, path), JSON.stringify(content));
  }
  const permissionMode = scenario.askPermission ? 'default' : 'bypass';
  const setup = (await cli.definition.session?.({ permissionMode } as never)) ?? {};
  const child = spawn(await acpExecutable(cli.agent), [...cli.definition.args, ...(setup.args ?? [])], {
    cwd: sandbox.work,
    env: { ...sandbox.env, ...setup.env, ...cli.env(fake) },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const entries: AcpEntry[] = [];
  const messages: RpcMessage[] = [];
  const otherRequests: RpcMessage[] = [];
  const pending = new Map<number, { resolve(m: RpcMessage): void; reject(e: Error): void }>();
  let stderr = '';
  let nextId = 0;
  child.stderr.setEncoding('utf8').on('data', (d: string) => void (stderr = (stderr + d).slice(-64_000)));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
  void exited.then((e) => {
    for (const p of pending.values()) p.reject(new Error(`${cli.agent} exited (${e.signal ?? e.code}); stderr:\n${stderr.slice(-3000)}`));
  });
  const send = (m: RpcMessage) => {
    entries.push({ sent: m });
    child.stdin.write(`${JSON.stringify(m)}\n`);
  };
  const request = (method: string, params: unknown) =>
    new Promise<RpcMessage>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${TIMEOUT_MS} ms; stderr:\n${stderr.slice(-3000)}`)), TIMEOUT_MS);
      pending.set(id, { resolve: (m) => (clearTimeout(timer), resolve(m)), reject });
      send({ jsonrpc: '2.0', id, method, params });
    });
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    let m: RpcMessage;
    try {
      m = JSON.parse(line) as RpcMessage;
    } catch {
      entries.push({ received: { $unparsed: line } });
      return;
    }
    messages.push(m);
    entries.push({ received: m });
    if (m.method === undefined && typeof m.id === 'number') return pending.get(m.id)?.resolve(m);
    if (m.method === 'session/request_permission' && m.id !== undefined) {
      // Answered the moment it arrives, so the answer's place in the transcript is fixed.
      const option = (m.params.options as { optionId: string; kind: string }[]).find((o) => o.kind === 'allow_once');
      send({ jsonrpc: '2.0', id: m.id, result: { outcome: { outcome: 'selected', optionId: option?.optionId } } });
    } else if (m.method !== undefined && m.id !== undefined) {
      otherRequests.push(m);
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    }
  });

  try {
    await request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: 'agentwire', title: 'agentwire', version: '0.0.0' } });
    const created = await request('session/new', { cwd: sandbox.work, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    if (!sessionId) throw new Error(`session/new failed: ${JSON.stringify(created)}; stderr:\n${stderr.slice(-3000)}`);
    if (cli.model) await request('session/set_model', { sessionId, modelId: cli.model });
    const answers: RpcMessage[] = [];
    for (const text of scenario.prompts) answers.push(await request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }));
    const raw = [...entries];
    child.stdin.end();
    const exit = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000))]);
    return {
      lines: normalizeAcpTranscript(raw, { sandbox, port: fake.port }),
      messages,
      answers,
      otherRequests,
      requests: fake.requests,
      files: readFiles(sandbox.work),
      stderr,
      exit: exit ?? { code: null, signal: null },
    };
  } finally {
    killGroup(child.pid);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    await fake.close();
    sandbox.cleanup();
  }
}

function killGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
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

export type { Sandbox };
