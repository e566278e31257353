// Claude Code's sub-agents end to end: the real pinned CLI (2.1.337) runs an Agent call (its Task
// tool) against the fake model, whose sub-agent makes its own requests; the daemon's stream must
// attribute the sub-agent's work to that call. One daemon and one fake model for the file: each
// request picks its scenario by the `[scenario:NAME]` marker of its first prompt (the parent's or
// the sub-agent's), each test has its own session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { startFakeModel, type FakeModel } from '../../fake-model/server.js';
import { eventsUntil, expectWellFormedTurn, lastSequence, sendTurn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, makeApp, post, waitFor } from '../../support/helpers.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import { claudeEnv } from './harness.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['claude']);

// run_in_background false: 2.1.337 runs sub-agents in the background unless told otherwise, and
// the turn would end before the sub-agent's work (docs/claude.md, "Sub-agents").
const agentCall = (prompt: string) => ({ call: 'Agent', input: { description: 'Look around', prompt, subagent_type: 'general-purpose', run_in_background: false } });
const SCENARIOS = {
  main: [[{ text: 'Delegating.' }, agentCall('[scenario:sub] List the files.')], [{ text: 'The sub-agent is done.' }]],
  sub: [[{ text: 'Listing.' }, { tool: 'shell' as const, command: 'echo sub-was-here' }], [{ text: 'Found sub-was-here.' }]],
  asks: [[agentCall('[scenario:asksub] Run it.')], [{ text: 'It ran.' }]],
  asksub: [[{ tool: 'write' as const, path: 'from-sub.txt', content: 'asked-first\n' }], [{ text: 'Wrote it.' }]],
  slow: [[agentCall('[scenario:slowsub] Take your time.')], [{ text: 'after the interrupt' }]],
  slowsub: [[{ text: 'Thinking about it' }, { sleepMs: 8_000 }, { text: ' for a long time.' }], [{ text: 'never' }]],
};

let sandbox: Sandbox;
let fake: FakeModel;
let app: App;

beforeAll(async () => {
  sandbox = makeSandbox('claude-subagents');
  fake = await startFakeModel({ scenarios: SCENARIOS });
  app = await makeApp({ baseDir: sandbox.work });
});
afterAll(async () => {
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
});

async function create(sid: string, permissionMode = 'bypass'): Promise<void> {
  const res = await post(app, `/v1/sessions/${sid}`, { agent: 'claude', cwd: sandbox.work, env: claudeEnv(fake, sandbox, false), permissionMode });
  expect(res.statusCode, res.body).toBe(200);
}

const of = <T extends UniversalEvent['type']>(events: UniversalEvent[], type: T) => events.filter((e): e is Extract<UniversalEvent, { type: T }> => e.type === type);
const sub = (e: UniversalEvent) => (e.data as { subagent_id?: string }).subagent_id;
const agentCallItem = (events: UniversalEvent[]) =>
  of(events, 'item.completed').find((e) => e.data.item.kind === 'tool_call' && e.data.item.content.some((p) => p.type === 'tool_call' && p.name === 'Agent'));

