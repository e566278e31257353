// A configured ACP agent (--acp-agent) end to end through the HTTP API: the test agent
// (test/support/acp-test-agent.mjs, a real child process per session) streams text and thoughts,
// asks permissions answered over the API, plans, edits with a diff, streams terminal output, is
// interrupted and terminated, and misbehaves (a line that is not JSON, a request we do not offer,
// an exit mid-turn).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AcpAgentDefinition } from '../../../src/agents/acp/definition.js';
import { createAcpDriver } from '../../../src/agents/acp/driver.js';
import type { App } from '../../../src/app.js';
import { Config } from '../../../src/config.js';
import type { AgentInfo } from '../../../src/schema/api.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { randomIds, systemClock } from '../../../src/util/deps.js';
import { expectNoUnparsed, getEvents, makeApp, post, runTurn, types, waitFor } from '../../support/helpers.js';
import { expectProblem } from '../../support/http-problems.js';

const AGENT = new URL('../../support/acp-test-agent.mjs', import.meta.url).pathname;
let dir: string;
let app: App;

function config(): Config {
  return Config.parse({ acpAgents: [{ name: 'tester', command: process.execPath, args: [AGENT], env: { ACP_TEST_STORE: join(dir, 'store') } }] });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentwire-acp-e2e-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await app?.app.close();
});

async function create(id: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await post(app, `/v1/sessions/${id}`, { agent: 'tester', cwd: dir, ...extra });
  expect(res.statusCode, res.body).toBe(200);
}

const items = (events: UniversalEvent[], kind: string) =>
  events.flatMap((e) => (e.type === 'item.completed' && e.data.item.kind === kind ? [e.data.item] : []));
// The agent's own deltas (the daemon's echo of the user's message streams one too).
const deltas = (events: UniversalEvent[]) => events.flatMap((e) => (e.type === 'item.delta' && e.source === 'agent' ? [e.data.delta] : []));

