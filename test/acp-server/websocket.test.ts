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
import { createMock, expectNoUnparsed, getEvents, makeApp, waitFor } from '../support/helpers.js';
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

async function connect(capabilities: Record<string, unknown> = {}): Promise<AcpTestClient> {
  const c = connectWs(url, TOKEN);
  clients.push(c);
  const init = await c.request<{ protocolVersion: number; agentCapabilities: Record<string, unknown> }>('initialize', { protocolVersion: 1, clientCapabilities: capabilities });
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

/** What the client got for a session covers the log exactly: each sequence once, none missing. */
async function expectAllOnce(c: AcpTestClient, sessionId: string, from = 1): Promise<UniversalEvent[]> {
  const log = await events(sessionId);
  await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the client to catch up');
  const got = [...new Set(c.sequences(sessionId))];
  // Several updates may come from one event (a message's text and its other parts), never out of order.
  expect(c.sequences(sessionId)).toEqual([...c.sequences(sessionId)].sort((a, b) => a - b));
  const expected = log.filter((e) => e.sequence >= from).map((e) => e.sequence);
  // Events that map to nothing (a streamed message's completion, a tool's result start) send nothing.
  expect(got.every((s) => expected.includes(s))).toBe(true);
  const silent = log.filter((e) => e.sequence >= from && !got.includes(e.sequence));
  for (const e of silent) expect(['item.started', 'item.completed', 'item.delta'], JSON.stringify(e)).toContain(e.type);
  expectNoUnparsed(log);
  return log;
}

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
    const text = c.updates.flatMap((u) => (u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.type === 'text' ? [u.update.content.text] : [])).join('');
    expect(text).toContain('Done.');
    const done = c.updates.find((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.status === 'completed');
    expect(done, JSON.stringify(kinds)).toBeDefined();
    const log = await expectAllOnce(c, sessionId);
    expect(result._meta.agentwire.sequence).toBe(log.findLast((e) => e.type === 'turn.ended')!.sequence);
    const list = await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: auth });
    expect((list.json() as { sessions: { sessionId: string; agent: string }[] }).sessions).toContainEqual(expect.objectContaining({ sessionId, agent: 'mock' }));
    const listed = await c.request<{ sessions: { sessionId: string }[] }>('session/list', {});
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
  });
});
