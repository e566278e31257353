// Each driver's live session is an object whose state a test can read (issue 27: drivers with
// visible state). These start the session against a stand-in process (the mock program, the ACP
// test agent, a fake `codex app-server`, the Amp stand-in) and read the state at a known point.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSink, ProcessExit, StartOptions } from '../../src/agents/types.js';
import { MockSession } from '../../src/agents/mock/session.js';
import { AcpSession } from '../../src/agents/acp/session.js';
import { ClaudeSession } from '../../src/agents/claude/session.js';
import { CodexSession } from '../../src/agents/codex/session.js';
import { AmpSession } from '../../src/agents/amp/session.js';
import { OpencodeSession } from '../../src/agents/opencode/session.js';
import type { ServerListener } from '../../src/agents/opencode/shared-server.js';
import { SessionGrants } from '../../src/agents/opencode/grants.js';
import type { ChildExit } from '../../src/process/spawn.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../support/helpers.js';

const limits = { maxLineChars: 1 << 20, killGraceMs: 500, startTimeoutMs: 10_000, stderrHeadLines: 20, stderrTailLines: 50 };
const logger = { debug() {}, info() {}, warn() {} };

function recordingSink(): AgentSink & { messages: unknown[]; exits: ProcessExit[] } {
  const messages: unknown[] = [];
  const exits: ProcessExit[] = [];
  return { messages, exits, native: (m) => void messages.push(m), exit: (e) => void exits.push(e) };
}

const startOptions = (extra: Partial<StartOptions> = {}): StartOptions => ({
  sessionId: 'ses_test',
  cwd: process.cwd(),
  env: {},
  agentMode: 'default',
  permissionMode: 'default',
  logger,
  ...extra,
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
});

describe('MockSession', () => {
  it('is ready with a running child once the program said ready, and reaped after terminate', async () => {
    const sink = recordingSink();
    const session = await MockSession.start(startOptions(), sink, limits);
    cleanups.push(() => session.terminate());
    expect(session.ready).toBe(true);
    expect(session.child.running).toBe(true);
    expect(session.pid).toBe(session.child.pid);
    await session.terminate();
    expect(session.child.running).toBe(false);
    await waitFor(() => sink.exits.length === 1);
    expect(sink.exits[0]).toMatchObject({ requested: true });
  });
});

describe('AcpSession', () => {
  const AGENT = new URL('../support/acp-test-agent.mjs', import.meta.url).pathname;
  const deps = {
    definition: { id: 'defined', title: 'Test agent', args: [AGENT] },
    limits,
    locate: async () => process.execPath,
    learn: () => {},
  };

  it('holds the opened sessionId, then a pending permission request until it is answered', async () => {
    const sink = recordingSink();
    const session = await AcpSession.start(startOptions(), sink, deps);
    cleanups.push(() => session.terminate());
    expect(session).toMatchObject({ ready: true, replaying: false, loaded: false });
    expect(session.sessionId).toEqual(expect.any(String));
    expect(session.pending.size).toBe(0);
    await session.send({ message: 'permission', attachments: [] });
    await waitFor(() => session.pending.size === 1, 5_000, 'a pending permission request');
    const [id] = session.pending.keys();
    await session.replyPermission(id!, 'once');
    expect(session.pending.size).toBe(0);
    await session.terminate();
    expect(session.proc.running).toBe(false);
  });

  it('fails the start with the agent_start_failed wording when the agent exits first', async () => {
    const failing = { ...deps, definition: { ...deps.definition, args: ['-e', 'console.error("no such flag"); process.exit(2)'] } };
    await expect(AcpSession.start(startOptions(), recordingSink(), failing)).rejects.toMatchObject({
      code: 'agent_start_failed',
      detail: 'Test agent exited with code 2 before it was ready. stderr: no such flag',
    });
  });
});

