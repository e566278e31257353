// OpenCode (the pinned opencode-ai) run the way the OpenCode adapter will run it: `opencode serve
// --hostname 127.0.0.1 --port <free port>`, one server process per session, driven over its HTTP
// API, its events read from the SSE stream `GET /event`, against the fake model on 127.0.0.1.
//
//   startOpencode({fake, sandbox, askPermission})  spawns the server (own process group) with
//                      OPENCODE_CONFIG pointing at a config for the fake provider, waits until it
//                      listens, subscribes to /event; a handle to call its API and read its events.
//   recordOpencode(scenario)  the whole flow for one harness scenario: POST /session, one
//                      POST /session/:id/prompt_async per prompt, each read until session.idle,
//                      permission requests answered ("once"); returns the normalised transcript.
//
// API facts (1.18.33) are in test/agents/opencode/fixtures/recorded/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { testAgentExecutable } from '../../support/test-agents.js';
import { PINNED_AGENTS } from '../../../src/agents/versions.js';
import { startFakeModel, type FakeModel, type RequestLogEntry } from '../../fake-model/server.js';
import { normalizeOpencodeTranscript, type TranscriptEntry } from './harness-normalize.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import type { HarnessScenario } from '../../support/scenarios.js';

/** One event from GET /event: `{id: 'evt_…', type, properties}`. */
export interface OpencodeEvent {
  id?: string;
  type: string;
  properties: Record<string, any>;
  [key: string]: unknown;
}

export interface HttpReply {
  status: number;
  /** The parsed JSON body; the raw text when it is not JSON; null when empty (204). */
  json: any;
}

export interface OpencodeOptions {
  fake: FakeModel;
  sandbox: Sandbox;
  /** Writes (the edit permission: write, edit, patch) ask first: permission.asked reaches the client. */
  askPermission?: boolean;
  /** Longest wait of startup, http() and waitFor() (default 30 s). */
  timeoutMs?: number;
}

export interface OpencodeHandle {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The config file OPENCODE_CONFIG names (outside the work dir). */
  readonly configPath: string;
  /** Calls the server's API; a JSON body is sent as application/json. */
  http(method: string, path: string, body?: unknown): Promise<HttpReply>;
  /** Every SSE event's data, parsed, in arrival order. */
  readonly events: OpencodeEvent[];
  /** SSE events and our HTTP calls, in order (a call's $response right after its $sent). */
  readonly transcript: TranscriptEntry[];
  /** The first event at index `from` (default 0) or later matching `predicate`; rejects on timeout or exit. */
  waitFor(predicate: (event: OpencodeEvent) => boolean, options?: { from?: number; what?: string; timeoutMs?: number }): Promise<OpencodeEvent>;
  stderr(): string;
  /** Resolves when the process has exited and been reaped. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Closes the event stream, then SIGTERM and SIGKILL to the whole process group; resolves once reaped. */
  close(): Promise<void>;
}

const STDERR_KEEP = 64 * 1024;
const LISTENING = /opencode server listening on (http:\/\/[^\s]+)/;
export const FAKE_PROVIDER = 'fake';
export const FAKE_MODEL = 'fake-model';

/** The installed pinned executable, or an error that says how to install it. */
export async function opencodeExecutable(): Promise<string> {
  return testAgentExecutable('opencode');
}

/**
 * The config OPENCODE_CONFIG points at: one provider, the fake model through the bundled
 * @ai-sdk/openai-compatible, as both model and small_model (titles and summaries go to the fake
 * too); no autoupdate or sharing; writes asking or not.
 */
export function opencodeConfig(fake: FakeModel, askPermission = false): Record<string, unknown> {
  return {
    provider: {
      [FAKE_PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake model',
        options: { baseURL: `${fake.url}/v1`, apiKey: 'sk-fake' },
        models: { [FAKE_MODEL]: { name: 'Fake model' } },
      },
    },
    model: `${FAKE_PROVIDER}/${FAKE_MODEL}`,
    small_model: `${FAKE_PROVIDER}/${FAKE_MODEL}`,
    autoupdate: false,
    share: 'disabled',
    permission: { edit: askPermission ? 'ask' : 'allow', bash: 'allow' },
  };
}

/** The global config dir, ~/.config/opencode (XDG). */
export const configDir = (sandbox: Sandbox) => join(sandbox.env.XDG_CONFIG_HOME ?? join(sandbox.home, '.config'), 'opencode');

