// `agentwire acp`, the stdio ACP agent an editor launches, as a process: the built bin bridging to
// a daemon process (test/support/daemon-process.ts), driven by the official ACP SDK's client over
// the bridge's stdin/stdout. A mock turn with a tool call and a permission; the local daemon found
// from its data dir with no flags; a refused token; and a cut between the bridge and the daemon
// mid-turn (a TCP relay the test drops) resumed with the prompt answered and nothing lost or
// duplicated; stdin closed (mid-turn, and ten runs in a row): the sessions end, no agent is left;
// a bridge started before its daemon waits for it, and gives up with one error when none comes.
// One daemon for the file, and one more started late.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../src/schema/events.js';
import { call, cleanEnv, events as daemonEvents, installDir, killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { expectNoUnparsed, waitFor } from '../support/helpers.js';
import { connectStdio, type AcpTestClient } from './acp-client.js';
import { alive } from '../support/procs.js';

let port: number;
let dataDir: string;
let tokenFile: string;
const bridges: ChildProcess[] = [];
const clients: AcpTestClient[] = [];

beforeAll(async () => {
  await setUpInstall();
  dataDir = mkdtempSync(join(tmpdir(), 'agentwire-acp-stdio-'));
  ({ port } = await startDaemon(['--data-dir', dataDir]));
  tokenFile = join(dataDir, 'token');
}, 600_000);
afterAll(() => {
  for (const c of clients) c.close();
  for (const b of bridges) if (b.exitCode === null) b.kill('SIGKILL');
  killDaemons();
  removeInstall();
  rmSync(dataDir, { recursive: true, force: true });
});

function bridge(args: string[], env: Record<string, string> = {}): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [join(installDir(), 'bin/agentwire.js'), 'acp', ...args], { env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  bridges.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { child, stderr: () => stderr };
}

/** The stderr of the bridge start() spawned last. */
let lastStderr = () => '';

/** The bridge start() spawned last. */
let lastChild: ChildProcess | undefined;

/** A bridge and its client; the client asks for `_agentwire/event` (the checks against the log need them). */
async function start(args: string[], env: Record<string, string> = {}, events = true): Promise<AcpTestClient> {
  const { child, stderr } = bridge(args, env);
  lastStderr = stderr;
  lastChild = child;
  const c = connectStdio(child.stdin!, child.stdout!);
  clients.push(c);
  const init = await c.request<{ protocolVersion: number }>('initialize', { protocolVersion: 1, clientCapabilities: events ? { _meta: { agentwire: { events: true } } } : {} });
  expect(init.protocolVersion).toBe(1);
  return c;
}

const textOf = (c: AcpTestClient) =>
  c.updates.flatMap((u) => (u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.type === 'text' ? [u.update.content.text] : [])).join('');
const runs = (seqs: number[]) => seqs.filter((s, i) => i === 0 || seqs[i - 1] !== s);
const prompt = (c: AcpTestClient, sessionId: string, text: string) => c.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });

describe('agentwire acp (stdio bridge to a daemon)', () => {
  it('runs a mock turn with a tool call and a permission over stdio', async () => {
    const c = await start(['--url', `http://127.0.0.1:${port}`, '--token-file', tokenFile, '--agent', 'mock']);
    const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
    c.answer.permission = () => 'once';
    expect((await prompt(c, sessionId, 'permission')).stopReason).toBe('end_turn');
    expect(c.requests.map((r) => r.method)).toEqual(['session/request_permission']);
    expect(c.updates.map((u) => u.update.sessionUpdate)).toEqual(expect.arrayContaining(['tool_call', 'tool_call_update', 'agent_message_chunk']));
    expect(textOf(c)).toContain('Permission granted; wrote notes.txt.');
    const log: UniversalEvent[] = await daemonEvents(port, sessionId);
    await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the last update');
    expect(runs(c.sequences(sessionId))).toEqual(log.map((e) => e.sequence));
    expectNoUnparsed(log);
  });

  it('finds the local daemon and its token from the data dir when given no flags', async () => {
    const c = await start(['--agent', 'mock'], { AGENTWIRE_DATA_DIR: dataDir, AGENTWIRE_PORT: String(port) });
    const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
    expect((await prompt(c, sessionId, 'Reply with exactly the single word pong.')).stopReason).toBe('end_turn');
    expect(textOf(c)).toBe('pong');
    expectNoUnparsed(await daemonEvents(port, sessionId));
  });

  it('exits 1 saying why when the daemon refuses its token', async () => {
    const bad = join(dataDir, 'wrong-token');
    writeFileSync(bad, 'not-the-token-0123456789\n');
    const { child, stderr } = bridge(['--url', `http://127.0.0.1:${port}`, '--token-file', bad]);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr()).toContain('HTTP 401');
  });

  it('reconnects after a cut mid-turn: the prompt is answered, nothing lost or duplicated', async () => {
    const relay = await startRelay();
    try {
      const c = await start(['--url', `http://127.0.0.1:${relay.port}`, '--token-file', tokenFile, '--agent', 'mock']);
      const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
      const running = prompt(c, sessionId, 'slow 25');
      await waitFor(() => textOf(c).includes('tick 3'), 5000, 'three ticks');
      relay.cut();
      expect((await running).stopReason).toBe('end_turn');
      expect(lastStderr()).toContain('the connection to the daemon was cut; reconnecting');
      const log = await daemonEvents(port, sessionId);
      await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the last update');
      expect(runs(c.sequences(sessionId))).toEqual(log.map((e) => e.sequence));
      expect(textOf(c)).toContain('tick 25');
      expectNoUnparsed(log);
    } finally {
      relay.close();
    }
  });

  it('asks again, after a cut, a permission the editor had not answered; the old request is withdrawn', async () => {
    const relay = await startRelay();
    try {
      const c = await start(['--url', `http://127.0.0.1:${relay.port}`, '--token-file', tokenFile, '--agent', 'mock']);
      const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
      // The first request is left unanswered while the connection is cut; the second is allowed.
      c.answer.permission = () => (c.requests.length === 1 ? (relay.cut(), new Promise<string>(() => {})) : 'once');
      expect((await prompt(c, sessionId, 'permission')).stopReason).toBe('end_turn');
      expect(c.requests).toHaveLength(2);
      expect(c.withdrawn).toEqual(['session/request_permission']);
      const log = await daemonEvents(port, sessionId);
      expect(log.filter((e) => e.type === 'permission.resolved').map((e) => e.data.status)).toEqual(['approved']);
      await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the last update');
      expect(runs(c.sequences(sessionId))).toEqual(log.map((e) => e.sequence));
    } finally {
      relay.close();
    }
  });

  it('stdin closed mid-turn: the turn is cancelled, the session ends, its agent is reaped', async () => {
    const c = await start(['--url', `http://127.0.0.1:${port}`, '--token-file', tokenFile, '--agent', 'mock']);
    const child = lastChild!;
    const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
    prompt(c, sessionId, 'slow 100').catch(() => {});
    await waitFor(() => textOf(c).includes('tick 2'), 5000, 'two ticks');
    const pid = await agentPid(sessionId);
    child.stdin!.end();
    expect(await new Promise<number | null>((resolve) => child.on('exit', resolve))).toBe(0);
    await waitFor(async () => ((await call(port, 'GET', `/v1/sessions/${sessionId}`)) as { status: string }).status === 'ended', 10_000, 'the session to end');
    await waitFor(() => !alive(pid), 10_000, 'the agent to be reaped');
    const log = await daemonEvents(port, sessionId);
    expect(log.find((e) => e.type === 'turn.ended')?.data.metadata.reason).toBe('terminated');
    expectNoUnparsed(log);
  });

  it('ten editor runs in a row (initialize, new, one prompt, stdin closed) leave no session or agent', async () => {
    const made: { sessionId: string; pid: number }[] = [];
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      const c = await start(['--url', `http://127.0.0.1:${port}`, '--token-file', tokenFile, '--agent', 'mock'], {}, false);
      const child = lastChild!;
      const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: dataDir, mcpServers: [] });
      expect((await prompt(c, sessionId, `echo run ${i}`)).stopReason).toBe('end_turn');
      expect(c.events).toEqual([]); // it did not ask for _agentwire/event: the bridge keeps them
      made.push({ sessionId, pid: await agentPid(sessionId) });
      child.stdin!.end();
      expect(await new Promise<number | null>((resolve) => child.on('exit', resolve))).toBe(0);
    }
    console.log(`acp_stdio_runs_10_ms=${Date.now() - started}`);
    for (const { sessionId, pid } of made) {
      await waitFor(async () => ((await call(port, 'GET', `/v1/sessions/${sessionId}`)) as { status: string }).status === 'ended', 10_000, `session ${sessionId} to end`);
      await waitFor(() => !alive(pid), 10_000, `agent ${pid} to be reaped`);
    }
  }, 120_000);

  it('started before its daemon, it waits for it: initialize is answered once the daemon is up', async () => {
    const late = await freePort();
    const lateDir = mkdtempSync(join(tmpdir(), 'agentwire-acp-late-'));
    try {
      const lateToken = join(lateDir, 'given-token');
      writeFileSync(lateToken, 'late-daemon-token-0123456789\n');
      const { child, stderr } = bridge(['--url', `http://127.0.0.1:${late}`, '--token-file', lateToken, '--agent', 'mock']);
      const c = connectStdio(child.stdin!, child.stdout!);
      clients.push(c);
      const init = c.request<{ protocolVersion: number }>('initialize', { protocolVersion: 1, clientCapabilities: {} });
      await waitFor(() => stderr().includes('waiting up to 60 s'), 10_000, 'the bridge to say it waits');
      await new Promise((r) => setTimeout(r, 1500));
      await startDaemon(['--port', String(late), '--data-dir', lateDir, '--token-file', lateToken]);
      expect((await init).protocolVersion).toBe(1);
      const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: lateDir, mcpServers: [] });
      expect((await prompt(c, sessionId, 'echo late')).stopReason).toBe('end_turn');
      expect(stderr()).not.toContain('cut');
      expect(stderr().match(/waiting up to/g)).toHaveLength(1);
    } finally {
      rmSync(lateDir, { recursive: true, force: true });
    }
  });

  it('gives up with one clear error when no daemon comes within --wait', async () => {
    const none = await freePort();
    const { child, stderr } = bridge(['--url', `http://127.0.0.1:${none}`, '--token-file', tokenFile, '--wait', '1500ms']);
    const c = connectStdio(child.stdin!, child.stdout!);
    clients.push(c);
    const failed = await c.request('initialize', { protocolVersion: 1, clientCapabilities: {} }).then(
      () => undefined,
      (err: { message: string }) => err,
    );
    expect(failed?.message).toMatch(/No agentwire daemon answered at .* within 2 s/);
    expect(await new Promise<number | null>((resolve) => child.on('exit', resolve))).toBe(1);
    const lines = stderr().trim().split('\n');
    expect(lines).toHaveLength(2); // "waiting up to …", then "… Giving up."
    expect(lines[1]).toMatch(/No agentwire daemon answered .* Giving up\.$/);
  });
});

/** A TCP relay between the bridge and the daemon whose connections the test can drop. */
async function startRelay(): Promise<{ port: number; cut: () => void; close: () => void }> {
  const sockets = new Set<Socket>();
  const relay: Server = createServer((inbound) => {
    const outbound = netConnect(port, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return { port: (relay.address() as { port: number }).port, cut, close: () => (cut(), relay.close()) };
}

async function agentPid(sessionId: string): Promise<number> {
  return Number((await daemonEvents(port, sessionId)).find((e) => e.type === 'session.started')?.data.metadata?.pid);
}


async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}