describe('ClaudeSession', () => {
  // A stand-in for `claude -p` (stream-json): prints a line before it answers initialize (held back
  // until then), answers it as told by argv[1], and asks a can_use_tool permission on each user line.
  const FAKE_CLAUDE = `
    const answer = process.argv[1];
    const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
    require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.type === 'control_request' && m.request.subtype === 'initialize') {
        out({ type: 'system', subtype: 'early' });
        out({ type: 'control_response', response: answer === 'ok' ? { subtype: 'success', request_id: m.request_id, response: {} } : { subtype: 'error', request_id: m.request_id, error: 'nope' } });
      } else if (m.type === 'user') {
        out({ type: 'control_request', request_id: 'req-1', request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' } });
      }
    });`;

  it('delivers the held lines once initialized, and keeps a can_use_tool request pending until answered', async () => {
    const sink = recordingSink();
    const session = await ClaudeSession.start(startOptions(), sink, limits, process.execPath, ['-e', FAKE_CLAUDE, 'ok']);
    cleanups.push(() => session.terminate());
    expect(session.initialized).toBe(true);
    expect(session.held).toBeUndefined();
    expect(sink.messages.map((m) => (m as { type: string }).type)).toEqual(['system', 'control_response']);
    await session.send({ message: 'hi', attachments: [] });
    await waitFor(() => session.pending.size === 1, 5_000, 'a pending can_use_tool request');
    expect(session.pending.get('req-1')?.request.tool_use_id).toBe('toolu_1');
    await session.replyPermission('toolu_1', 'once');
    expect(session.pending.size).toBe(0);
    await session.terminate();
    expect(session.child?.running).toBe(false);
  });

  it('fails the start when initialize is refused, and kills the process', async () => {
    const sink = recordingSink();
    await expect(ClaudeSession.start(startOptions(), sink, limits, process.execPath, ['-e', FAKE_CLAUDE, 'no'])).rejects.toMatchObject({
      code: 'agent_start_failed',
      detail: 'Claude Code refused initialize: nope.',
    });
    expect(sink.messages).toEqual([]); // the held lines never reach a session that did not start
  });
});

describe('CodexSession', () => {
  // A stand-in for `codex app-server` (one JSON object per line, no "jsonrpc"): starts thread
  // thr_1 on model gpt-test; a turn announces turn_1, asks a command approval (server request id 0)
  // and answers turn/start; turn/interrupt completes the turn.
  const FAKE_CODEX = `
    const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
    require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
      const m = JSON.parse(line);
      if (m.method === 'initialize') out({ id: m.id, result: { userAgent: 'fake' } });
      else if (m.method === 'thread/start') out({ id: m.id, result: { thread: { id: 'thr_1' }, model: 'gpt-test' } });
      else if (m.method === 'turn/start') {
        out({ method: 'turn/started', params: { threadId: 'thr_1', turn: { id: 'turn_1' } } });
        out({ id: 0, method: 'item/commandExecution/requestApproval', params: { threadId: 'thr_1', turnId: 'turn_1', itemId: 'item_1' } });
        out({ id: m.id, result: { turn: { id: 'turn_1' } } });
      } else if (m.method === 'turn/interrupt') {
        out({ id: m.id, result: {} });
        out({ method: 'turn/completed', params: { threadId: 'thr_1', turn: { id: 'turn_1' } } });
      }
    });`;
  const launch = { executable: process.execPath, args: ['-e', FAKE_CODEX], clientInfo: { name: 'test' }, thread: { cwd: process.cwd() } };

  it('knows its thread, the running turn and the pending approval, and forgets the turn when it completes', async () => {
    const sink = recordingSink();
    const session = await CodexSession.start(startOptions(), sink, limits, launch);
    cleanups.push(() => session.terminate());
    expect(session).toMatchObject({ threadId: 'thr_1', threadModel: 'gpt-test', turnId: undefined });
    expect(session.mcp.done()).toBe(true);
    await session.send({ message: 'hi', attachments: [] });
    expect(session.turnId).toBe('turn_1');
    await waitFor(() => session.pending.size === 1, 5_000, 'a pending approval');
    await session.replyPermission('item_1', 'once');
    expect(session.pending.size).toBe(0);
    await session.interrupt();
    await waitFor(() => session.turnId === undefined, 5_000, 'the turn to complete');
    await session.terminate();
    expect(session.proc.running).toBe(false);
  });

  it('fails the start naming the error answer and the stderr head, and kills the server', async () => {
    const refusing = `
      require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
        const m = JSON.parse(line);
        process.stderr.write('codex: bad config\\n');
        process.stdout.write(JSON.stringify({ id: m.id, error: { code: -32600, message: 'not today' } }) + '\\n');
      });`;
    await expect(CodexSession.start(startOptions(), recordingSink(), limits, { ...launch, args: ['-e', refusing] })).rejects.toMatchObject({
      code: 'agent_start_failed',
      detail: 'Codex did not start a thread: not today. stderr: codex: bad config',
    });
  });
});

