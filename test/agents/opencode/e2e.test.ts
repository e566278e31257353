// OpenCode end to end: the daemon's HTTP API, the real pinned OpenCode (1.18.33, `opencode serve`;
// each test's session alone on its server, sharing is test/agents/opencode/shared-e2e.test.ts) as the
// session's agent, and the fake model server behind it. Every session runs
// in a throwaway sandbox (HOME, TMPDIR, XDG_* and the work dir); its env carries OPENCODE_CONFIG
// naming a config for the fake provider (test/agents/opencode/harness.ts's opencodeConfig), which the
// driver's own OPENCODE_CONFIG_CONTENT (permissions for the permissionMode) is merged over. The
// sandbox's config dir is seeded so OpenCode installs nothing from the registry.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../src/schema/api.js';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';
import type { Scenario } from '../../fake-model/server.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { eventsUntil as eventsUntilIn, expectWellFormedTurn, lastSequence, sendTurn as sendTurnIn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import type { Sandbox } from '../../support/sandbox.js';
import { configDir, e2eEnv, opencodeConfig, seedConfigDir, sessionEnv } from './harness.js';
import { createOpencodeDriver } from '../../../src/agents/opencode/driver.js';
import { alive, leftovers, processes } from '../../support/procs.js';

const SID = 'opencode-e2e';
/**
 * Turns wait up to 45 s, tests up to 120 s: an OpenCode turn on a fresh `opencode serve` takes over
 * the helpers' default 10 s on a loaded machine (CI runs two test files beside each other).
 */
const WAIT_MS = 45_000;
const TEST_MS = 120_000;
type TurnOptions = Parameters<typeof sendTurnIn>[3];
const sendTurn = (app: Parameters<typeof sendTurnIn>[0], id: string, message: string, options: TurnOptions = {}) => sendTurnIn(app, id, message, { timeoutMs: WAIT_MS, ...options });
const eventsUntil = (app: Parameters<typeof eventsUntilIn>[0], id: string, from: number, until?: Parameters<typeof eventsUntilIn>[3]) => eventsUntilIn(app, id, from, until, WAIT_MS);
/** The env of a session whose OpenCode reads `configPath` and fetches nothing. */

const e2e = agentE2E({
  agent: 'opencode',
  sid: SID,
  env: ({ fake, sandbox }) => e2eEnv(sandbox, fake!),
});

/** A daemon with one opencode session against a fake model answering `scenario`. */
function start(scenario: Scenario, permissionMode: PermissionMode = 'bypass', extra: Record<string, unknown> = {}) {
  return e2e.start({ scenario, permissionMode, body: extra });
}