describe('a configured ACP agent through the API', () => {
  it('is listed with the capabilities it announced, and runs a streamed turn', async () => {
    app = await makeApp({ config: config() });
    const before = (await app.app.inject({ method: 'GET', url: '/v1/agents' })).json() as { agents: AgentInfo[] };
    const listed = before.agents.find((a) => a.id === 'tester')!;
    expect(listed).toMatchObject({ installed: true, adapterAvailable: true, path: process.execPath, source: 'flag' });
    expect(listed.capabilities).toMatchObject({ permissions: true, questions: false, images: false });

    await create('s1');
    const events = await runTurn(app, 's1', 'hello there');
    expectNoUnparsed(events);
    const all = await getEvents(app, 's1');
    expect(all[0]).toMatchObject({ type: 'session.started', source: 'agent' });
    expect(all[0]!.native_session_id).toMatch(/^acp-/);
    expect(deltas(events).join('')).toBe('You said: hello there');
    const message = items(events, 'message').find((i) => i.role === 'assistant')!;
    expect(message.content).toEqual([{ type: 'text', text: 'You said: hello there' }]);
    expect(events.at(-1)).toMatchObject({ type: 'turn.ended', data: { metadata: { stop_reason: 'end_turn' } } });

    // After an initialize, the row says what the agent announced (promptCapabilities.image).
    app.agents.invalidate();
    const after = (await app.app.inject({ method: 'GET', url: '/v1/agents' })).json() as { agents: AgentInfo[] };
    expect(after.agents.find((a) => a.id === 'tester')!.capabilities).toMatchObject({ images: true });
  });

  it('streams thoughts as reasoning, plans and commands as status items, an unknown update as a status', async () => {
    app = await makeApp({ config: config() });
    await create('s2');
    const thought = await runTurn(app, 's2', 'think');
    expectNoUnparsed(thought);
    const reasoning = items(thought, 'message').find((i) => i.content[0]?.type === 'reasoning')!;
    expect(reasoning.content).toEqual([{ type: 'reasoning', text: 'Let me think. Done thinking.', visibility: 'public' }]);

    const plan = await runTurn(app, 's2', 'plan');
    const plans = items(plan, 'status').filter((i) => i.content[0]?.type === 'status' && i.content[0].label === 'plan');
    expect(plans).toHaveLength(2);
    expect(plans[1]!.content[0]).toMatchObject({ detail: '[x] Read the code\n[x] Write the fix' });

    const commands = await runTurn(app, 's2', 'commands');
    expectNoUnparsed(commands);
    const labels = items(commands, 'status').map((i) => (i.content[0]?.type === 'status' ? i.content[0].label : ''));
    expect(labels).toEqual(['available_commands', 'future_thing']);
  });

  it('asks permissions over the API: once runs the tool, reject does not; the reply picks the offered option', async () => {
    app = await makeApp({ config: config() });
    await create('s3');
    for (const [reply, option, outcome] of [['once', 'yes', 'completed'], ['always', 'yes-all', 'completed'], ['reject', 'no', 'failed']] as const) {
      const asked = await runTurn(app, 's3', 'permission please');
      const request = asked.find((e) => e.type === 'permission.requested')!;
      expect(request.data).toMatchObject({ action: 'command_execution', metadata: { title: 'Run `echo hi`', rawInput: { command: 'echo hi' } } });
      const from = (await getEvents(app, 's3')).length;
      const id = (request.data as { permission_id: string }).permission_id;
      const res = await post(app, `/v1/sessions/s3/permissions/${id}/reply`, { reply });
      expect(res.statusCode, res.body).toBe(204);
      const rest = await waitFor(async () => {
        const events = (await getEvents(app, 's3')).slice(from);
        return events.some((e) => e.type === 'turn.ended') ? events : undefined;
      }, 10_000);
      expectNoUnparsed(rest);
      expect(rest.find((e) => e.type === 'permission.resolved')!.data).toMatchObject({ status: reply === 'reject' ? 'denied' : 'approved' });
      const result = items(rest, 'tool_result')[0]!;
      expect(result.status).toBe(outcome);
      expect(result.content[0]).toMatchObject({ type: 'tool_result', output: reply === 'reject' ? `denied (${option})` : 'hi' });
    }
  });

  it('turns a diff into a file change and terminal output into a streamed tool result', async () => {
    app = await makeApp({ config: config() });
    await create('s4');
    const edit = await runTurn(app, 's4', 'diff');
    expectNoUnparsed(edit);
    const call = items(edit, 'tool_call')[0]!;
    const file = call.content.find((p) => p.type === 'file_ref')!;
    expect(file).toMatchObject({ type: 'file_ref', path: join(dir, 'hello.txt'), action: 'patch' });
    expect((file as { diff: string }).diff).toContain('-two\n+three\n');
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe('one\nthree\n');

    const term = await runTurn(app, 's4', 'terminal');
    expectNoUnparsed(term);
    expect(deltas(term).slice(0, 2)).toEqual(['a.txt\n', 'b.txt\n']);
    expect(items(term, 'tool_result')[0]!.content[0]).toMatchObject({ type: 'tool_result', output: 'a.txt\nb.txt\n' });
  });

  it('interrupts a running turn with session/cancel, and a pending permission is resolved by it', async () => {
    app = await makeApp({ config: config() });
    await create('s5');
    const from = (await getEvents(app, 's5')).length;
    expect((await post(app, '/v1/sessions/s5/messages', { message: 'slow' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(app, 's5')).slice(from).some((e) => e.type === 'item.delta'), 10_000);
    expect((await post(app, '/v1/sessions/s5/interrupt')).statusCode).toBe(202);
    const ended = await waitFor(async () => (await getEvents(app, 's5')).slice(from).find((e) => e.type === 'turn.ended'), 10_000);
    expect(ended.data).toMatchObject({ metadata: { stop_reason: 'cancelled' } });

    const asked = await runTurn(app, 's5', 'permission');
    expect(types(asked)).toContain('permission.requested');
    expect((await post(app, '/v1/sessions/s5/interrupt')).statusCode).toBe(202);
    const after = await waitFor(async () => {
      const events = await getEvents(app, 's5');
      return events.filter((e) => e.type === 'turn.ended').length === 2 ? events : undefined;
    }, 10_000);
    expect(after.filter((e) => e.type === 'permission.resolved').at(-1)!.data).toMatchObject({ status: 'denied' });
    expect(after.filter((e) => e.type === 'turn.ended').at(-1)!.data).toMatchObject({ metadata: { stop_reason: 'cancelled' } });
    expectNoUnparsed(after);

    // A second turn works after the interrupts; terminate ends the session.
    const again = await runTurn(app, 's5', 'hello again');
    expect(deltas(again).join('')).toBe('You said: hello again');
    expect((await post(app, '/v1/sessions/s5/terminate')).statusCode).toBe(204);
    const last = (await getEvents(app, 's5')).at(-1)!;
    expect(last).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
  });

  it('applies agentMode and model through session/set_mode and the model config option', async () => {
    app = await makeApp({ config: config() });
    const modes = (await app.app.inject({ method: 'GET', url: '/v1/agents/tester/modes' })).json() as { modes: { id: string }[] };
    expect(modes.modes.map((m) => m.id)).toEqual(['default', 'ask', 'code']);
    const models = (await app.app.inject({ method: 'GET', url: '/v1/agents/tester/models' })).json();
    expect(models).toMatchObject({ models: [{ id: 'test-small' }, { id: 'test-large' }], defaultModel: 'test-small', source: 'agent' });
    await create('s6', { agentMode: 'code', model: 'test-large' });
    const events = await getEvents(app, 's6', 0, true);
    const mode = items(events, 'status').find((i) => i.content[0]?.type === 'status' && i.content[0].label === 'mode');
    expect(mode?.content[0]).toMatchObject({ detail: 'code' });
    const bad = await post(app, '/v1/sessions/s7', { agent: 'tester', cwd: dir, model: 'nope' });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json().detail).toContain('test-small, test-large');
  });
});

describe('install and resume', () => {
  it('a command-configured agent has nothing to install; an unknown name is a 400 naming the field', async () => {
    app = await makeApp({ config: config() });
    const none = expectProblem(await post(app, '/v1/agents/tester/install', {}), 400, 'invalid_request');
    expect(none.detail).toContain('nothing to install');
    const unknown = expectProblem(await post(app, '/v1/agents/nobody/install', {}), 400, 'invalid_request');
    expect(unknown.detail).toContain('path.agent');
    expectProblem(await post(app, '/v1/sessions/x', { agent: 'nobody' }), 400, 'invalid_request');
  });

  it("after a restart resumes the agent's session with session/load, or says it cannot when the agent lost it", async () => {
    const dataDir = join(dir, 'data');
    const open = () => makeApp({ ids: randomIds, clock: systemClock, config: { ...config(), dataDir } });
    app = await open();
    await create('r1');
    await create('r2');
    await runTurn(app, 'r1', 'first words');
    await runTurn(app, 'r2', 'other words');
    const lost = (await getEvents(app, 'r2'))[0]!.native_session_id!;
    await app.app.close();
    rmSync(join(dir, 'store', `${lost}.json`));

    app = await open();
    const resumed = await runTurn(app, 'r1', 'history');
    expectNoUnparsed(resumed);
    expect(deltas(resumed).join('')).toBe('I remember: first words');
    expectProblem(await post(app, '/v1/sessions/r2/messages', { message: 'history' }), 502, 'agent_start_failed');
    const failed = await getEvents(app, 'r2');
    const error = failed.find((e) => e.type === 'error' && e.data.code === 'native_resume_failed')!;
    expect((error.data as { message: string }).message).toContain(`no session ${lost}`);
    expect(failed.at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'error' } });
  });

  it("forks with ACP's session/fork when the agent announces it: after the last turn only; never steers", async () => {
    app = await makeApp({ config: config() });
    await create('p1', { env: { ACP_TEST_FORK: '1' } });
    await runTurn(app, 'p1', 'first words');
    // The row follows the agent's initialize: session/fork forks a whole session.
    const row = (await app.app.inject({ method: 'GET', url: '/v1/agents' })).json<{ agents: AgentInfo[] }>().agents.find((a) => a.id === 'tester')!;
    expect(row.capabilities).toMatchObject({ steer: false, fork: true, forkAtTurn: false });
    const from = (await getEvents(app, 'p1')).length;
    expect((await post(app, '/v1/sessions/p1/messages', { message: 'slow' })).statusCode).toBe(204);
    await waitFor(async () => deltas(await getEvents(app, 'p1', from)).length > 0 || undefined);
    expectProblem(await post(app, '/v1/sessions/p1/messages', { message: 'use tabs', delivery: 'steer' }), 409, 'steer_unsupported');
    expect((await post(app, '/v1/sessions/p1/interrupt')).statusCode).toBe(202);
    await waitFor(async () => (await getEvents(app, 'p1')).filter((e) => e.type === 'turn.ended').length === 2 || undefined);
    await runTurn(app, 'p1', 'second words');

    const ends = (await getEvents(app, 'p1')).filter((e) => e.type === 'turn.ended');
    expectProblem(await post(app, '/v1/sessions/p1/fork', { at: ends[0]!.sequence }), 409, 'fork_unsupported');
    const res = await post(app, '/v1/sessions/p1/fork', { id: 'f1' });
    expect(res.statusCode, res.body).toBe(201);
    const history = await runTurn(app, 'f1', 'history');
    expect(deltas(history).join('')).toBe('I remember: first words | slow | second words');
    const parent = (await getEvents(app, 'p1'))[0]!.native_session_id;
    const forked = (await app.app.inject({ method: 'GET', url: '/v1/sessions/f1' })).json<{ nativeSessionId: string }>().nativeSessionId;
    expect(forked).toMatch(/^acp-/);
    expect(forked).not.toBe(parent);
    expectNoUnparsed(await getEvents(app, 'f1'));
  });
});

