// ACP over WebSocket (GET /v1/acp) with the mock agent, driven by the official ACP SDK's client:
// a full turn with tool calls, a permission answered by the client, a question, a cancel,
// session/load replaying exactly the stored events of a session created over HTTP, a session
// started over ACP listed by GET /v1/sessions, a cut mid-turn resumed with nothing lost or
// duplicated, and bad input (unknown method, malformed JSON, no token, a foreign Origin).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { expectNoUnparsed, makeApp, waitFor } from '../support/helpers.js';
import { connectWs, type AcpTestClient } from './acp-client.js';

const TOKEN = 'acp-test-token-0123456789';
let app: App;
let url: string;
const clients: AcpTestClient[] = [];

beforeAll(async () => {
  app = await makeApp({ config: { token: TOKEN } });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  url = `ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1/acp?agent=mock`;
});
afterAll(async () => {
  for (const c of clients) c.close();
  await app.app.close();
});

const auth = { authorization: `Bearer ${TOKEN}` };
const events = async (id: string) => {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?limit=10000`, headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { events: UniversalEvent[] }).events;
};

/** A client; it asks for `_agentwire/event` (the checks against the log need every event) unless `events` is false. */
async function connect(capabilities: Record<string, unknown> = {}, events = true): Promise<AcpTestClient> {
  const c = connectWs(url, TOKEN);
  clients.push(c);
  const clientCapabilities = events ? { ...capabilities, _meta: { agentwire: { events: true } } } : capabilities;
  const init = await c.request<{ protocolVersion: number; agentCapabilities: Record<string, unknown> }>('initialize', { protocolVersion: 1, clientCapabilities });
  expect(init.protocolVersion).toBe(1);
  expect(init.agentCapabilities.loadSession).toBe(true);
  return c;
}

async function newSession(c: AcpTestClient): Promise<string> {
  const res = await c.request<{ sessionId: string }>('session/new', { cwd: process.cwd(), mcpServers: [] });
  return res.sessionId;
}

const prompt = (c: AcpTestClient, sessionId: string, text: string) =>
  c.request<{ stopReason: string; _meta: { agentwire: { sequence: number; reason: string } } }>('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });

/**
 * What the client got for a session is the log exactly: every event after `from` named by an update
 * or an `_agentwire/event` (several updates may come from one event, in a row), in order, once.
 */
async function expectExactly(c: AcpTestClient, sessionId: string, from = 0): Promise<UniversalEvent[]> {
  const log = await events(sessionId);
  await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the client to catch up');
  expect(runs(c.sequences(sessionId))).toEqual(log.filter((e) => e.sequence > from).map((e) => e.sequence));
  expectNoUnparsed(log);
  return log;
}

/** Consecutive repeats as one: [1, 2, 2, 3] → [1, 2, 3]; a sequence seen again later stays a duplicate. */
const runs = (seqs: number[]) => seqs.filter((s, i) => i === 0 || seqs[i - 1] !== s);

const textOf = (c: AcpTestClient, kind: string) =>
  c.updates.flatMap((u) => (u.update.sessionUpdate === kind && 'content' in u.update && !Array.isArray(u.update.content) && u.update.content?.type === 'text' ? [u.update.content.text] : [])).join('');

describe('ACP over WebSocket (mock agent)', () => {
  it('runs a turn with tool calls; the session is one of GET /v1/sessions', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    const result = await prompt(c, sessionId, 'tool');
    expect(result.stopReason).toBe('end_turn');
    const kinds = c.updates.map((u) => u.update.sessionUpdate);
    expect(kinds).toContain('tool_call');
    expect(kinds).toContain('tool_call_update');
    expect(kinds).toContain('agent_message_chunk');
    expect(textOf(c, 'agent_message_chunk')).toContain('Done.');
    const done = c.updates.find((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.status === 'completed');
    expect(done, JSON.stringify(kinds)).toBeDefined();
    const log = await expectExactly(c, sessionId);
    expect(result._meta.agentwire.sequence).toBe(log.findLast((e) => e.type === 'turn.ended')!.sequence);
    const list = await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: auth });
    expect((list.json() as { sessions: { sessionId: string; agent: string }[] }).sessions).toContainEqual(expect.objectContaining({ sessionId, agent: 'mock' }));
    const listed = await c.request<{ sessions: { sessionId: string }[] }>('session/list', {});
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
  });

  it('asks the client for a permission and replies with its choice', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    c.answer.permission = () => 'always';
    const result = await prompt(c, sessionId, 'permission');
    expect(result.stopReason).toBe('end_turn');
    expect(c.requests.map((r) => r.method)).toEqual(['session/request_permission']);
    const asked = c.requests[0]!.params as { toolCall: { title: string }; options: { optionId: string; kind: string }[] };
    expect(asked.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    const log = await expectExactly(c, sessionId);
    expect(log.find((e) => e.type === 'permission.resolved')?.data).toMatchObject({ status: 'approved', metadata: expect.objectContaining({ reply: 'always' }) });
    expect(textOf(c, 'agent_message_chunk')).toContain('Permission granted; wrote notes.txt.');
    // A rejection the same way, in a new session (the mock remembers "always").
    const second = await newSession(c);
    c.answer.permission = () => 'cancelled';
    await prompt(c, second, 'permission');
    expect((await events(second)).find((e) => e.type === 'permission.resolved')?.data.status).toBe('denied');
    await expectExactly(c, second);
  });

  it('asks every client following the session; the first answer wins, the others are withdrawn', async () => {
    const a = await connect();
    const sessionId = await newSession(a);
    const b = await connect();
    await b.request('session/load', { sessionId, cwd: process.cwd(), mcpServers: [] });
    let release: (v: string) => void = () => {};
    b.answer.permission = () => new Promise<string>((resolve) => (release = resolve)); // b never decides
    a.answer.permission = async () => {
      await waitFor(() => b.requests.length === 1, 5000, 'the second client to be asked too');
      return 'once';
    };
    expect((await prompt(a, sessionId, 'permission')).stopReason).toBe('end_turn');
    await waitFor(() => b.withdrawn.length === 1, 5000, "the second client's request to be withdrawn");
    release('reject'); // too late: nothing changes
    const log = await events(sessionId);
    expect(log.filter((e) => e.type === 'permission.resolved').map((e) => e.data.status)).toEqual(['approved']);
    await expectExactly(b, sessionId);
  });

  it('asks a question as an elicitation form when the client takes them, else as options', async () => {
    const plain = await connect();
    const s1 = await newSession(plain);
    plain.answer.permission = (params) => ((params.options as { optionId: string; name: string }[]).find((o) => o.name === 'green')!.optionId);
    await prompt(plain, s1, 'question');
    expect(textOf(plain, 'agent_message_chunk')).toContain('You answered: green');
    await expectExactly(plain, s1);

    const forms = await connect({ elicitation: { form: {} } });
    const s2 = await newSession(forms);
    forms.answer.elicitation = () => ({ action: 'accept', content: { answer: 'blue' } });
    await prompt(forms, s2, 'question');
    expect(forms.requests.map((r) => r.method)).toEqual(['elicitation/create']);
    expect(textOf(forms, 'agent_message_chunk')).toContain('You answered: blue');
    await expectExactly(forms, s2);
  });

  it('session/cancel interrupts the turn; the prompt answers cancelled', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    const running = prompt(c, sessionId, 'slow 50');
    await waitFor(() => textOf(c, 'agent_message_chunk').includes('tick 2'), 5000, 'two ticks');
    await c.connection.agent.notify('session/cancel', { sessionId });
    const result = await running;
    expect(result.stopReason).toBe('cancelled');
    expect(result._meta.agentwire.reason).toBe('interrupted');
    await expectExactly(c, sessionId);
  });

  it('answers a prompt whose session is deleted mid-turn (reason terminated)', async () => {
    const c = await connect();
    const sessionId = await newSession(c);
    const running = prompt(c, sessionId, 'slow 50');
    await waitFor(() => textOf(c, 'agent_message_chunk').includes('tick 1'), 5000, 'a tick');
    const deleted = await app.app.inject({ method: 'DELETE', url: `/v1/sessions/${sessionId}`, headers: auth });
    expect(deleted.statusCode).toBe(204);
    // A turn that did not end well is an error, not end_turn.
    await expect(running).rejects.toMatchObject({ code: -32603, data: { agentwire: { reason: 'terminated' } } });
    // The prompt is answered at the turn's end (terminated); the session's end is the event after it.
    await waitFor(() => c.events.some((e) => e.event.type === 'session.ended'), 5000, 'session.ended');
    expectNoUnparsed(c.events.map((e) => e.event));
  });

  it('session/load replays exactly the stored events of a session created over HTTP', async () => {
    const created = await app.app.inject({ method: 'POST', url: '/v1/sessions/acp-http-made', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ agent: 'mock' }) });
    expect(created.statusCode, created.body).toBe(200);
    for (const message of ['hello there', 'tool', 'Answer briefly and include your reasoning.']) {
      const before = (await events('acp-http-made')).length;
      const sent = await app.app.inject({ method: 'POST', url: '/v1/sessions/acp-http-made/messages', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ message }) });
      expect(sent.statusCode, sent.body).toBe(204);
      await waitFor(async () => (await events('acp-http-made')).slice(before).some((e) => e.type === 'turn.ended'), 5000, 'the turn');
    }
    const c = await connect();
    const loaded = await c.request<{ _meta: { agentwire: { sequence: number } } }>('session/load', { sessionId: 'acp-http-made', cwd: process.cwd(), mcpServers: [] });
    const log = await events('acp-http-made');
    // Everything arrived before the answer.
    expect(loaded._meta.agentwire.sequence).toBe(log.at(-1)!.sequence);
    expect(runs(c.sequences('acp-http-made'))).toEqual(log.map((e) => e.sequence));
    expect(textOf(c, 'user_message_chunk')).toContain('hello there');
    expect(textOf(c, 'agent_thought_chunk')).toContain('The user wants a short answer');
    expect(c.updates.some((u) => u.update.sessionUpdate === 'tool_call')).toBe(true);
    expectNoUnparsed(log);
  });

  it('resumes a cut mid-turn with nothing lost or duplicated', async () => {
    const first = await connect();
    const sessionId = await newSession(first);
    const running = prompt(first, sessionId, 'slow 30');
    running.catch(() => {}); // answered on the cut connection: it rejects when the connection closes
    await waitFor(() => textOf(first, 'agent_message_chunk').includes('tick 3'), 5000, 'three ticks');
    first.cut(); // no close frame: the session waits for a reconnect (a close frame would end it)
    const seen = first.sequences(sessionId);
    const last = seen.at(-1)!;
    const second = await connect();
    await second.request('session/load', { sessionId, cwd: process.cwd(), mcpServers: [], _meta: { agentwire: { after_sequence: last } } });
    await waitFor(() => second.events.some((e) => e.event.type === 'turn.ended'), 10_000, 'the turn to end on the resumed connection');
    const log = await events(sessionId);
    const after = second.sequences(sessionId);
    expect(Math.min(...after)).toBe(last + 1);
    expect([...runs(seen), ...runs(after)]).toEqual(log.map((e) => e.sequence));
    expect(log.filter((e) => e.type === 'item.delta').map((e) => (e.data as { delta: string }).delta).join('')).toContain('tick 30');
    expectNoUnparsed(log);
  });
});

describe('ACP over WebSocket: bad input', () => {
  const raw = (headers: Record<string, string> = auth, target = url) =>
    new Promise<{ ws?: WebSocket; status?: number; body?: string }>((resolve) => {
      const ws = new WebSocket(target, { headers });
      ws.on('open', () => resolve({ ws }));
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
    });
  const reply = (ws: WebSocket, frame: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
      ws.send(frame);
    });

  it('answers an unknown method -32601 and malformed JSON -32700, and stays open', async () => {
    const { ws } = await raw();
    expect(await reply(ws!, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/teleport', params: {} }))).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(await reply(ws!, '{"jsonrpc": "2.0", "id": 8, "method":')).toMatchObject({ id: null, error: { code: -32700 } });
    expect(await reply(ws!, '[1, 2]')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await reply(ws!, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'session/prompt', params: { sessionId: 'nope', prompt: [{ type: 'text', text: 'x' }] } }))).toMatchObject({ id: 9, error: { code: -32002 } });
    expect(await reply(ws!, JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'initialize', params: { protocolVersion: 1 } }))).toMatchObject({ id: 10, result: { protocolVersion: 1 } });
    ws!.close();
  });

  it('refuses an upgrade without the token (401), with a foreign Origin (403) or an unknown agent (400)', async () => {
    expect(await raw({})).toMatchObject({ status: 401 });
    expect(await raw({ ...auth, origin: 'https://evil.example' })).toMatchObject({ status: 403 });
    const unknown = await raw(auth, url.replace('agent=mock', 'agent=nobody'));
    expect(unknown.status).toBe(400);
    // The query token works where a browser cannot set a header.
    const { ws } = await raw({}, `${url}&token=${TOKEN}`);
    expect(ws).toBeDefined();
    ws!.close();
    // A plain GET is told to upgrade.
    const plain = await app.app.inject({ method: 'GET', url: '/v1/acp', headers: auth });
    expect(plain.statusCode).toBe(400);
  });
});
