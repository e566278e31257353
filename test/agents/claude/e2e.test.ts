// Claude end to end: the daemon's HTTP API, the real pinned Claude Code (2.1.337) as the session's
// agent process, and the fake model server behind it. Every session runs in a throwaway sandbox
// (HOME, TMPDIR, XDG_* and the work dir), so nothing reads or writes the machine's own config.
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../src/schema/api.js';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';
import type { Scenario } from '../../fake-model/server.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { eventsUntil, expectWellFormedTurn, lastSequence, sendTurn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { claudeEnv } from './harness.js';
import { projectSlug } from './harness-normalize.js';
import { leftovers, processes } from '../../support/procs.js';

const SID = 'claude-e2e';
// The driver adds IS_SANDBOX itself for bypass mode, so the harness's own flag stays off here.
const e2e = agentE2E({ agent: 'claude', sid: SID, env: ({ fake, sandbox }) => claudeEnv(fake!, sandbox, false) });

/** A daemon with one claude session against a fake model answering `scenario`. */
function start(scenario: Scenario, permissionMode: PermissionMode = 'bypass', extra: Record<string, unknown> = {}) {
  const { envExtra, ...body } = extra as { envExtra?: Record<string, string> };
  return e2e.start({ scenario, permissionMode, body, ...(envExtra ? { env: envExtra } : {}) });
}

/** The pid of the claude process working in `dir` (found in /proc, as a client would not know it). */
function claudePid(dir: string): number {
  const found = processes().filter((p) => {
    try {
      return readlinkSync(`/proc/${p.pid}/cwd`) === dir && p.state !== 'Z' && p.comm.startsWith('claude');
    } catch {
      return false;
    }
  });
  expect(found.map((p) => p.comm), 'one claude process in the work dir').toHaveLength(1);
  return found[0]!.pid;
}

const completed = (events: UniversalEvent[]): UniversalItem[] =>
  events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
const assistantMessages = (events: UniversalEvent[]) => completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant');
const textOf = (item: UniversalItem | undefined) =>
  (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const deltasOf = (events: UniversalEvent[], itemId: string) =>
  events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === itemId ? [e.data.delta] : []));

const allEvents = () => e2e.events();