describe('a built-in style definition', () => {
  // What a built-in ACP agent is: a definition given to createAcpDriver (docs/acp.md).
  const definition: AcpAgentDefinition = {
    id: 'defined',
    title: 'Defined agent',
    args: [AGENT],
    session: () => ({ env: { ACP_TEST_STORE: join(dir, 'store') } }),
    permissionModes: ['default', 'bypass'],
    permissionModeIds: { bypass: 'code' },
    capabilities: { mcpTools: false },
  };
  const limits = { maxLineChars: 1 << 20, killGraceMs: 500, startTimeoutMs: 10_000, stderrHeadLines: 20, stderrTailLines: 50 };

  it('maps a permissionMode onto an ACP mode, and overrides capabilities', async () => {
    app = await makeApp({ registry: { defined: createAcpDriver(definition, limits, async () => process.execPath) } });
    const listed = (await app.app.inject({ method: 'GET', url: '/v1/agents' })).json() as { agents: AgentInfo[] };
    expect(listed.agents.find((a) => a.id === 'defined')?.capabilities).toMatchObject({ mcpTools: false, permissions: true });
    const res = await post(app, '/v1/sessions/d1', { agent: 'defined', cwd: dir, permissionMode: 'bypass' });
    expect(res.statusCode, res.body).toBe(200);
    const mode = items(await getEvents(app, 'd1'), 'status').find((i) => i.content[0]?.type === 'status' && i.content[0].label === 'mode');
    expect(mode?.content[0]).toMatchObject({ detail: 'code' });
    expectProblem(await post(app, '/v1/sessions/d2', { agent: 'defined', permissionMode: 'plan' }), 400, 'invalid_request');
  });
});