/**
 * Once its instance is up, OpenCode installs `@opencode-ai/plugin@<its version>` into every config
 * dir that is writable (here ~/.config/opencode) with an in-process npm (Arborist) from the npm
 * registry, in the background, unless that dir has a node_modules and a package-lock.json listing
 * everything package.json (plus that package) depends on. Seeded so, it installs nothing and never
 * reaches the registry. (Unseeded it did, from this sandbox: ~60 requests to registry.npmjs.org;
 * and while Arborist runs, its signal handlers keep SIGTERM from ending the server.)
 */
export function seedConfigDir(sandbox: Sandbox): void {
  const dir = configDir(sandbox);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const dependencies = { '@opencode-ai/plugin': PINNED_AGENTS.opencode.version };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  const lock = { name: 'opencode', lockfileVersion: 3, requires: true, packages: { '': { dependencies } } };
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
}

/** The environment an e2e session of OpenCode runs with, offline: `configPath` its config. */
export function sessionEnv(sandbox: Sandbox, configPath: string): Record<string, string> {
  return { ...sandbox.env, OPENCODE_CONFIG: configPath, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', npm_config_offline: 'true' };
}

/** An e2e session's environment with the fake model's config written into the sandbox (agentE2E's `env`). */
export function e2eEnv(sandbox: Sandbox, fake: FakeModel): Record<string, string> {
  seedConfigDir(sandbox);
  const configPath = join(sandbox.root, 'opencode.json');
  writeFileSync(configPath, JSON.stringify(opencodeConfig(fake)));
  return sessionEnv(sandbox, configPath);
}

/** A port nobody listens on right now (the OS's pick; opencode's `--port 0` means 4096 first). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startOpencode(options: OpencodeOptions): Promise<OpencodeHandle> {
  const { fake, sandbox } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const executable = await opencodeExecutable();
  const configPath = join(sandbox.root, 'opencode.json');
  writeFileSync(configPath, `${JSON.stringify(opencodeConfig(fake, options.askPermission), null, 2)}\n`);
  seedConfigDir(sandbox);
  const env: Record<string, string> = {
    ...sandbox.env,
    OPENCODE_CONFIG: configPath,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    // Should the seeded config dir stop satisfying it: npm (in-process) may use its cache only.
    npm_config_offline: 'true',
  };

  // A port can be taken between freePort() and the server's listen: then it exits, and we try another.
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(executable, ['serve', '--hostname', '127.0.0.1', '--port', String(port)], {
      cwd: sandbox.work,
      env,
      detached: true, // own process group, killed as a whole
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      return await connect(child, port, configPath, timeoutMs);
    } catch (error) {
      lastError = error as Error;
      await killGroup(child);
    }
  }
  throw lastError ?? new Error('opencode serve did not start');
}

async function connect(child: ChildProcess, port: number, configPath: string, timeoutMs: number): Promise<OpencodeHandle> {
  let stderr = '';
  let stdout = '';
  const keep = (text: string, chunk: Buffer) => (text + chunk.toString('utf8')).slice(-STDERR_KEEP);
  child.stderr?.on('data', (chunk: Buffer) => (stderr = keep(stderr, chunk)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null })); // spawn failed
  });
  let exitedNow: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void exited.then((status) => (exitedNow = status));
  const describeExit = () => `opencode serve exited (code ${exitedNow?.code}, signal ${exitedNow?.signal}); stderr:\n${stderr.slice(-4000)}`;

  // Wait for the line saying it listens: a connection made before that (the socket is already
  // bound) is accepted but never answered, not even after the server is up.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`opencode serve did not say it listens within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout = (stdout + chunk.toString('utf8')).slice(-STDERR_KEEP);
      const match = LISTENING.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(describeExit()));
    });
  });
  if (url !== `http://127.0.0.1:${port}`) throw new Error(`opencode serve listens on ${url}, not on port ${port}`);

  const events: OpencodeEvent[] = [];
  const transcript: TranscriptEntry[] = [];
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  const stream = new AbortController();

  const http = async (method: string, path: string, body?: unknown): Promise<HttpReply> => {
    transcript.push({ $sent: body === undefined ? { method, path } : { method, path, body } });
    // The response is placed right after the call, where it was made, not where it arrived: the
    // events a call sets off are published from other fibers than its response, so they race.
    const slot: { $response: { status: number; body: unknown } } = { $response: { status: 0, body: null } };
    transcript.push(slot);
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let json: unknown = null;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
    }
    slot.$response = { status: response.status, body: json };
    return { status: response.status, json };
  };

  // Subscribe before anything else happens; the stream opens with server.connected.
  const sse = await fetch(`${url}/event`, { signal: stream.signal, headers: { accept: 'text/event-stream' } });
  if (sse.status !== 200 || !sse.body) throw new Error(`GET /event answered ${sse.status}`);
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).replace(/^ /, ''))
            .join('\n');
          if (!data) continue;
          let event: OpencodeEvent;
          try {
            event = JSON.parse(data) as OpencodeEvent;
          } catch {
            event = { type: '$unparsed', properties: { data } };
          }
          events.push(event);
          transcript.push(event);
        }
        wake();
      }
    } catch {
      // aborted by close(), or the server went away
    }
    wake();
  })();

  const handle: OpencodeHandle = {
    url,
    port,
    pid: child.pid as number,
    configPath,
    http,
    events,
    transcript,
    stderr: () => stderr,
    exited,
    waitFor(predicate, opts = {}) {
      let from = opts.from ?? 0;
      const what = opts.what ?? 'an event';
      const limit = opts.timeoutMs ?? timeoutMs;
      return new Promise<OpencodeEvent>((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        const check = () => {
          for (; from < events.length; from++) {
            const event = events[from] as OpencodeEvent;
            if (predicate(event)) return done(() => resolve(event));
          }
          if (exitedNow) done(() => reject(new Error(`waiting for ${what}: ${describeExit()}`)));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`timed out after ${limit} ms waiting for ${what}; last events: ${events.slice(-5).map((e) => e.type).join(', ')}; stderr: ${stderr.slice(-1000)}`))),
          limit,
        );
        waiters.add(check);
        void exited.then(() => check());
        check();
      });
    },
    async close() {
      stream.abort();
      await reading;
      await killGroup(child);
    },
  };
  await handle.waitFor((e) => e.type === 'server.connected', { what: 'server.connected' });
  return handle;
}

/** SIGTERM to the process group, SIGKILL after 3 s, SIGKILL again for stragglers; resolves once reaped. */
async function killGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // the group is gone
    }
  };
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
  signal('SIGKILL'); // anything the server started in its group and left behind
}

