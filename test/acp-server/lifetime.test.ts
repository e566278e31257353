// ACP sessions end when their client is done with them (docs/acp-server.md, "Session lifetime"),
// over the WebSocket with the mock and the official ACP SDK's client: session/close, a normal close
// mid-turn (the turn cancelled, the agent reaped), a cut that is not resumed within the grace
// period, the idle TTL, the keep flag, HTTP sessions left alone; and what else ACP 1 asks of an
// agent: a crash as a JSON-RPC error, permissions that name their tool call, message ids,
// session/resume, `_agentwire/event` only on request; and the "done when": a hundred client runs
// against --max-sessions 5 leave no live session and no agent process.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { WebSocket } from 'ws';
import { expectNoUnparsed, makeApp, waitFor } from '../support/helpers.js';
import { connectWs, type AcpTestClient } from './acp-client.js';
import { alive } from '../support/procs.js';

const TOKEN = 'acp-lifetime-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const IDLE_TTL_MS = 3_000;
const GRACE_MS = 600;
let app: App;
let url: string;
const clients: AcpTestClient[] = [];

beforeAll(async () => {
  app = await makeApp({ config: { token: TOKEN, maxSessions: 5, acpIdleTtlMs: IDLE_TTL_MS, acpReconnectGraceMs: GRACE_MS } });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  url = `ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1/acp?agent=mock`;
});
afterAll(async () => {
  for (const c of clients) c.close();
  await app.app.close();
});

async function events(id: string): Promise<UniversalEvent[]> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?limit=10000`, headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { events: UniversalEvent[] }).events;
}
const status = async (id: string) => ((await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}`, headers: auth })).json() as { status: string }).status;
const agentPid = async (id: string) => Number((await events(id)).find((e) => e.type === 'session.started')?.data.metadata?.pid);

async function connect(events = true): Promise<AcpTestClient> {
  const c = connectWs(url, TOKEN);
  clients.push(c);
  await c.request('initialize', { protocolVersion: 1, clientCapabilities: events ? { _meta: { agentwire: { events: true } } } : {} });
  return c;
}
const newSession = async (c: AcpTestClient, meta?: Record<string, unknown>) =>
  (await c.request<{ sessionId: string }>('session/new', { cwd: process.cwd(), mcpServers: [], ...(meta ? { _meta: { agentwire: meta } } : {}) })).sessionId;
const prompt = (c: AcpTestClient, sessionId: string, text: string) => c.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
const ticks = (c: AcpTestClient) => c.updates.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').length;

/** The session ended, and its agent process with it. */
async function expectEnded(id: string, pid: number): Promise<UniversalEvent[]> {
  await waitFor(async () => (await status(id)) === 'ended', 10_000, `session ${id} to end`);
  await waitFor(() => !alive(pid), 10_000, `agent ${pid} to be reaped`);
  const log = await events(id);
  expectNoUnparsed(log);
  return log;
}