describe('claude sub-agents (real CLI, fake model)', () => {
  it("attributes a sub-agent's items to the Agent tool call that launched it", async () => {
    await create('sa-1');
    const turn = await sendTurn(app, 'sa-1', '[scenario:main] Please delegate.', { timeoutMs: 30_000 });
    await expectWellFormedTurn(app, 'sa-1', turn, '[scenario:main] Please delegate.');
    const events = turn.events;
    const call = agentCallItem(events);
    expect(call, JSON.stringify(events.map((e) => e.type))).toBeDefined();
    const [started] = of(events, 'subagent.started');
    const [ended] = of(events, 'subagent.ended');
    expect(started?.data).toMatchObject({ parent_item_id: call!.data.item.item_id, description: 'Look around', prompt: '[scenario:sub] List the files.', agent_type: 'general-purpose', background: false });
    expect(started!.data.native_subagent_id).toEqual(expect.any(String));
    const id = started!.data.subagent_id;
    expect(ended?.data).toMatchObject({ subagent_id: id, parent_item_id: call!.data.item.item_id, outcome: 'completed' });

    // The sub-agent's own items (its Bash call and result) say so; the main agent's do not.
    const completed = of(events, 'item.completed');
    const bash = completed.find((e) => e.data.item.content.some((p) => p.type === 'tool_call' && p.name === 'Bash'));
    const bashResult = completed.find((e) => e.data.item.content.some((p) => p.type === 'tool_result' && p.output.includes('sub-was-here')));
    expect(sub(bash!)).toBe(id);
    expect(sub(bashResult!)).toBe(id);
    // Every item that starts between its start and its end is the sub-agent's (the main agent's
    // message that made the call completes in that window too, as the main agent's).
    const itemId = (e: UniversalEvent) => (e.type === 'item.delta' ? e.data.item_id : (e.data as { item: { item_id: string } }).item.item_id);
    const window = events.slice(events.indexOf(started!) + 1, events.indexOf(ended!));
    const born = new Set(of(window, 'item.started').map(itemId));
    const inside = events.filter((e) => e.type.startsWith('item.') && born.has(itemId(e)));
    expect(inside.length).toBeGreaterThan(4);
    expect(new Set(inside.map(sub))).toEqual(new Set([id]));
    expect(of(window, 'item.started').filter((e) => sub(e) === undefined)).toEqual([]);
    expect(sub(call!)).toBeUndefined();
    const says = (text: string) => completed.find((e) => e.data.item.kind === 'message' && e.data.item.content.some((p) => p.type === 'text' && p.text === text));
    expect(sub(says('The sub-agent is done.')!)).toBeUndefined();
    // 2.1.337 prints a sub-agent's tool calls but not its text: its last words are the summary.
    expect(ended!.data.summary).toBe('Found sub-was-here.');
    expect(says('Found sub-was-here.')).toBeUndefined();
    // Its messages (opened by its tool_use lines) complete before it ends, inside it.
    const subMessages = completed.filter((e) => e.data.item.kind === 'message' && sub(e) === id);
    expect(subMessages.length).toBeGreaterThan(0);
    for (const m of subMessages) expect(events.indexOf(m)).toBeLessThan(events.indexOf(ended!));
    // The sub-agent asked the fake model itself.
    expect(fake.requests.some((r) => r.scenario === 'sub')).toBe(true);
    expectNoUnparsed(await getEvents(app, 'sa-1'));
  }, 60_000);

  it('an interrupt mid-sub-agent ends the sub-agent and the turn; the session goes on', async () => {
    await create('sa-2');
    const from = await lastSequence(app, 'sa-2');
    expect((await post(app, '/v1/sessions/sa-2/messages', { message: '[scenario:slow] Delegate slowly.' })).statusCode).toBe(204);
    await eventsUntil(app, 'sa-2', from, ['subagent.started'], 30_000);
    // The sub-agent's request is in flight (the fake model pauses mid-answer).
    await waitFor(() => (fake.requests.some((r) => r.scenario === 'slowsub') ? true : undefined), 20_000, 'the sub-agent asking the model');
    const t0 = Date.now();
    expect((await post(app, '/v1/sessions/sa-2/interrupt')).statusCode).toBe(202);
    const events = await eventsUntil(app, 'sa-2', from, ['turn.ended', 'session.ended'], 10_000);
    const ms = Date.now() - t0;
    console.log(`[claude sub-agents] interrupt → turn.ended: ${ms} ms`);
    expect(ms).toBeLessThan(5_000); // well before the sub-agent's 8 s pause ends
    const [started] = of(events, 'subagent.started');
    const [ended] = of(events, 'subagent.ended');
    expect(ended?.data).toMatchObject({ subagent_id: started!.data.subagent_id, outcome: 'interrupted' });
    expect(events.indexOf(ended!)).toBeLessThan(events.findIndex((e) => e.type === 'turn.ended'));
    expect(of(events, 'turn.ended')[0]?.data.metadata).toMatchObject({ reason: 'interrupted' });

    // The sub-agent is stopped: no request of its own after the interrupt, and the session works.
    const subRequests = fake.requests.filter((r) => r.scenario === 'slowsub').length;
    const next = await sendTurn(app, 'sa-2', 'Carry on.', { timeoutMs: 30_000 });
    expect(of(next.events, 'turn.ended')[0]?.data.metadata).toMatchObject({ reason: 'completed' });
    expect(fake.requests.filter((r) => r.scenario === 'slowsub').length).toBe(subRequests);
    expect(of(next.events, 'subagent.started')).toEqual([]);
    expectNoUnparsed(await getEvents(app, 'sa-2'));
  }, 60_000);

  it('a permission the sub-agent asks for says so, and so does its resolution', async () => {
    await create('sa-3', 'default');
    const turn = await sendTurn(app, 'sa-3', '[scenario:asks] Delegate a command.', { timeoutMs: 30_000 });
    const started = of(turn.events, 'subagent.started')[0];
    const asked = of(turn.events, 'permission.requested')[0];
    expect(asked, JSON.stringify(turn.events.map((e) => e.type))).toBeDefined();
    expect(asked!.data).toMatchObject({ action: 'Write', subagent_id: started!.data.subagent_id });
    expect((await post(app, `/v1/sessions/sa-3/permissions/${encodeURIComponent(asked!.data.permission_id)}/reply`, { reply: 'once' })).statusCode).toBe(204);
    const rest = await eventsUntil(app, 'sa-3', turn.from, ['turn.ended'], 30_000);
    expect(of(rest, 'permission.resolved')[0]?.data).toMatchObject({ status: 'approved', subagent_id: started!.data.subagent_id });
    const result = of(rest, 'item.completed').find((e) => e.data.item.kind === 'tool_result' && e.data.item.content.some((p) => p.type === 'file_ref' && p.path === 'from-sub.txt'));
    expect(sub(result!)).toBe(started!.data.subagent_id);
    expect(readFileSync(join(sandbox.work, 'from-sub.txt'), 'utf8')).toBe('asked-first\n');
    expect(of(rest, 'subagent.ended')[0]?.data).toMatchObject({ outcome: 'completed' });
    expectNoUnparsed(await getEvents(app, 'sa-3'));
  }, 60_000);
});