describe('MCP servers', () => {
  it('passes stdio servers to session/new and refuses a transport the agent did not announce', async () => {
    app = await makeApp({ config: config() });
    await create('mcp1', { mcp: { files: { command: 'mcp-files', args: ['/w'], env: { K: 'v' } } } });
    const events = await runTurn(app, 'mcp1', 'mcp');
    expect(deltas(events).join('')).toBe('mcp: [{"name":"files","command":"mcp-files","args":["/w"],"env":[{"name":"K","value":"v"}]}]');
    const refused = expectProblem(await post(app, '/v1/sessions/mcp2', { agent: 'tester', cwd: dir, mcp: { web: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }), 400, 'invalid_request');
    expect(refused.detail).toContain('mcpCapabilities.http');
  });
});

describe('prompt content', () => {
  it('sends an image inline (the agent announced promptCapabilities.image) and other files as resource links', async () => {
    app = await makeApp({ config: config() });
    writeFileSync(join(dir, 'pic.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
    writeFileSync(join(dir, 'notes.txt'), 'notes');
    await create('p1');
    const from = (await getEvents(app, 'p1')).length;
    const attachments = [{ path: join(dir, 'pic.png'), mime: 'image/png' }, { path: join(dir, 'notes.txt') }];
    expect((await post(app, '/v1/sessions/p1/messages', { message: 'blocks', attachments })).statusCode).toBe(204);
    const events = await waitFor(async () => {
      const all = (await getEvents(app, 'p1')).slice(from);
      return all.some((e) => e.type === 'turn.ended') ? all : undefined;
    }, 10_000);
    expectNoUnparsed(events);
    expect(deltas(events).join('')).toBe('blocks: text,image,resource_link');
  });
});

describe('a misbehaving ACP agent', () => {
  it('a line that is not JSON is agent.unparsed, and the turn goes on', async () => {
    app = await makeApp({ config: config() });
    await create('m1');
    const events = await runTurn(app, 'm1', 'garbage');
    expect(events.filter((e) => e.type === 'agent.unparsed')).toHaveLength(1);
    expect(deltas(events).join('')).toBe('Still here.');
  });

  it('a request we do not offer is answered with an error at once', async () => {
    app = await makeApp({ config: config() });
    await create('m2');
    const events = await runTurn(app, 'm2', 'askclient');
    expectNoUnparsed(events);
    expect(deltas(events).join('')).toBe('fs/read_text_file answered error -32601');
    expect(events.find((e) => e.type === 'error')!.data).toMatchObject({ code: 'acp_unsupported_request', details: { method: 'fs/read_text_file' } });
  });

  it('an error answer to the prompt is an error and ends the turn', async () => {
    app = await makeApp({ config: config() });
    await create('m3');
    const events = await runTurn(app, 'm3', 'fail');
    expectNoUnparsed(events);
    expect(events.find((e) => e.type === 'error')!.data).toMatchObject({ message: 'the model exploded', code: 'acp_error' });
    expect(events.at(-1)).toMatchObject({ type: 'turn.ended', data: { metadata: { stop_reason: 'error' } } });
  });

  it('exiting mid-turn ends the session with the exit code and stderr', async () => {
    app = await makeApp({ config: config() });
    await create('m4');
    const from = (await getEvents(app, 'm4')).length;
    expect((await post(app, '/v1/sessions/m4/messages', { message: 'exit' })).statusCode).toBe(204);
    const events = await waitFor(async () => {
      const all = (await getEvents(app, 'm4')).slice(from);
      return all.some((e) => e.type === 'session.ended') ? all : undefined;
    }, 10_000);
    expectNoUnparsed(events);
    const ended = events.find((e) => e.type === 'session.ended')!;
    expect(ended.data).toMatchObject({ reason: 'error', terminated_by: 'agent', exit_code: 3 });
    expect(JSON.stringify(ended.data)).toContain('fatal: the test agent exits mid-turn');
  });
});