// ---------------------------------------------------------------------------------------------
// Recording one scenario

export interface OpencodeRun {
  scenario: HarnessScenario;
  /** The normalised transcript, one JSON document a line. */
  lines: string[];
  /** The raw transcript (SSE events and our calls), as recorded. */
  transcript: TranscriptEntry[];
  events: OpencodeEvent[];
  sessionID: string;
  /** Every request the fake model received. */
  requests: RequestLogEntry[];
  /** Files in the work dir after the run (path relative to it -> content). */
  files: Record<string, string>;
  /** Traces of a package install in the sandbox home (node_modules of the config dir, ~/.npm, ~/.bun): none expected. */
  npmWork: string[];
  /** The server's process group id, for checking that nothing of it outlived close(). */
  pgid: number;
  /** How the server ended on close() (SIGTERM to its group), and how long that took. */
  exit: { code: number | null; signal: NodeJS.Signals | null; closeMs: number };
  stderr: string;
  seconds: number;
}

export interface RecordOptions {
  /** How to answer permission.asked (default 'once'). */
  reply?: 'once' | 'always' | 'reject';
}

/** Runs one harness scenario against a fresh server and fake model; everything is cleaned up after. */
export async function recordOpencode(scenario: HarnessScenario, options: RecordOptions = {}): Promise<OpencodeRun> {
  const started = Date.now();
  const fake = await startFakeModel({ scenario: scenario.model });
  const sandbox = makeSandbox('opencode');
  let oc: OpencodeHandle | undefined;
  try {
    oc = await startOpencode({ fake, sandbox, askPermission: scenario.askPermission });
    const created = await oc.http('POST', '/session', {});
    if (created.status !== 200 || typeof created.json?.id !== 'string') throw new Error(`POST /session answered ${created.status}: ${JSON.stringify(created.json)}`);
    const sessionID: string = created.json.id;
    const placeholderTitle: string = created.json.title;
    const mine = (e: OpencodeEvent) => e.properties?.sessionID === sessionID;
    // The stream position of each call must not depend on timing: wait for what the previous
    // step publishes before making the next call.
    await oc.waitFor((e) => e.type === 'session.created' && mine(e), { what: 'session.created' });
    for (const [index, text] of scenario.prompts.entries()) {
      const from = oc.events.length;
      const sent = await oc.http('POST', `/session/${sessionID}/prompt_async`, { parts: [{ type: 'text', text }] });
      if (sent.status !== 204) throw new Error(`prompt_async answered ${sent.status}: ${JSON.stringify(sent.json)}`);
      await runTurn(oc, sessionID, from, options.reply ?? 'once', { what: `turn ${index + 1}`, placeholderTitle: index === 0 ? placeholderTitle : undefined });
    }
    const events = [...oc.events];
    const transcript = [...oc.transcript];
    const files = readTree(sandbox.work);
    const npmWork = [
      ...readdirSync(join(configDir(sandbox), 'node_modules')).map((name) => `~/.config/opencode/node_modules/${name}`),
      ...['.npm', '.bun'].filter((name) => existsSync(join(sandbox.home, name))).map((name) => `~/${name}`),
    ];
    const pgid = oc.pid;
    const closing = Date.now();
    await oc.close();
    const exit = { ...(await oc.exited), closeMs: Date.now() - closing };
    const stderr = oc.stderr();
    oc = undefined;
    const lines = normalizeOpencodeTranscript(transcript, { sandbox });
    return { scenario, lines, transcript, events, sessionID, requests: [...fake.requests], files, npmWork, pgid, exit, stderr, seconds: (Date.now() - started) / 1000 };
  } finally {
    await oc?.close();
    await fake.close();
    sandbox.cleanup();
  }
}