describe('AmpSession', () => {
  // The Amp stand-in (test/support/amp-standin): one process per turn, threads kept in $AMP_STANDIN_HOME.
  const STANDIN = new URL('../support/amp-standin/amp', import.meta.url).pathname;

  it('learns its thread from the first turn, forgets the turn when its process exits, and ends on terminate', async () => {
    const home = mkdtempSync(join(tmpdir(), 'agentwire-amp-state-'));
    cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
    const sink = recordingSink();
    const env = { AMP_STANDIN_HOME: home, PATH: process.env.PATH ?? '' };
    const session = await AmpSession.start(startOptions({ env }), sink, limits, { executable: STANDIN, apiKey: 'k', mode: 'medium' });
    cleanups.push(() => session.terminate());
    expect(session).toMatchObject({ thread: null, turn: undefined, ended: false, terminating: false });
    expect(existsSync(session.dir)).toBe(true);
    await session.send({ message: 'hello', attachments: [] });
    expect(session.turn?.child.pid).toBe(session.pid);
    await waitFor(() => session.turn === undefined, 10_000, 'the turn to exit');
    expect(session.thread).toMatch(/^T-/);
    expect(sink.messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
    expect(session.ended).toBe(false);
    await session.terminate();
    expect(session).toMatchObject({ ended: true, terminating: true });
    expect(existsSync(session.dir)).toBe(false);
    expect(sink.exits).toEqual([expect.objectContaining({ requested: true })]);
  });
});

describe('OpencodeSession', () => {
  // A stand-in for an `opencode serve` lease: a loopback HTTP server answering POST /session and
  // recording the calls, and a listener the test feeds the server's events through.
  async function fakeLease() {
    const calls: string[] = [];
    const http = createServer((req, res) => {
      calls.push(`${req.method} ${req.url?.split('?')[0]}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url?.startsWith('/session?') ? { id: 'ses_1' } : true));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => http.close(r)));
    let listener: ServerListener | undefined;
    let released = 0;
    const lease = {
      url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      pid: 4242,
      shared: false,
      attach: (l: ServerListener) => void (listener = l),
      release: async () => void released++,
    };
    return { lease, calls, event: (e: unknown) => listener!.event(e), exit: (e: ChildExit, lost: boolean) => listener!.exit(e, lost), released: () => released };
  }

  it('holds events until POST /session names it, is ready once its session.created arrived, and routes by id', async () => {
    const fake = await fakeLease();
    const sink = recordingSink();
    fake.lease.attach = ((attach) => (l: ServerListener) => {
      attach(l);
      // Before the POST /session answer: kept in `early` (ours, and a bootstrap event), not delivered.
      l.event({ type: 'server.connected', properties: {} });
    })(fake.lease.attach);
    const starting = OpencodeSession.start(startOptions(), sink, fake.lease, false, 5_000);
    await waitFor(() => fake.calls.includes('POST /session'), 5_000, 'POST /session');
    fake.event({ type: 'session.created', properties: { sessionID: 'ses_1', info: { id: 'ses_1' } } });
    const session = await starting;
    expect(session).toMatchObject({ sessionId: 'ses_1', ready: true, ended: false, early: [], grants: undefined });
    expect(sink.messages.map((m) => (m as { type: string }).type)).toEqual(['server.connected', 'session.created']);
    fake.event({ type: 'message.updated', properties: { info: { sessionID: 'ses_other' } } });
    expect(sink.messages).toHaveLength(2);
    expect(session.router?.accepts({ type: 'message.updated', properties: { info: { sessionID: 'ses_1' } } })).toBe(true);
    await session.terminate();
    expect(session.ended).toBe(true);
    expect(fake.released()).toBe(1);
    expect(sink.exits).toEqual([expect.objectContaining({ requested: true })]);
  });

  it('keeps its own grants on a shared server, and fails the start when the server exits first', async () => {
    const shared = await fakeLease();
    const starting = OpencodeSession.start(startOptions(), recordingSink(), shared.lease, true, 5_000);
    await waitFor(() => shared.calls.includes('POST /session'), 5_000, 'POST /session');
    shared.event({ type: 'session.created', properties: { sessionID: 'ses_1', info: { id: 'ses_1' } } });
    const session = await starting;
    expect(session.grants).toBeInstanceOf(SessionGrants);
    await session.terminate();

    const dying = await fakeLease();
    const failing = OpencodeSession.start(startOptions(), recordingSink(), dying.lease, false, 5_000);
    await waitFor(() => dying.calls.includes('POST /session'), 5_000, 'POST /session');
    dying.exit({ exitCode: 1, signal: null, stderr: { truncated: false }, killed: false }, false);
    await expect(failing).rejects.toMatchObject({ code: 'agent_start_failed', detail: 'OpenCode did not start a session: the server exited (code 1)' });
    expect(dying.released()).toBe(1);
  });
});