describe('claude e2e (real CLI, fake model)', () => {
  it('streams text as deltas that add up to the completed message', async () => {
    await start([[{ text: 'Hello from the fake model, streamed in several pieces.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Say hello.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Say hello.');
    const [reply] = assistantMessages(turn.events);
    expect(textOf(reply)).toBe('Hello from the fake model, streamed in several pieces.');
    const deltas = deltasOf(turn.events, reply!.item_id);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(textOf(reply));
    expectNoUnparsed(await allEvents());
  });

  it('runs a shell tool: tool_call and tool_result parented to the message', async () => {
    await start([[{ text: 'Let me run it.' }, { tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Run echo.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Run echo.');
    const items = completed(turn.events);
    const announce = items.find((i) => i.kind === 'message' && i.role === 'assistant' && textOf(i) === 'Let me run it.');
    const call = items.find((i) => i.kind === 'tool_call');
    const result = items.find((i) => i.kind === 'tool_result');
    expect(announce).toBeDefined();
    expect(call?.content[0]).toMatchObject({ type: 'tool_call', name: 'Bash' });
    const callPart = call!.content.find((p) => p.type === 'tool_call');
    expect(JSON.parse(callPart?.type === 'tool_call' ? callPart.arguments : '{}')).toMatchObject({ command: 'echo hello-from-shell' });
    const resultPart = result?.content.find((p) => p.type === 'tool_result');
    expect(resultPart?.type === 'tool_result' ? resultPart.output : '').toContain('hello-from-shell');
    expect(resultPart?.type === 'tool_result' ? resultPart.call_id : undefined).toBe(callPart?.type === 'tool_call' ? callPart.call_id : 'x');
    expect(call!.parent_id).toBe(announce!.item_id);
    expect(result!.parent_id).toBe(announce!.item_id);
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('It printed hello-from-shell.');
    expectNoUnparsed(await allEvents());
  });

  it('writes a file', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'hello.txt', content: 'hello\n' }], [{ text: 'Wrote hello.txt.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Write hello.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write hello.txt.');
    expect(readFileSync(join(sandbox.work, 'hello.txt'), 'utf8')).toBe('hello\n');
    // The file change is in the stream: the tool call carries a file_ref with a diff.
    const call = completed(turn.events).find((i) => i.kind === 'tool_call');
    expect(call?.content).toContainEqual(expect.objectContaining({ type: 'file_ref', path: 'hello.txt', action: 'write', diff: expect.stringContaining('+hello') }));
    expectNoUnparsed(await allEvents());
  });

  it.each([
    ['once', true],
    ['reject', false],
  ] as const)('asks permission for a write; reply %s', async (reply, written) => {
    const { sandbox } = await start([[{ tool: 'write', path: 'notes.txt', content: 'notes\n' }], [{ text: 'Finished.' }]], 'default');
    const turn = await sendTurn(e2e.app, SID, 'Write notes.txt.');
    const requested = turn.events.find((e) => e.type === 'permission.requested');
    expect(requested, JSON.stringify(turn.events.map((e) => e.type))).toBeDefined();
    const permissionId = requested!.type === 'permission.requested' ? requested!.data.permission_id : '';
    expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'waiting' });
    expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(false);

    const res = await post(e2e.app, `/v1/sessions/${SID}/permissions/${encodeURIComponent(permissionId)}/reply`, { reply });
    expect(res.statusCode, res.body).toBe(204);
    const rest = await eventsUntil(e2e.app, SID, turn.from);
    const resolved = rest.filter((e) => e.type === 'permission.resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]!.type === 'permission.resolved' && resolved[0]!.data.permission_id).toBe(permissionId);
    expect(rest.at(-1)?.type).toBe('turn.ended');
    expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(written);
    expectNoUnparsed(await allEvents());
  });

  it("'always' allows with the CLI's permission suggestion: the next write is not asked", async () => {
    const { sandbox } = await start(
      [[{ tool: 'write', path: 'a.txt', content: 'a\n' }], [{ tool: 'write', path: 'b.txt', content: 'b\n' }], [{ text: 'Both written.' }]],
      'default',
    );
    const turn = await sendTurn(e2e.app, SID, 'Write a.txt and b.txt.');
    const requested = turn.events.find((e) => e.type === 'permission.requested');
    const permissionId = requested?.type === 'permission.requested' ? requested.data.permission_id : '';
    const res = await post(e2e.app, `/v1/sessions/${SID}/permissions/${encodeURIComponent(permissionId)}/reply`, { reply: 'always' });
    expect(res.statusCode, res.body).toBe(204);
    const rest = await eventsUntil(e2e.app, SID, turn.from);
    // updatedPermissions = [{type:'setMode', mode:'acceptEdits', destination:'session'}]: b.txt is not asked.
    expect(rest.filter((e) => e.type === 'permission.requested')).toHaveLength(1);
    expect(readFileSync(join(sandbox.work, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(sandbox.work, 'b.txt'), 'utf8')).toBe('b\n');
    expectNoUnparsed(await allEvents());
  });

  it('answers an AskUserQuestion; the model is told the chosen label', async () => {
    const question = { question: 'Which color?', header: 'Color', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue', description: 'cool' }], multiSelect: false };
    await start([[{ call: 'AskUserQuestion', input: { questions: [question] } }], [{ text: 'Blue it is.' }]], 'default');
    const turn = await sendTurn(e2e.app, SID, 'Ask me a color.');
    const asked = turn.events.find((e) => e.type === 'question.requested');
    expect(asked?.type === 'question.requested' ? asked.data : undefined).toMatchObject({ prompt: 'Which color?', options: ['Red', 'Blue'] });
    const questionId = asked?.type === 'question.requested' ? asked.data.question_id : '';
    const res = await post(e2e.app, `/v1/sessions/${SID}/questions/${encodeURIComponent(questionId)}/reply`, { answers: [['Blue']] });
    expect(res.statusCode, res.body).toBe(204);
    const rest = await eventsUntil(e2e.app, SID, turn.from);
    expect(rest.some((e) => e.type === 'question.resolved')).toBe(true);
    expect(textOf(assistantMessages(rest).at(-1))).toBe('Blue it is.');
    const last = e2e.fake.requests.filter((r) => r.path.includes('messages')).at(-1)!;
    expect(JSON.stringify(last.body)).toContain('\\"Which color?\\"=\\"Blue\\"');
    expectNoUnparsed(await allEvents());
  });

  it('rejects an AskUserQuestion: question.resolved rejected, the model is told no', async () => {
    const question = { question: 'Which color?', header: 'Color', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue', description: 'cool' }], multiSelect: false };
    await start([[{ call: 'AskUserQuestion', input: { questions: [question] } }], [{ text: 'No answer, fine.' }]], 'default');
    const turn = await sendTurn(e2e.app, SID, 'Ask me a color.');
    const asked = turn.events.find((e) => e.type === 'question.requested');
    const questionId = asked?.type === 'question.requested' ? asked.data.question_id : '';
    const rejected = await post(e2e.app, `/v1/sessions/${SID}/questions/${encodeURIComponent(questionId)}/reject`);
    expect(rejected.statusCode, rejected.body).toBe(204);
    const rest = await eventsUntil(e2e.app, SID, turn.from);
    expect(rest.find((e) => e.type === 'question.resolved')?.data).toMatchObject({ status: 'rejected' });
    expect(textOf(assistantMessages(rest).at(-1))).toBe('No answer, fine.');
    const result = completed(rest).find((i) => i.kind === 'tool_result');
    expect(result?.status).toBe('failed');
    expectNoUnparsed(await allEvents());
  });

  it('acceptEdits mode: a file write is not asked', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'auto.txt', content: 'auto\n' }], [{ text: 'Wrote it.' }]], 'acceptEdits');
    const turn = await sendTurn(e2e.app, SID, 'Write auto.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write auto.txt.');
    expect(turn.events.some((e) => e.type === 'permission.requested')).toBe(false);
    expect(readFileSync(join(sandbox.work, 'auto.txt'), 'utf8')).toBe('auto\n');
    expectNoUnparsed(await allEvents());
  });

  it('plan mode: the CLI runs in plan mode (ExitPlanMode is not offered to the model in -p mode on 2.1.337)', async () => {
    await start([[{ text: 'Here is my plan.' }]], 'plan');
    const started = (await allEvents()).find((e) => e.type === 'session.started');
    expect(started?.data).toMatchObject({ metadata: { current_permission_mode: 'plan' } });
    const turn = await sendTurn(e2e.app, SID, 'Make a plan.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Make a plan.');
    // What the model is offered in plan mode, recorded so a CLI upgrade that adds it shows up here.
    const tools = JSON.stringify(e2e.fake.requests.at(-1)?.body).match(/"name":"(\w+)"/g) ?? [];
    expect(tools).not.toContain('"name":"ExitPlanMode"');
    expectNoUnparsed(await allEvents());
  });

  it('interrupts mid-stream; the turn ends and the next turn works on the same process', async () => {
    const { sandbox } = await start([
      [{ text: 'Counting slowly: one two three' }, { sleepMs: 3_000 }, { text: ' four five' }],
      [{ text: 'never served' }],
    ]);
    const pid = claudePid(sandbox.work);
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Count.' })).statusCode).toBe(204);
    await eventsUntil(e2e.app, SID, from, ['item.delta']);
    const t0 = Date.now();
    const res = await post(e2e.app, `/v1/sessions/${SID}/interrupt`);
    expect(res.statusCode, res.body).toBe(202);
    const events = await eventsUntil(e2e.app, SID, from, ['turn.ended', 'session.ended']);
    const interruptMs = Date.now() - t0;
    console.log(`[claude e2e] interrupt → turn.ended: ${interruptMs} ms`);
    expect(interruptMs).toBeLessThan(2_000); // well before the model's 3 s pause ends
    expect(events.some((e) => e.type === 'session.ended')).toBe(false);
    // Claude Code ends an interrupted turn with an error result; the daemon knows it asked.
    expect(events.find((e) => e.type === 'turn.ended')).toMatchObject({ data: { metadata: { reason: 'interrupted' } } });

    const second = await sendTurn(e2e.app, SID, 'Go on.');
    await expectWellFormedTurn(e2e.app, SID, second, 'Go on.');
    // Claude Code drops the interrupted partial answer from the conversation: the next request
    // carries the first prompt, "[Request interrupted by user]" and the new prompt in one user
    // message and no assistant turn, so the fake model serves its turn 0 again, this time in full.
    expect(assistantMessages(second.events).map(textOf)).toEqual(['Counting slowly: one two three four five']);
    const last = e2e.fake.requests.filter((r) => r.path.includes('messages')).at(-1)!;
    expect(JSON.stringify(last.body)).toContain('[Request interrupted by user]');
    expect(claudePid(sandbox.work)).toBe(pid);
    expectNoUnparsed(await allEvents());
  });

  it('runs two turns on one warm process, measures the latency to the first agent event, and keeps the usage totals', async () => {
    const { sandbox } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    const pid = claudePid(sandbox.work);
    const latencies: number[] = [];
    for (const word of ['FIRST', 'SECOND']) {
      const from = await lastSequence(e2e.app, SID);
      const t0 = Date.now();
      expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: `Reply ${word}.` })).statusCode).toBe(204);
      await waitFor(async () => (await getEvents(e2e.app, SID, from)).some((e) => e.source === 'agent'), 10_000, 'the first agent event');
      latencies.push(Date.now() - t0);
      const events = await eventsUntil(e2e.app, SID, from);
      expect(assistantMessages(events).map(textOf)).toEqual([word]);
    }
    console.log(`[claude e2e] POST /messages → first agent event: first turn ${latencies[0]} ms, second (warm) turn ${latencies[1]} ms`);
    expect(claudePid(sandbox.work)).toBe(pid);
    const all = await allEvents();
    expectNoUnparsed(all);
    // Live usage (docs/budgets.md): a usage.updated per model call as it ends, whose last totals are
    // the sum of the turns' usage, and which GET /v1/sessions/{id} returns. Claude's cost is its own: each turn's
    // cost_usd is its share of total_cost_usd, cumulative over the process, so they add up to the last one.
    const ends = all.flatMap((e) => (e.type === 'turn.ended' ? [e.data.metadata] : []));
    const updates = all.flatMap((e) => (e.type === 'usage.updated' ? [e.data] : []));
    expect(ends).toHaveLength(2);
    expect(updates.filter((u) => u.scope === 'step')).toHaveLength(2);
    const sum = (key: 'input_tokens' | 'output_tokens') => ends.reduce((n, m) => n + (m.usage?.[key] ?? 0), 0);
    expect(sum('input_tokens')).toBeGreaterThan(0);
    const totals = updates.at(-1)!.totals;
    expect(totals).toMatchObject({ input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens'), cost_source: 'agent' });
    expect(totals.cost_usd).toBeCloseTo(ends.reduce((n, m) => n + (m.cost_usd ?? 0), 0), 9);
    expect(totals.cost_usd).toBeCloseTo(ends.at(-1)!.total_cost_usd as number, 9);
    const info = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ usage: unknown }>();
    expect(info.usage).toEqual(updates.at(-1)!.totals);
  });

  it('recovers from a model error (HTTP 500 once, then success)', async () => {
    await start([[{ error: 500, times: 1, retryAfterMs: 10 }, { text: 'Recovered after the retry.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Try.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Try.');
    expect(assistantMessages(turn.events).map(textOf)).toEqual(['Recovered after the retry.']);
    expect(e2e.fake.requests.filter((r) => r.status === 500)).toHaveLength(1);
    expectNoUnparsed(await allEvents());
  });

  it('recovers from an overloaded model (HTTP 529 once, then success)', async () => {
    await start([[{ error: 529, times: 1, retryAfterMs: 10 }, { text: 'Recovered after overload.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Try.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Try.');
    expect(assistantMessages(turn.events).map(textOf)).toEqual(['Recovered after overload.']);
    expect(e2e.fake.requests.filter((r) => r.status === 529)).toHaveLength(1);
    // The retry is visible in the stream as a status item.
    expect(completed(turn.events).some((i) => i.kind === 'status')).toBe(true);
    expectNoUnparsed(await allEvents());
  });

  it('sends an image attachment to Claude as an image block, and shows it in the user item', async () => {
    const { sandbox } = await start([[{ text: 'I see a picture.' }]]);
    // A 1×1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    writeFileSync(join(sandbox.work, 'dot.png'), png);
    const turn = await sendTurn(e2e.app, SID, 'What is this?', { attachments: [{ path: 'dot.png', mime: 'image/png' }] });
    await expectWellFormedTurn(e2e.app, SID, turn, 'What is this?');
    const user = completed(turn.events).find((i) => i.role === 'user');
    expect(user?.content).toContainEqual({ type: 'image', path: join(sandbox.work, 'dot.png'), mime: 'image/png' });
    const sent = JSON.stringify(e2e.fake.requests.at(-1)?.body ?? '');
    expect(sent).toContain('"type":"image"');
    expect(sent).toContain(png.toString('base64'));
    expectNoUnparsed(await allEvents());
  });

  it('streams thinking as deltas and keeps it as a reasoning part', async () => {
    await start([[{ thinking: 'Let me think about colours.' }, { text: 'Blue.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Pick a colour.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Pick a colour.');
    const [reply] = assistantMessages(turn.events);
    expect(reply?.content).toEqual([
      { type: 'reasoning', text: 'Let me think about colours.', visibility: 'public' },
      { type: 'text', text: 'Blue.' },
    ]);
    expect(deltasOf(turn.events, reply!.item_id).join('')).toBe('Let me think about colours.Blue.');
    expectNoUnparsed(await allEvents());
  });

  it('reports a model that keeps failing as an error event, and the turn still ends', async () => {
    await start([[{ error: 500, retryAfterMs: 10, message: 'upstream down' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Try.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Try.');
    const error = turn.events.find((e) => e.type === 'error');
    expect(error?.source).toBe('agent');
    expect(error?.type === 'error' ? error.data.message : '').toMatch(/500|upstream down|API Error/i);
    expect(turn.events.at(-1)?.type).toBe('turn.ended');
    expect(e2e.fake.requests.filter((r) => r.status === 500).length).toBeGreaterThanOrEqual(2);
    expectNoUnparsed(await allEvents());
  });

  it('calls an MCP tool given in the create request; the server stays visible on the call', async () => {
    const server = fileURLToPath(new URL('../../support/mcp-echo-server.mjs', import.meta.url));
    await start([[{ call: 'mcp__probe__echo', input: { text: 'ping' } }], [{ text: 'The MCP tool answered.' }]], 'bypass', {
      mcp: { probe: { command: process.execPath, args: [server] } },
      // 2.1.337 otherwise defers MCP tools behind its ToolSearch tool, which the fake model does not drive.
      envExtra: { ENABLE_TOOL_SEARCH: 'false' },
    });
    const turn = await sendTurn(e2e.app, SID, 'Use the probe.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Use the probe.');
    const items = completed(turn.events);
    const call = items.find((i) => i.kind === 'tool_call');
    expect(call?.content).toContainEqual(expect.objectContaining({ type: 'tool_call', name: 'mcp__probe__echo' }));
    expect(call?.content).toContainEqual({ type: 'json', json: { mcp_server: 'probe', tool: 'echo' } });
    const result = items.find((i) => i.kind === 'tool_result');
    expect(JSON.stringify(result?.content)).toContain('echo: ping');
    expectNoUnparsed(await allEvents());
  });

  it("re-opens Claude's own session with nativeSessionId: the conversation continues", async () => {
    const { env } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    await sendTurn(e2e.app, SID, 'Reply with exactly the single word FIRST.');
    const nativeId = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ nativeSessionId?: string }>().nativeSessionId;
    expect(nativeId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    const spawnedAt = Date.now();
    const res = await post(e2e.app, '/v1/sessions/again', { agent: 'claude', cwd: e2e.sandbox.work, env, permissionMode: 'bypass', nativeSessionId: nativeId });
    expect(res.statusCode, res.body).toBe(200);
    console.log(`[claude e2e] create with --resume (spawn + initialize): ${Date.now() - spawnedAt} ms`);
    // The same latency as the warm-process test measures, for a follow-up turn on a fresh
    // process started with --resume (recorded in docs/performance.md).
    const from = await lastSequence(e2e.app, 'again');
    const t0 = Date.now();
    expect((await post(e2e.app, '/v1/sessions/again/messages', { message: 'Reply with exactly the single word SECOND.' })).statusCode).toBe(204);
    await waitFor(async () => (await getEvents(e2e.app, 'again', from)).some((e) => e.source === 'agent'), 10_000, 'the first agent event');
    console.log(`[claude e2e] POST /messages → first agent event: follow-up turn on a fresh --resume process ${Date.now() - t0} ms`);
    const events = await eventsUntil(e2e.app, 'again', from);
    expect(textOf(assistantMessages(events).at(-1))).toBe('SECOND');
    // The resumed process sent the first exchange back to the model: it remembered.
    expect(JSON.stringify(e2e.fake.requests.at(-1)?.body)).toContain('FIRST');
    expectNoUnparsed(await getEvents(e2e.app, 'again'));
  });

  it('reports a crash (kill -9) as an error and session.ended with the exit', async () => {
    const { sandbox } = await start([[{ text: 'never' }]]);
    const pid = claudePid(sandbox.work);
    process.kill(pid, 'SIGKILL');
    const events = await eventsUntil(e2e.app, SID, 0, ['session.ended']);
    const error = events.find((e) => e.type === 'error');
    expect(error?.type === 'error' ? error.data.code : undefined).toBe('agent_exited');
    const ended = events.find((e) => e.type === 'session.ended');
    expect(ended?.type === 'session.ended' ? ended.data : undefined).toMatchObject({ reason: 'error', terminated_by: 'agent', exit_code: null });
    expect(ended?.type === 'session.ended' ? ended.data.message : '').toContain('SIGKILL');
    expect(leftovers(pid)).toEqual([]);
    expectNoUnparsed(events);
  });

  it('terminate ends the session and leaves no process behind', async () => {
    const { sandbox } = await start([[{ text: 'unused' }]]);
    const pid = claudePid(sandbox.work);
    const res = await e2e.app.app.inject({ method: 'POST', url: `/v1/sessions/${SID}/terminate` });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const events = await eventsUntil(e2e.app, SID, 0, ['session.ended']);
    const ended = events.find((e) => e.type === 'session.ended');
    expect(ended?.type === 'session.ended' ? ended.data : undefined).toMatchObject({ reason: 'terminated', terminated_by: 'daemon' });
    expect(leftovers(pid)).toEqual([]);
    expect(existsSync(`/proc/${pid}`) && readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z')).toBe(false);
    expectNoUnparsed(events);
  });
});

/** What the model was sent in request `r`: each message as `role: text` (other blocks as `[type]`).
 *  Claude Code's own `system` messages (the environment, reminders) are left out unless asked for. */
const conversation = (r: { body?: unknown }, withSystem = false) =>
  ((r.body as { messages?: { role: string; content: string | { type: string; text?: string }[] }[] })?.messages ?? [])
    .map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('')}`)
    .filter((m) => withSystem || !m.startsWith('system: '));
const modelCalls = () => e2e.fake.requests.filter((r) => r.path.includes('messages') && !r.toolless);
const untilTurnsEnded = (n: number, id = SID) =>
  waitFor(async () => {
    const events = await getEvents(e2e.app, id);
    return events.filter((e) => e.type === 'turn.ended').length >= n ? events : undefined;
  }, 20_000, `${n} turns ended in ${id}`);
const deliver = async (message: string, delivery: string, id = SID) => {
  const res = await post(e2e.app, `/v1/sessions/${id}/messages`, { message, delivery });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<{ messageId: string; status: string }>();
};
/** Once the model's answer streams (the user item's own delta comes first, before the CLI has even asked the model). */
const untilAnswering = (from: number, text: string) =>
  waitFor(async () => (await getEvents(e2e.app, SID, from)).some((e) => e.type === 'item.delta' && e.data.delta.includes(text)), 10_000, `a delta with '${text}'`);
const turnsOf = (events: UniversalEvent[]) => events.filter((e) => e.type === 'turn.ended').map((e) => e.type === 'turn.ended' && e.data);

describe('claude e2e: messages during a turn and forks (docs/queue-steer-fork.md)', () => {
  it('says what it can in GET /v1/agents; queue: a message sent during a slow turn runs as its own next turn', async () => {
    await start([[{ text: 'Slow answer, part one.' }, { sleepMs: 2_000 }, { text: ' Part two.' }], [{ text: 'Answer to the queued one.' }]]);
    const agents = (await e2e.app.app.inject({ method: 'GET', url: '/v1/agents' })).json<{ agents: { id: string; capabilities: Record<string, boolean> }[] }>();
    expect(agents.agents.find((a) => a.id === 'claude')?.capabilities).toMatchObject({ steer: true, fork: true, forkAtTurn: true });

    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Answer slowly.' })).statusCode).toBe(204);
    await untilAnswering(from, 'part');
    const queued = await deliver('QUEUED question.', 'queue');
    expect(queued.status).toBe('queued');
    const events = await untilTurnsEnded(2);
    expect(events.filter((e) => e.type === 'turn.started').map((e) => e.type === 'turn.started' && e.data.message_id)).toEqual([undefined, queued.messageId]);
    expect(turnsOf(events).map((t) => t && t.metadata.reason)).toEqual(['completed', 'completed']);
    expect(assistantMessages(events).map(textOf)).toEqual(['Slow answer, part one. Part two.', 'Answer to the queued one.']);
    // The model got it as a new user turn after the whole first answer.
    expect(conversation(modelCalls().at(-1)!).slice(-2)).toEqual(['assistant: Slow answer, part one. Part two.', 'user: QUEUED question.']);
    expectNoUnparsed(await allEvents());
  });

  it('interrupt: the running turn stops and the message runs next; a message steered into it and not yet given to the model is dropped, saying so', async () => {
    await start([[{ text: 'Counting slowly: one two' }, { sleepMs: 3_000 }, { text: ' three' }]]);
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Count.' })).statusCode).toBe(204);
    await untilAnswering(from, 'Counting');
    // No model request comes before the answer ends, so the CLI still holds this one when the interrupt comes.
    expect((await deliver('STEERED, then cut.', 'steer')).status).toBe('steered');
    const t0 = Date.now();
    const accepted = await deliver('INTERRUPTING message.', 'interrupt');
    expect(accepted.status).toBe('queued');
    const events = await untilTurnsEnded(2);
    expect(turnsOf(events).map((t) => t && t.metadata.reason)).toEqual(['interrupted', 'completed']);
    expect(events.find((e) => e.type === 'turn.started' && e.data.turn_id === 'turn_2')).toMatchObject({ data: { message_id: accepted.messageId } });
    // Claude Code drops the cut answer: the model gets both prompts and the interruption in one user message.
    const last = conversation(modelCalls().at(-1)!).at(-1)!;
    expect(last).toContain('[Request interrupted by user]');
    expect(last).toContain('INTERRUPTING message.');
    expect(JSON.stringify(modelCalls().at(-1)!.body)).not.toContain('STEERED, then cut.');
    // Said in the interrupted turn (beside the error result Claude Code ends an interrupted turn with).
    const firstEnd = events.find((e) => e.type === 'turn.ended')!.sequence;
    const errors = events.filter((e) => e.type === 'error' && e.sequence < firstEnd).map((e) => e.type === 'error' && e.data.code);
    expect(errors).toEqual(['claude_steer_cancelled', 'claude_error_during_execution']);
    expect(Date.now() - t0).toBeLessThan(8_000);
    expectNoUnparsed(await allEvents());
  });

  it('steer: the model gets the message within the running turn, beside a tool result or as its follow-up', async () => {
    await start([
      [{ text: 'Running it.' }, { tool: 'shell', command: 'sleep 2; echo slept' }],
      [{ text: 'Done, and I saw your note.' }],
      [{ text: 'A slow answer, part one.' }, { sleepMs: 2_000 }, { text: ' Part two.' }],
      [{ text: 'Answer to the steered note.' }],
    ]);
    // 1. During a tool call: the CLI puts the message beside the tool result, in the same model request.
    let from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Run the slow command.' })).statusCode).toBe(204);
    await waitFor(async () => completed(await getEvents(e2e.app, SID, from)).some((i) => i.kind === 'tool_call'), 10_000, 'the tool call');
    const steered = await deliver('STEERED during the tool.', 'steer');
    expect(steered.status).toBe('steered');
    let events = await untilTurnsEnded(1);
    expect(events.find((e) => e.type === 'message.steered')).toMatchObject({ data: { message_id: steered.messageId, turn_id: 'turn_1' } });
    const afterTool = modelCalls().at(-1)!;
    expect(JSON.stringify(afterTool.body)).toContain('STEERED during the tool.');
    // … as a note after the tool result, in the request that carries it: on 2.1.337 a text block
    // right after the tool_result block of the same user message (2.1.330 sent a system message).
    const sent = conversation(afterTool, true);
    const note = sent.findIndex((m) => m.includes('STEERED during the tool.'));
    expect(note).toBe(sent.length - 1);
    expect(sent[note]).toMatch(/^user: \[tool_result\]The user sent a new message while you were working:\nSTEERED during the tool\./);
    expect(textOf(assistantMessages(events).at(-1))).toBe('Done, and I saw your note.');

    // 2. During a plain answer (no further model request): the CLI runs it right after; the turn
    //    ends once that answer is in, so it is still one turn.
    from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Answer slowly.' })).statusCode).toBe(204);
    await untilAnswering(from, 'part');
    const second = await deliver('STEERED during the answer.', 'steer');
    expect(second.status).toBe('steered');
    events = await untilTurnsEnded(2);
    const turn2 = events.filter((e) => e.sequence > from);
    expect(turn2.filter((e) => e.type === 'turn.ended')).toHaveLength(1);
    expect(assistantMessages(turn2).map(textOf)).toEqual(['A slow answer, part one. Part two.', 'Answer to the steered note.']);
    expect(conversation(modelCalls().at(-1)!).slice(-2)).toEqual(['assistant: A slow answer, part one. Part two.', 'user: STEERED during the answer.']);
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    // Nothing runs after the turn: the session is idle, with exactly the two turns.
    await new Promise((r) => setTimeout(r, 500));
    expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'idle' });
    expect(turnsOf(await allEvents())).toHaveLength(2);
    expectNoUnparsed(await allEvents());
  });

  it('forks at the end and after turn 1 of 2, natively; the parent is unchanged', async () => {
    const { sandbox } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }], [{ text: 'THIRD' }]]);
    await sendTurn(e2e.app, SID, 'Q1');
    await sendTurn(e2e.app, SID, 'Q2');
    const parent = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ nativeSessionId: string }>().nativeSessionId;
    const transcript = join(sandbox.home, '.claude', 'projects', projectSlug(sandbox.work), `${parent}.jsonl`);
    const before = readFileSync(transcript, 'utf8');
    const ends = (await allEvents()).filter((e) => e.type === 'turn.ended');

    const ask = async (id: string, question: string) => {
      const n = modelCalls().length;
      const turn = await sendTurn(e2e.app, id, question);
      await expectWellFormedTurn(e2e.app, id, turn, question);
      const sent = modelCalls().slice(n);
      expect(sent.length).toBeGreaterThan(0);
      return { turn, sent: conversation(sent.at(-1)!) };
    };
    const fork = async (from: string, id: string, at?: number) => {
      const res = await post(e2e.app, `/v1/sessions/${from}/fork`, { id, ...(at !== undefined ? { at } : {}) });
      expect(res.statusCode, res.body).toBe(201);
    };
    // The user prompts, without the reminders Claude Code puts in front of the first one.
    const prompts = (sent: string[]) => sent.map((m) => m.replace(/^user: (<system-reminder>[\s\S]*<\/system-reminder>\s*\|?\s*)+/, 'user: '));

    await fork(SID, 'at-end');
    const atEnd = await ask('at-end', 'Q3 after the whole conversation');
    expect(prompts(atEnd.sent)).toEqual(['user: Q1', 'assistant: FIRST', 'user: Q2', 'assistant: SECOND', 'user: Q3 after the whole conversation']);
    expect(textOf(assistantMessages(atEnd.turn.events).at(-1))).toBe('THIRD');

    await fork(SID, 'at-one', ends[0]!.sequence);
    const atOne = await ask('at-one', 'Q2 again, differently');
    expect(prompts(atOne.sent)).toEqual(['user: Q1', 'assistant: FIRST', 'user: Q2 again, differently']);
    // Its turns go on from the copy (turn_2), and it named its own native session.
    expect(atOne.turn.events.find((e) => e.type === 'turn.ended')).toMatchObject({ data: { turn_id: 'turn_2' } });
    const ids = await Promise.all(['at-end', 'at-one'].map(async (id) => (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json<{ nativeSessionId?: string }>().nativeSessionId));
    expect(new Set([parent, ...ids]).size).toBe(3);

    // A fork of a fork branches inside the copied part too (the uuids are copied with it).
    const forkEnds = (await getEvents(e2e.app, 'at-one')).filter((e) => e.type === 'turn.ended');
    await fork('at-one', 'again', forkEnds[0]!.sequence);
    const again = await ask('again', 'Q2 a third way');
    expect(prompts(again.sent)).toEqual(['user: Q1', 'assistant: FIRST', 'user: Q2 a third way']);

    expect(readFileSync(transcript, 'utf8')).toBe(before);
    for (const id of [SID, 'at-end', 'at-one', 'again']) expectNoUnparsed(await getEvents(e2e.app, id));
  });
});

describe('claude without an executable', () => {
  it('answers 501 agent_not_available telling how to install it', async () => {
    const app = await e2e.makeApp({ config: { claudeBin: '/nonexistent/claude' } });
    const res = await post(app, '/v1/sessions/no-claude', { agent: 'claude' });
    expect(res.statusCode, res.body).toBe(501);
    expect(res.json()).toMatchObject({ code: 'agent_not_available', agent: 'claude' });
    expect(res.json().detail).toContain('agentwire install-agent claude');
  });
});