/**
 * Reads events from `from` until the session is idle, answering permission requests on the way,
 * then waits for what OpenCode still publishes for this prompt from forked fibers (settle()).
 * `placeholderTitle` (the session's title at creation) on the session's first prompt: also wait
 * for the generated title.
 */
export async function runTurn(
  oc: OpencodeHandle,
  sessionID: string,
  from: number,
  reply: 'once' | 'always' | 'reject',
  options: { what?: string; placeholderTitle?: string } = {},
): Promise<void> {
  const what = options.what ?? 'turn';
  const mine = (e: OpencodeEvent) => e.properties?.sessionID === sessionID;
  let cursor = from;
  for (;;) {
    const event = await oc.waitFor((e) => mine(e) && (e.type === 'session.idle' || e.type === 'permission.asked'), {
      from: cursor,
      what: `session.idle of ${what}`,
      timeoutMs: 60_000,
    });
    cursor = oc.events.indexOf(event) + 1;
    if (event.type === 'session.idle') break;
    const answered = await oc.http('POST', `/permission/${event.properties.id}/reply`, { reply });
    if (answered.status !== 200) throw new Error(`permission reply answered ${answered.status}: ${JSON.stringify(answered.json)}`);
  }
  await settle(oc, sessionID, from, options.placeholderTitle, what);
}

/**
 * OpenCode summarises the prompt in a forked fiber when its first step starts and after every
 * finished step (each ends with a message.updated of the user message carrying `summary`), and
 * names the session from the first prompt in another; these may land after session.idle. Waits
 * until there are 1 + (finished steps) summaries since `from`, and the title if asked for, so the
 * next call never races them.
 */
async function settle(oc: OpencodeHandle, sessionID: string, from: number, placeholderTitle: string | undefined, what: string): Promise<void> {
  const since = () => oc.events.slice(from).filter((e) => e.properties?.sessionID === sessionID);
  const steps = since().filter((e) => e.type === 'message.part.updated' && e.properties.part?.type === 'step-finish').length;
  const summaries = () => since().filter((e) => e.type === 'message.updated' && e.properties.info?.role === 'user' && e.properties.info?.summary !== undefined).length;
  const titled = () => placeholderTitle === undefined || oc.events.some((e) => e.type === 'session.updated' && e.properties.info?.id === sessionID && e.properties.info?.title !== placeholderTitle);
  const deadline = Date.now() + 10_000;
  while (summaries() < 1 + steps || !titled()) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: after session.idle, ${summaries()} of ${1 + steps} summaries${titled() ? '' : ' and no title'} within 10 s`);
    }
    await oc.waitFor(() => true, { from: oc.events.length, what: 'the summaries after session.idle', timeoutMs: Math.max(1, deadline - Date.now()) }).catch(() => undefined);
  }
}

function readTree(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) Object.assign(out, readTree(path, base));
    else out[relative(base, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

/** Writes a normalised transcript as a .jsonl file. */
export function writeTranscript(file: string, lines: string[]): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}
