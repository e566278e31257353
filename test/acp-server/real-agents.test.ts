// Real agent CLIs behind agentwire's ACP WebSocket (GET /v1/acp), driven by the official ACP SDK's
// client: the pinned Claude Code and Codex against the fake model, one turn each with a tool call,
// Claude's write asked of the ACP client as a permission; and a Claude turn through `agentwire acp`
// (the built bin's stdio bridge) to the same daemon. One daemon (an in-process app listening on
// loopback), one fake model (a scenario per agent, picked by a [scenario:NAME] marker in the
// prompt) and one sandbox for the files.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { startFakeModel, type FakeModel } from '../fake-model/server.js';
import { claudeEnv } from '../agents/claude/harness.js';
import { codexSessionEnv } from '../agents/codex/codex-session.js';
import { expectNoUnparsed, makeApp, waitFor } from '../support/helpers.js';
import { makeSandbox, type Sandbox } from '../support/sandbox.js';
import { cleanEnv, installDir, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { connectStdio, connectWs, type AcpTestClient } from './acp-client.js';
import { needAgents } from '../support/test-agents.js';

needAgents(['claude', 'codex']);

const TOKEN = 'acp-real-agents-token-0123456789';
let app: App;
let fake: FakeModel;
let sandbox: Sandbox;
let url: string;
const clients: AcpTestClient[] = [];
const bridges: ChildProcess[] = [];

beforeAll(async () => {
  sandbox = makeSandbox('acp-real');
  fake = await startFakeModel({
    scenarios: {
      claude: [[{ text: 'Writing it.' }, { tool: 'write', path: 'from-acp.txt', content: 'written over ACP\n' }], [{ text: 'Wrote from-acp.txt.' }]],
      codex: [[{ tool: 'shell', command: 'echo hello-from-acp' }], [{ text: 'It printed hello-from-acp.' }]],
      stdio: [[{ text: 'Writing it.' }, { tool: 'write', path: 'from-stdio.txt', content: 'written over stdio\n' }], [{ text: 'Wrote from-stdio.txt.' }]],
    },
  });
  await setUpInstall();
  app = await makeApp({ baseDir: sandbox.work, config: { token: TOKEN } });
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  url = `ws://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1/acp`;
}, 600_000);
afterAll(async () => {
  for (const c of clients) c.close();
  for (const b of bridges) if (b.exitCode === null) b.kill('SIGKILL');
  removeInstall();
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
});

const events = async (id: string) => {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?limit=10000`, headers: { authorization: `Bearer ${TOKEN}` } });
  return (res.json() as { events: UniversalEvent[] }).events;
};
const runs = (seqs: number[]) => seqs.filter((s, i) => i === 0 || seqs[i - 1] !== s);
const textOf = (c: AcpTestClient) =>
  c.updates.flatMap((u) => (u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.type === 'text' ? [u.update.content.text] : [])).join('');

/** The ACP client over the WebSocket, or over `agentwire acp`'s stdio (the built bin) to the same daemon. */
function connect(agent: string, over: 'ws' | 'stdio'): AcpTestClient {
  if (over === 'ws') return connectWs(`${url}?agent=${agent}`, TOKEN);
  const tokenFile = join(sandbox.root, 'acp-token');
  writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
  const args = ['acp', '--url', url.replace(/^ws:/, 'http:').replace(/\/v1\/acp$/, ''), '--token-file', tokenFile, '--agent', agent];
  const child = spawn(process.execPath, [join(installDir(), 'bin/agentwire.js'), ...args], { env: cleanEnv({}), stdio: ['pipe', 'pipe', 'inherit'] });
  bridges.push(child);
  return connectStdio(child.stdin!, child.stdout!);
}

async function turn(agent: string, meta: Record<string, unknown>, text: string, over: 'ws' | 'stdio' = 'ws'): Promise<{ c: AcpTestClient; sessionId: string; stopReason: string; log: UniversalEvent[] }> {
  const c = connect(agent, over);
  clients.push(c);
  // It asks for `_agentwire/event`: the check against the log needs every event.
  await c.request('initialize', { protocolVersion: 1, clientCapabilities: { _meta: { agentwire: { events: true } } } });
  const { sessionId } = await c.request<{ sessionId: string }>('session/new', { cwd: sandbox.work, mcpServers: [], _meta: { agentwire: meta } });
  const { stopReason } = await c.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  const log = await events(sessionId);
  await waitFor(() => c.sequences(sessionId).at(-1) === log.at(-1)!.sequence, 5000, 'the last update');
  expect(runs(c.sequences(sessionId))).toEqual(log.map((e) => e.sequence));
  expectNoUnparsed(log);
  return { c, sessionId, stopReason, log };
}

describe('ACP with real agent CLIs (fake model)', () => {
  it('Claude Code: a turn whose write the ACP client allows', async () => {
    const { c, stopReason } = await turn('claude', { env: claudeEnv(fake, sandbox, false), permissionMode: 'default' }, '[scenario:claude] Write from-acp.txt.');
    expect(stopReason).toBe('end_turn');
    expect(c.requests.map((r) => r.method)).toEqual(['session/request_permission']);
    expect(c.updates.map((u) => u.update.sessionUpdate)).toEqual(expect.arrayContaining(['tool_call', 'tool_call_update', 'agent_message_chunk']));
    // The permission names the tool call it is for, as its tool_call update did.
    const asked = (c.requests[0]!.params as { toolCall: { toolCallId: string } }).toolCall.toolCallId;
    expect(c.updates.filter((u) => u.update.sessionUpdate === 'tool_call').map((u) => (u.update as { toolCallId: string }).toolCallId)).toContain(asked);
    expect(textOf(c)).toContain('Wrote from-acp.txt.');
    const file = join(sandbox.work, 'from-acp.txt');
    expect(existsSync(file) && readFileSync(file, 'utf8')).toBe('written over ACP\n');
  }, 120_000);

  it('Codex: a turn running a shell command', async () => {
    const { c, stopReason } = await turn('codex', { env: codexSessionEnv(sandbox, fake), permissionMode: 'bypass' }, '[scenario:codex] Run echo.');
    expect(stopReason).toBe('end_turn');
    const done = c.updates.find((u) => u.update.sessionUpdate === 'tool_call_update' && u.update.status === 'completed');
    expect(JSON.stringify(done?.update)).toContain('hello-from-acp');
    expect(textOf(c)).toContain('It printed hello-from-acp.');
  }, 120_000);

  it('Claude Code over stdio (agentwire acp): a turn whose write the ACP client allows', async () => {
    const { c, sessionId, stopReason } = await turn('claude', { env: claudeEnv(fake, sandbox, false), permissionMode: 'default' }, '[scenario:stdio] Write from-stdio.txt.', 'stdio');
    expect(stopReason).toBe('end_turn');
    expect(c.requests.map((r) => r.method)).toEqual(['session/request_permission']);
    expect(textOf(c)).toContain('Wrote from-stdio.txt.');
    expect(readFileSync(join(sandbox.work, 'from-stdio.txt'), 'utf8')).toBe('written over stdio\n');
    // The session the editor started is an ordinary agentwire session.
    const listed = await app.app.inject({ method: 'GET', url: '/v1/sessions', headers: { authorization: `Bearer ${TOKEN}` } });
    expect((listed.json() as { sessions: { sessionId: string; agent: string }[] }).sessions).toContainEqual(expect.objectContaining({ sessionId, agent: 'claude' }));
  }, 120_000);
});