const completed = (events: UniversalEvent[]): UniversalItem[] => events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
const assistantMessages = (events: UniversalEvent[]) => completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant' && i.content.some((p) => p.type === 'text'));
const textOf = (item: UniversalItem | undefined) => (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const deltasOf = (events: UniversalEvent[], itemId: string) => events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === itemId ? [e.data.delta] : []));
const allEvents = () => e2e.events();
const permissionIds = (events: UniversalEvent[]) => events.flatMap((e) => (e.type === 'permission.requested' ? [e.data.permission_id] : []));
const info = async () => (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json() as { status: string; nativeSessionId?: string };

/** The pid of the session's `opencode serve` (the driver's handle, as the session's agent holds it). */
function serverPid(): number {
  const session = (e2e.app.sessions as unknown as { get(id: string): { agent: { current?: { pid?: number } } } }).get(SID);
  const pid = session.agent.current?.pid;
  expect(pid, 'the session has a server process').toBeTypeOf('number');
  return pid!;
}

async function reply(permissionId: string, answer: 'once' | 'always' | 'reject') {
  const res = await post(e2e.app, `/v1/sessions/${SID}/permissions/${encodeURIComponent(permissionId)}/reply`, { reply: answer });
  expect(res.statusCode, res.body).toBe(204);
}

describe('opencode e2e (real server, fake model)', { timeout: TEST_MS }, () => {
  it('streams text as deltas that add up to the completed message', async () => {
    await start([[{ text: 'Hello from the fake model, streamed in several pieces.' }]]);
    expect((await info()).nativeSessionId).toMatch(/^ses_/);
    const turn = await sendTurn(e2e.app, SID, 'Say hello.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Say hello.');
    const [message] = assistantMessages(turn.events);
    expect(textOf(message)).toBe('Hello from the fake model, streamed in several pieces.');
    const deltas = deltasOf(turn.events, message!.item_id);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(textOf(message));
    // The seeded config dir satisfied OpenCode's plugin install: nothing was fetched into it.
    expect(readdirSync(join(configDir(e2e.sandbox), 'node_modules'))).toEqual([]);
    expectNoUnparsed(await allEvents());
  });
});

describe('opencode e2e: tools and permissions', { timeout: TEST_MS }, () => {
  it('runs a shell command: tool_call and tool_result with its output; each step updates the usage totals', async () => {
    await start([[{ text: 'Running it.' }, { tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Run echo.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Run echo.');
    const items = completed(turn.events);
    const call = items.find((i) => i.kind === 'tool_call');
    const result = items.find((i) => i.kind === 'tool_result');
    expect(call?.content[0]).toMatchObject({ type: 'tool_call', name: 'bash', arguments: JSON.stringify({ command: 'echo hello-from-shell' }) });
    expect(result?.content[0]).toMatchObject({ type: 'tool_result', output: 'hello-from-shell\n' });
    expect(result?.status).toBe('completed');
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('It printed hello-from-shell.');
    const all = await allEvents();
    expectNoUnparsed(all);
    // Live usage (docs/budgets.md): each of the turn's two steps (step-finish) updates the totals,
    // and the turn, which reports no total of its own, gets their sum as its usage.
    const updates = all.flatMap((e) => (e.type === 'usage.updated' ? [e.data] : []));
    expect(updates.map((u) => u.scope)).toEqual(['step', 'step']);
    const usage = all.flatMap((e) => (e.type === 'turn.ended' ? [e.data.metadata.usage] : []));
    expect(usage[0]?.output_tokens).toBeGreaterThan(0);
    expect(updates.at(-1)!.totals).toMatchObject({ input_tokens: usage[0]!.input_tokens, output_tokens: usage[0]!.output_tokens });
  });

  it('calls an MCP tool given in the create request (common shape): the server stays visible on the call', async () => {
    const server = fileURLToPath(new URL('../../support/mcp-echo-server.mjs', import.meta.url));
    await start([[{ call: 'probe_echo', input: { text: 'ping' } }], [{ text: 'The MCP tool answered.' }]], 'bypass', {
      mcp: { probe: { command: process.execPath, args: [server] } },
    });
    // OpenCode starts the MCP server with the first prompt: on a loaded machine that alone took over 10 s.
    const turn = await sendTurn(e2e.app, SID, 'Use the probe.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Use the probe.');
    const offered = JSON.stringify(e2e.fake.requests.map((r) => r.body));
    expect(offered, 'the model was offered the MCP tool').toContain('probe_echo');
    const items = completed(turn.events);
    const call = items.find((i) => i.kind === 'tool_call');
    expect(call?.content).toContainEqual(expect.objectContaining({ type: 'tool_call', name: 'probe_echo' }));
    expect(call?.content).toContainEqual({ type: 'json', json: { mcp_server: 'probe', tool: 'echo' } });
    const result = items.find((i) => i.kind === 'tool_result');
    expect(JSON.stringify(result?.content)).toContain('echo: ping');
    expectNoUnparsed(await allEvents());
  }, 60_000);

  it('writes a file: the change is in the stream with its diff', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'hello.txt', content: 'hello\n' }], [{ text: 'Wrote hello.txt.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Write hello.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write hello.txt.');
    expect(readFileSync(join(sandbox.work, 'hello.txt'), 'utf8')).toBe('hello\n');
    const result = completed(turn.events).find((i) => i.kind === 'tool_result');
    expect(result?.content.find((p) => p.type === 'file_ref')).toEqual({
      type: 'file_ref',
      path: join(sandbox.work, 'hello.txt'),
      action: 'write',
      diff: `--- /dev/null\n+++ b/${join(sandbox.work, 'hello.txt')}\n@@ -0,0 +1 @@\n+hello\n`,
    });
    expectNoUnparsed(await allEvents());
  });

  it.each([
    ['once', true],
    ['reject', false],
  ] as const)('default mode asks before a write; reply %s', async (answer, written) => {
    const { sandbox } = await start([[{ tool: 'write', path: 'notes.txt', content: 'notes\n' }], [{ text: 'Finished.' }]], 'default');
    const turn = await sendTurn(e2e.app, SID, 'Write notes.txt.');
    const [permissionId] = permissionIds(turn.events);
    expect(permissionId, JSON.stringify(turn.events.map((e) => e.type))).toMatch(/^per_/);
    expect(turn.events.find((e) => e.type === 'permission.requested')).toMatchObject({ data: { action: 'edit', status: 'requested' } });
    expect((await info()).status).toBe('waiting');
    await reply(permissionId!, answer);
    const events = await eventsUntil(e2e.app, SID, turn.from);
    expect(events.find((e) => e.type === 'permission.resolved')).toMatchObject({ source: 'agent', data: { permission_id: permissionId, status: written ? 'approved' : 'denied' } });
    expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(written);
    const result = completed(events).find((i) => i.kind === 'tool_result');
    expect(result?.status).toBe(written ? 'completed' : 'failed');
    await expectWellFormedTurn(e2e.app, SID, { from: turn.from, events }, 'Write notes.txt.');
    expect((await info()).status).toBe('idle');
    expectNoUnparsed(await allEvents());
  });

  it('default mode asks before a shell command too; always lets the next one through unasked', async () => {
    await start(
      [[{ tool: 'shell', command: 'echo one' }], [{ tool: 'shell', command: 'echo two' }], [{ text: 'Both ran.' }]],
      'default',
    );
    const turn = await sendTurn(e2e.app, SID, 'Run two commands.');
    const [permissionId] = permissionIds(turn.events);
    expect(turn.events.find((e) => e.type === 'permission.requested')).toMatchObject({ data: { action: 'bash' } });
    await reply(permissionId!, 'always');
    const events = await eventsUntil(e2e.app, SID, turn.from);
    expect(permissionIds(events)).toEqual([permissionId]);
    const outputs = completed(events).flatMap((i) => i.content.flatMap((p) => (p.type === 'tool_result' ? [p.output] : [])));
    expect(outputs).toEqual(['one\n', 'two\n']);
    expect(textOf(assistantMessages(events).at(-1))).toBe('Both ran.');
    await expectWellFormedTurn(e2e.app, SID, { from: turn.from, events }, 'Run two commands.');
    expectNoUnparsed(await allEvents());
  });

  it('acceptEdits writes without asking but asks before a shell command', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'edit.txt', content: 'edit\n' }], [{ tool: 'shell', command: 'echo asked' }], [{ text: 'Done.' }]], 'acceptEdits');
    const turn = await sendTurn(e2e.app, SID, 'Write, then run.');
    expect(readFileSync(join(sandbox.work, 'edit.txt'), 'utf8')).toBe('edit\n');
    const requests = turn.events.filter((e) => e.type === 'permission.requested');
    expect(requests.map((e) => (e.type === 'permission.requested' ? e.data.action : ''))).toEqual(['bash']);
    await reply(permissionIds(turn.events)[0]!, 'once');
    const events = await eventsUntil(e2e.app, SID, turn.from);
    expect(completed(events).flatMap((i) => i.content.flatMap((p) => (p.type === 'tool_result' ? [p.output] : [])))).toContain('asked\n');
    await expectWellFormedTurn(e2e.app, SID, { from: turn.from, events }, 'Write, then run.');
    expectNoUnparsed(await allEvents());
  });

  it('bypass runs a shell command and writes without asking', async () => {
    const { sandbox } = await start([[{ tool: 'shell', command: 'echo quiet' }, { tool: 'write', path: 'quiet.txt', content: 'quiet\n' }], [{ text: 'Done.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Do both.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Do both.');
    expect(permissionIds(turn.events)).toEqual([]);
    expect(readFileSync(join(sandbox.work, 'quiet.txt'), 'utf8')).toBe('quiet\n');
    expectNoUnparsed(await allEvents());
  });
});

describe('opencode e2e: reasoning, turns, errors, processes', { timeout: TEST_MS }, () => {
  it('reasoning streams into its own item before the answer', async () => {
    await start([[{ thinking: 'A short answer will do.' }, { text: 'Short answer.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Explain briefly.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Explain briefly.');
    const reasoning = completed(turn.events).find((i) => i.content.some((p) => p.type === 'reasoning'));
    expect(reasoning?.content).toEqual([{ type: 'reasoning', text: 'A short answer will do.', visibility: 'public' }]);
    expect(deltasOf(turn.events, reasoning!.item_id).join('')).toBe('A short answer will do.');
    expect(textOf(assistantMessages(turn.events)[0])).toBe('Short answer.');
    expectNoUnparsed(await allEvents());
  });

  it('two turns on one server', async () => {
    await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    const first = await sendTurn(e2e.app, SID, 'First?');
    await expectWellFormedTurn(e2e.app, SID, first, 'First?');
    const second = await sendTurn(e2e.app, SID, 'Second?');
    await expectWellFormedTurn(e2e.app, SID, second, 'Second?');
    expect(textOf(assistantMessages(first.events)[0])).toBe('FIRST');
    expect(textOf(assistantMessages(second.events)[0])).toBe('SECOND');
    const all = await allEvents();
    expect(all.filter((e) => e.type === 'turn.started')).toHaveLength(2);
    expect(all.filter((e) => e.type === 'turn.ended')).toHaveLength(2);
    expectNoUnparsed(all);
  });

  it('resumes a session by its nativeSessionId on a new server: the conversation goes on', async () => {
    const { env, sandbox } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    await sendTurn(e2e.app, SID, 'First?');
    const nativeSessionId = (await info()).nativeSessionId;
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    const res = await post(e2e.app, '/v1/sessions/resumed', { agent: 'opencode', cwd: sandbox.work, env, permissionMode: 'bypass', nativeSessionId });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ nativeSessionId });
    const events = await getEvents(e2e.app, 'resumed');
    expect(events[0]).toMatchObject({ type: 'session.started', native_session_id: nativeSessionId, data: { metadata: { resumed: true } } });
    const turn = await sendTurn(e2e.app, 'resumed', 'Second?');
    await expectWellFormedTurn(e2e.app, 'resumed', turn, 'Second?');
    // The fake model answers by the conversation it is sent: SECOND means the first turn was in it.
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('SECOND');
    expectNoUnparsed(await getEvents(e2e.app, 'resumed'));
  }, 60_000); // two `opencode serve` boots and two turns: over 20 s on a busy two-core machine

  it('resuming an unknown session fails the create', async () => {
    const { env, sandbox } = await start([[{ text: 'unused' }]]);
    const res = await post(e2e.app, '/v1/sessions/nope', { agent: 'opencode', cwd: sandbox.work, env, nativeSessionId: 'ses_doesnotexist' });
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.json()).toMatchObject({ code: 'agent_start_failed' });
  });

  it('abort stops the running turn; the next turn works', async () => {
    await start([[{ text: 'Working on it' }, { sleepMs: 20_000 }, { text: 'never said' }], [{ text: 'Back again.' }]]);
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Take long.' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(e2e.app, SID, from)).some((e) => e.type === 'item.delta' && e.source === 'agent'), 15_000, 'a streamed delta');
    const started = Date.now();
    expect((await post(e2e.app, `/v1/sessions/${SID}/interrupt`)).statusCode).toBe(202);
    const events = await eventsUntil(e2e.app, SID, from);
    const ended = events.find((e) => e.type === 'turn.ended');
    expect(ended?.data).toMatchObject({ metadata: { reason: 'interrupted' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    const next = await sendTurn(e2e.app, SID, 'Again.');
    await expectWellFormedTurn(e2e.app, SID, next, 'Again.');
    expect(textOf(assistantMessages(next.events).at(-1))).toBe('Back again.');
    expectNoUnparsed(await allEvents());
  });

  it('a model that keeps failing: an error event, the turn ends, the session stays usable', async () => {
    await start([[{ error: 400, message: 'fake bad request' }], [{ text: 'Recovered.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Fail please.');
    const errors = turn.events.filter((e) => e.type === 'error');
    expect(errors.length, JSON.stringify(turn.events.map((e) => e.type))).toBeGreaterThan(0);
    expect(JSON.stringify(errors[0]!.data)).toContain('fake bad request');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Fail please.');
    expect((await info()).status).toBe('idle');
    expectNoUnparsed(await allEvents());
  });

  it('a retryable model error: OpenCode retries (status items), gives up after 5 attempts with an error', async () => {
    await start([[{ error: 500, retryAfterMs: 50, message: 'always failing' }]]);
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Fail slowly.' })).statusCode).toBe(204);
    const events = await waitFor(async () => {
      const got = await getEvents(e2e.app, SID, from);
      return got.some((e) => e.type === 'turn.ended') ? got : undefined;
    }, 30_000, 'the turn to end');
    const retries = completed(events).filter((i) => i.kind === 'status');
    expect(retries.map((i) => i.content[0])).toEqual([1, 2, 3, 4, 5].map((n) => ({ type: 'status', label: 'retry', detail: `attempt ${n}: always failing` })));
    expect(events.find((e) => e.type === 'error')).toMatchObject({ data: { code: 'opencode_APIError', message: 'always failing' } });
    expect(events.find((e) => e.type === 'turn.ended')).toMatchObject({ data: { metadata: { reason: 'error' } } });
    expect(completed(events).filter((i) => i.role === 'assistant').every((i) => i.status === 'failed')).toBe(true);
    expect((await info()).status).toBe('idle');
    expectNoUnparsed(await allEvents());
  });

  it('a server killed mid-turn: error and session.ended, no hang, nothing left running', async () => {
    await start([[{ text: 'Working on it' }, { sleepMs: 20_000 }, { text: 'never said' }]]);
    const pid = serverPid();
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Take long.' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(e2e.app, SID, from)).some((e) => e.type === 'item.delta' && e.source === 'agent'), 15_000, 'a streamed delta');
    process.kill(-pid, 'SIGKILL');
    const events = await eventsUntil(e2e.app, SID, from, ['session.ended']);
    expect(events.find((e) => e.type === 'error')).toMatchObject({ data: { code: 'agent_exited' } });
    expect(events.find((e) => e.type === 'turn.ended')).toMatchObject({ data: { metadata: { reason: 'error' } } });
    expect(events.find((e) => e.type === 'session.ended')).toMatchObject({ data: { reason: 'error', terminated_by: 'agent' } });
    expect((await info()).status).toBe('ended');
    await waitFor(() => !alive(pid), 5_000, 'the server gone');
    expect(leftovers(pid)).toEqual([]);
    expectNoUnparsed(await allEvents());
  });

  it('closing the daemon ends a live session\'s server', async () => {
    await start([[{ text: 'Hi.' }]]);
    const pid = serverPid();
    await e2e.app.app.close();
    e2e.dropApp();
    await waitFor(() => !alive(pid), 5_000, 'the server gone');
    expect(leftovers(pid)).toEqual([]);
  });

  it('terminate ends the server and its whole process group', async () => {
    await start([[{ text: 'Hi.' }]]);
    const pid = serverPid();
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    const all = await allEvents();
    expect(all.at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
    await waitFor(() => !alive(pid), 5_000, 'the server gone');
    expect(leftovers(pid)).toEqual([]);
    expectNoUnparsed(all);
  });
});

describe('opencode e2e: questions, modes, models', { timeout: TEST_MS }, () => {
  const question = { questions: [{ question: 'Which colour?', header: 'Colour', options: [{ label: 'red', description: 'warm' }, { label: 'blue', description: 'cool' }] }] };

  it.each([
    ['reply', 'answered'],
    ['reject', 'rejected'],
  ] as const)('the question tool asks the client; %s', async (how, status) => {
    await start([[{ call: 'question', input: question }], [{ text: 'Noted.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Ask me.');
    const asked = turn.events.find((e) => e.type === 'question.requested');
    expect(asked, JSON.stringify(turn.events.map((e) => e.type))).toMatchObject({ source: 'agent', data: { prompt: 'Which colour?', options: ['red', 'blue'], status: 'requested' } });
    const id = asked!.type === 'question.requested' ? asked!.data.question_id : '';
    expect(id).toMatch(/^que_/);
    expect((await info()).status).toBe('waiting');
    const url = `/v1/sessions/${SID}/questions/${encodeURIComponent(id)}/${how}`;
    const res = how === 'reply' ? await post(e2e.app, url, { answers: [['blue']] }) : await post(e2e.app, url);
    expect(res.statusCode, res.body).toBe(204);
    const events = await eventsUntil(e2e.app, SID, turn.from);
    const resolved = events.find((e) => e.type === 'question.resolved');
    expect(resolved).toMatchObject({ source: 'agent', data: { question_id: id, status, ...(how === 'reply' ? { response: 'blue' } : {}) } });
    await expectWellFormedTurn(e2e.app, SID, { from: turn.from, events }, 'Ask me.');
    expectNoUnparsed(await allEvents());
  });

  it('plan mode: writes are denied without asking', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'plan.txt', content: 'no\n' }], [{ text: 'Could not write.' }]], 'plan');
    const turn = await sendTurn(e2e.app, SID, 'Write plan.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write plan.txt.');
    expect(permissionIds(turn.events)).toEqual([]);
    expect(existsSync(join(sandbox.work, 'plan.txt'))).toBe(false);
    expectNoUnparsed(await allEvents());
  });

  it('sends an attachment as a file part the model sees', async () => {
    const { sandbox, fake } = await start([[{ text: 'Read it.' }]]);
    writeFileSync(join(sandbox.work, 'note.txt'), 'attached-note-content\n');
    const turn = await sendTurn(e2e.app, SID, 'Look at the note.', { attachments: [{ path: 'note.txt' }] });
    await expectWellFormedTurn(e2e.app, SID, turn, 'Look at the note.');
    const asked = fake.requests.filter((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes('Look at the note.'));
    expect(JSON.stringify(asked.at(-1)?.body)).toContain('attached-note-content');
    expectNoUnparsed(await allEvents());
  });

  it("a variant selects one the model defines (its options reach the model request); one it lacks is a 400 naming the valid ones", async () => {
    const sandbox = e2e.makeSandbox('opencode-e2e');
    const fake = await e2e.startFakeModel({ scenario: [[{ text: 'Thought hard.' }]] });
    seedConfigDir(sandbox);
    const config = opencodeConfig(fake) as { provider: Record<string, { models: Record<string, Record<string, unknown>> }> };
    config.provider.fake!.models['fake-model']!.variants = { deep: { reasoningEffort: 'high' } };
    const configPath = join(sandbox.root, 'opencode.json');
    writeFileSync(configPath, JSON.stringify(config));
    const env = sessionEnv(sandbox, configPath);
    // The daemon asks OpenCode for the model's variants in its own environment: the sandbox's here.
    const app = await e2e.makeApp({ baseDir: sandbox.work, agentEnv: { env: { ...process.env, ...env } } });
    const bad = await post(app, '/v1/sessions/bad-variant', { agent: 'opencode', cwd: sandbox.work, env, permissionMode: 'bypass', variant: 'extreme' });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json()).toMatchObject({ field: 'variant', valid: ['deep'], model: 'fake/fake-model' });
    const res = await post(app, `/v1/sessions/${SID}`, { agent: 'opencode', cwd: sandbox.work, env, permissionMode: 'bypass', variant: 'deep' });
    expect(res.statusCode, res.body).toBe(200);
    const turn = await sendTurn(app, SID, 'Think about it.');
    await expectWellFormedTurn(app, SID, turn, 'Think about it.');
    const asked = fake.requests.filter((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes('Think about it.'));
    expect(asked.at(-1)?.body).toMatchObject({ reasoning_effort: 'high' });
    expectNoUnparsed(await allEvents());
  });

  it('lists models and modes from a short-lived server, and leaves nothing running', async () => {
    const sandbox = e2e.makeSandbox('opencode-e2e');
    const fake = await e2e.startFakeModel({ scenario: [[{ text: 'unused' }]] });
    seedConfigDir(sandbox);
    const configPath = join(sandbox.root, 'opencode.json');
    writeFileSync(configPath, JSON.stringify(opencodeConfig(fake)));
    const env = { ...sandbox.env, OPENCODE_CONFIG: configPath, OPENCODE_DISABLE_MODELS_FETCH: '1', npm_config_offline: 'true' };
    const driver = createOpencodeDriver({ maxLineChars: 1 << 20, killGraceMs: 1000, startTimeoutMs: 30_000, stderrHeadLines: 20, stderrTailLines: 50 });
    const logger = { debug: () => {}, info: () => {}, warn: () => {} };
    // This test process's own opencode children (other suites may run servers at the same time).
    const servers = () => processes().filter((p) => p.ppid === process.pid && p.comm.startsWith('opencode')).map((p) => p.pid);
    const models = await driver.listModels!({ boundary: { env: { ...process.env, ...env } }, logger, timeoutMs: 30_000 });
    expect(models.models).toContainEqual({ id: 'fake/fake-model', name: 'Fake model' });
    expect(models.defaultModel).toBeTypeOf('string');
    const modes = await driver.listModes!({ boundary: { env: { ...process.env, ...env } }, logger, timeoutMs: 30_000 });
    expect(modes.map((m) => m.id)).toEqual(expect.arrayContaining(['build', 'plan']));
    expect(modes.map((m) => m.id)).not.toContain('compaction');
    expect(servers()).toEqual([]);
    // Two servers start one after the other, each allowed 30 s as the driver allows it: ~4 s each
    // on a quiet machine, over 10 s each under a full run's load (it timed out at the default 20 s).
  }, 65_000);
});