describe('ACP session lifetime (WebSocket, mock agent)', () => {
  it('offers session/close and session/resume; session/close ends a session made over ACP', async () => {
    const c = connectWs(url, TOKEN);
    clients.push(c);
    const init = await c.request<{ agentCapabilities: { sessionCapabilities: Record<string, unknown> } }>('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities.sessionCapabilities).toMatchObject({ close: {}, resume: {}, list: {} });
    const sessionId = await newSession(c);
    expect((await prompt(c, sessionId, 'echo one')).stopReason).toBe('end_turn');
    const pid = await agentPid(sessionId);
    expect(alive(pid)).toBe(true);
    expect(await c.request('session/close', { sessionId })).toEqual({});
    await expectEnded(sessionId, pid);
    // Closed while a prompt waits on a permission: the prompt answers cancelled, the request is withdrawn.
    const waiting = await newSession(c);
    c.answer.permission = () => new Promise<string>(() => {}); // the user never decides
    const running = prompt(c, waiting, 'permission');
    await waitFor(() => c.requests.length === 1, 5000, 'the permission request');
    await c.request('session/close', { sessionId: waiting });
    expect((await running).stopReason).toBe('cancelled');
    await waitFor(() => c.withdrawn.length === 1, 5000, 'the request to be withdrawn');
    await expectEnded(waiting, await agentPid(waiting));
    // An unknown session is ACP's resource-not-found (-32002), which the SDK takes as closed, as ACP recommends.
    expect(await c.request('session/close', { sessionId: 'nope' })).toEqual({});
  });

  it('a client that closes normally mid-turn cancels the turn; the session ends, its agent reaped', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    const running = prompt(c, sessionId, 'slow 100');
    running.catch(() => {}); // its connection goes away
    await waitFor(() => ticks(c) >= 2, 5000, 'two ticks');
    const pid = await agentPid(sessionId);
    c.close(); // a close frame: the client is gone for good
    const log = await expectEnded(sessionId, pid);
    expect(log.find((e) => e.type === 'turn.ended')?.data.metadata.reason).toBe('terminated');
    // The turn did not run to its end (100 ticks, 10 s).
    expect(log.filter((e) => e.type === 'item.delta').length).toBeLessThan(100);
  });

  it('a cut is held for the grace period: resumed within it, nothing ends; not resumed, the session ends', async () => {
    const first = await connect();
    const sessionId = await newSession(first);
    await prompt(first, sessionId, 'echo before the cut');
    first.cut();
    await new Promise((r) => setTimeout(r, GRACE_MS / 3));
    const second = await connect();
    await second.request('session/load', { sessionId, cwd: process.cwd(), mcpServers: [], _meta: { agentwire: { after_sequence: (await events(sessionId)).at(-1)!.sequence } } });
    await new Promise((r) => setTimeout(r, GRACE_MS * 2));
    expect(await status(sessionId)).toBe('idle');
    expect((await prompt(second, sessionId, 'echo after the cut')).stopReason).toBe('end_turn');
    // Cut again, and nobody comes back.
    const pid = await agentPid(sessionId);
    const cutAt = Date.now();
    second.cut();
    await expectEnded(sessionId, pid);
    // The grace period ended it, not the idle TTL (which counts from the last event, just before).
    expect(Date.now() - cutAt).toBeLessThan(IDLE_TTL_MS * 0.8);
  });

  it('a client that leaves while its session/new is still being answered does not leave the session behind', async () => {
    const live = async () => ((await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: auth })).json() as { sessions: { sessionId: string; status: string }[] }).sessions.filter((x) => x.status !== 'ended').map((x) => x.sessionId);
    const before = new Set(await live());
    const ws = new WebSocket(url, { headers: auth });
    await new Promise((resolve) => ws.on('open', resolve));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: process.cwd(), mcpServers: [] } }));
    ws.close(); // before the answer
    const made = await waitFor(async () => {
      const list = (await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: auth })).json() as { sessions: { sessionId: string }[] };
      return list.sessions.find((x) => !before.has(x.sessionId))?.sessionId;
    }, 5000, 'the session to be made');
    // Well before the idle TTL would end it.
    await waitFor(async () => !(await live()).includes(made), IDLE_TTL_MS * 0.6, 'the session to end');
  });

  it('ends a session idle past --acp-idle-ttl, even with its client connected', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    await prompt(c, sessionId, 'echo then nothing');
    const pid = await agentPid(sessionId);
    const start = Date.now();
    await expectEnded(sessionId, pid);
    const took = Date.now() - start;
    expect(took).toBeGreaterThanOrEqual(IDLE_TTL_MS * 0.9);
    expect(took).toBeLessThan(IDLE_TTL_MS * 4);
  });

  it('a kept session outlives its client (until the idle TTL); an HTTP session is never ended by one', async () => {
    const c = await connect();
    const kept = await newSession(c, { keep: true });
    const created = await app.app.inject({ method: 'POST', url: '/v1/sessions/acp-lifetime-http', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ agent: 'mock' }) });
    expect(created.statusCode, created.body).toBe(200);
    await c.request('session/load', { sessionId: 'acp-lifetime-http', cwd: process.cwd(), mcpServers: [] });
    expect((await prompt(c, 'acp-lifetime-http', 'echo from ACP')).stopReason).toBe('end_turn');
    c.close();
    await new Promise((r) => setTimeout(r, 500));
    expect(await status(kept)).toBe('idle');
    expect(await status('acp-lifetime-http')).toBe('idle');
    await expectEnded(kept, await agentPid(kept)); // the idle TTL
    // session/close of a session made over HTTP only stops following it.
    const d = await connect();
    await d.request('session/load', { sessionId: 'acp-lifetime-http', cwd: process.cwd(), mcpServers: [] });
    await d.request('session/close', { sessionId: 'acp-lifetime-http' });
    expect(await status('acp-lifetime-http')).not.toBe('ended');
    await app.app.inject({ method: 'DELETE', url: '/v1/sessions/acp-lifetime-http', headers: auth });
  });

  it('a daemon that stops keeps the ACP sessions of its connected clients for the next one (durable store)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aw-acp-lifetime-'));
    try {
      const first = await makeApp({ config: { token: TOKEN, dataDir } });
      await first.app.listen({ host: '127.0.0.1', port: 0 });
      const c = connectWs(`ws://127.0.0.1:${(first.app.server.address() as AddressInfo).port}/v1/acp?agent=mock`, TOKEN);
      clients.push(c);
      await c.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const sessionId = await newSession(c);
      expect((await prompt(c, sessionId, 'echo before the restart')).stopReason).toBe('end_turn');
      await first.app.close(); // the stop closes the client's socket: not the client going away
      const second = await makeApp({ config: { token: TOKEN, dataDir } });
      try {
        const res = await second.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: auth });
        expect((res.json() as { status: string }).status).toBe('idle');
        const log = ((await second.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/events?limit=10000`, headers: auth })).json() as { events: UniversalEvent[] }).events;
        expect(log.map((e) => e.type)).not.toContain('session.ended');
        expect((await second.app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/messages`, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ message: 'echo after' }) })).statusCode).toBe(204);
      } finally {
        await second.app.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('ACP 1 as the SDK has it stable (WebSocket, mock agent)', () => {
  it('a crash is a JSON-RPC error on session/prompt, never end_turn', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    const error = await prompt(c, sessionId, 'crash').then(
      (result) => ({ result }),
      (err: { code: number; message: string; data: { agentwire: { reason: string } } }) => err,
    );
    expect(error).toMatchObject({ code: -32603, data: { agentwire: { reason: 'error' } } });
    expect((error as { message: string }).message).toMatch(/turn failed/);
    expectNoUnparsed(await events(sessionId));
  });

  it('a turn the budget stopped (its request rejected by the client) is an error too', async () => {
    const c = await connect();
    const sessionId = await newSession(c, { budget: { max_turns: 1 } });
    expect((await prompt(c, sessionId, 'echo one')).stopReason).toBe('end_turn');
    c.answer.permission = () => 'reject';
    await expect(prompt(c, sessionId, 'echo two')).rejects.toMatchObject({ code: -32603, data: { agentwire: { reason: 'budget_exceeded' } } });
    expect(c.requests.map((r) => (r.params as { _meta: { agentwire: { data: { action: string } } } })._meta.agentwire.data.action)).toEqual(['budget']);
    expectNoUnparsed(await events(sessionId));
    await c.request('session/close', { sessionId });
  });

  it("a permission request's toolCallId is the id of the tool call it is for", async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    c.answer.permission = () => 'once';
    expect((await prompt(c, sessionId, 'permission')).stopReason).toBe('end_turn');
    const asked = c.requests.find((r) => r.method === 'session/request_permission')!.params as { toolCall: { toolCallId: string } };
    const calls = c.updates.flatMap((u) => (u.update.sessionUpdate === 'tool_call' ? [u.update.toolCallId] : []));
    expect(calls).toEqual([asked.toolCall.toolCallId]);
    expect(asked.toolCall.toolCallId).not.toMatch(/^perm_/);
    expectNoUnparsed(await events(sessionId));
  });

  it('message ids on chunks; session/resume follows without a replay; _agentwire/event only when asked', async () => {
    const c = await connect(false);
    const sessionId = await newSession(c, { title: 'Lifetime test' });
    await prompt(c, sessionId, 'Answer briefly and include your reasoning.');
    await waitFor(() => c.updates.some((u) => u.update.sessionUpdate === 'session_info_update'), 5000, 'the title');
    expect(c.updates.find((u) => u.update.sessionUpdate === 'session_info_update')?.update).toMatchObject({ title: 'Lifetime test' });
    const chunks = c.updates.flatMap((u) => (u.update.sessionUpdate === 'agent_message_chunk' ? [u.update.messageId] : []));
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks).size).toBe(1);
    expect(chunks[0]).toEqual(expect.any(String));
    expect(c.events).toEqual([]); // this client did not ask for them

    const other = await connect();
    const before = (await events(sessionId)).at(-1)!.sequence;
    const resumed = await other.request<{ _meta: { agentwire: { sequence: number } } }>('session/resume', { sessionId, cwd: process.cwd() });
    expect(resumed._meta.agentwire.sequence).toBe(before);
    expect(other.arrivals).toEqual([]); // no replay
    expect((await prompt(other, sessionId, 'echo resumed')).stopReason).toBe('end_turn');
    expect(Math.min(...other.sequences(sessionId))).toBe(before + 1);
    // It asked for them; the turn.ended notification may follow the prompt's answer by a tick.
    await waitFor(() => other.events.some((e) => e.event.type === 'turn.ended'), 5000, "turn.ended as _agentwire/event");
    await c.request('session/close', { sessionId });
  });

  it('a hundred client runs against --max-sessions 5 all succeed and leave no live session or agent', async () => {
    const pids: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 100; i++) {
      const c = connectWs(url, TOKEN);
      await c.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const sessionId = await newSession(c);
      expect((await prompt(c, sessionId, `echo run ${i}`)).stopReason).toBe('end_turn');
      pids.push(await agentPid(sessionId));
      c.close();
    }
    const ms = Date.now() - started;
    await waitFor(async () => {
      const list = (await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: auth })).json() as { sessions: { status: string }[] };
      return list.sessions.every((s) => s.status === 'ended');
    }, 10_000, 'every session to have ended');
    await waitFor(() => pids.every((pid) => !alive(pid)), 10_000, 'every agent to be reaped');
    console.log(`acp_runs_100_ms=${ms}`);
  }, 120_000);
});
