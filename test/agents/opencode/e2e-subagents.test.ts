// OpenCode's sub-agents end to end: the real pinned OpenCode (1.18.33) runs a `task` call against
// the fake model; its sub-agent runs as a child session on the same server, whose events the
// daemon follows on the server's event stream and attributes to the task call. One daemon and one
// fake model for the file: each request picks its scenario by the `[scenario:NAME]` marker of its
// first prompt (the parent's or the sub-agent's); each test has its own session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { startFakeModel, type FakeModel } from '../../fake-model/server.js';
import { eventsUntil, lastSequence, sendTurn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, makeApp, post, waitFor } from '../../support/helpers.js';
import { makeSandbox, type Sandbox } from '../../support/sandbox.js';
import { e2eEnv } from './harness.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['opencode']);

const task = (prompt: string) => ({ call: 'task', input: { description: 'Look around', prompt, subagent_type: 'general' } });
const SCENARIOS = {
  main: [[{ text: 'Delegating.' }, task('[scenario:sub] List the files.')], [{ text: 'The sub-agent is done.' }]],
  sub: [[{ text: 'Listing.' }, { tool: 'shell' as const, command: 'echo sub-was-here' }], [{ text: 'Found sub-was-here.' }]],
  asks: [[task('[scenario:asksub] Write it.')], [{ text: 'It is written.' }]],
  asksub: [[{ tool: 'write' as const, path: 'from-sub.txt', content: 'asked-first\n' }], [{ text: 'Wrote it.' }]],
  slow: [[task('[scenario:slowsub] Take your time.')], [{ text: 'after the interrupt' }]],
  slowsub: [[{ text: 'Thinking about it' }, { sleepMs: 8_000 }, { text: ' for a long time.' }], [{ text: 'never' }]],
};

let sandbox: Sandbox;
let fake: FakeModel;
let app: App;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = makeSandbox('opencode-subagents');
  fake = await startFakeModel({ scenarios: SCENARIOS });
  app = await makeApp({ baseDir: sandbox.work });
  env = e2eEnv(sandbox, fake);
});
afterAll(async () => {
  await app?.app.close();
  await fake?.close();
  sandbox?.cleanup();
});

async function create(sid: string, permissionMode = 'bypass'): Promise<void> {
  const res = await post(app, `/v1/sessions/${sid}`, { agent: 'opencode', cwd: sandbox.work, env, permissionMode });
  expect(res.statusCode, res.body).toBe(200);
}

const of = <T extends UniversalEvent['type']>(events: UniversalEvent[], type: T) => events.filter((e): e is Extract<UniversalEvent, { type: T }> => e.type === type);
const sub = (e: UniversalEvent) => (e.data as { subagent_id?: string }).subagent_id;
const toolCall = (events: UniversalEvent[], name: string) =>
  of(events, 'item.completed').find((e) => e.data.item.kind === 'tool_call' && e.data.item.content.some((p) => p.type === 'tool_call' && p.name === name));
const says = (events: UniversalEvent[], text: string) =>
  of(events, 'item.completed').find((e) => e.data.item.kind === 'message' && e.data.item.content.some((p) => p.type === 'text' && p.text === text));

describe('opencode sub-agents (real server, fake model)', () => {
  it("attributes the child session's items to the task call that launched it", async () => {
    await create('oa-1');
    const turn = await sendTurn(app, 'oa-1', '[scenario:main] Please delegate.', { timeoutMs: 60_000 });
    const events = turn.events;
    expect(of(events, 'turn.ended')).toHaveLength(1);
    expect(of(events, 'turn.ended')[0]!.data.metadata).toMatchObject({ reason: 'completed' });
    const call = toolCall(events, 'task');
    expect(call, JSON.stringify(events.map((e) => e.type))).toBeDefined();
    const [started] = of(events, 'subagent.started');
    const [ended] = of(events, 'subagent.ended');
    expect(started?.data).toMatchObject({ parent_item_id: call!.data.item.item_id, description: 'Look around', prompt: '[scenario:sub] List the files.', agent_type: 'general' });
    expect(started!.data.native_subagent_id).toMatch(/^ses_/);
    const id = started!.data.subagent_id;
    expect(ended?.data).toMatchObject({ subagent_id: id, parent_item_id: call!.data.item.item_id, outcome: 'completed' });
    expect(of(events, 'subagent.started')).toHaveLength(1);
    expect(of(events, 'subagent.ended')).toHaveLength(1);

    // The child's messages and its bash call are the sub-agent's, streamed deltas included.
    const bash = toolCall(events, 'bash');
    expect(sub(bash!)).toBe(id);
    const listing = says(events, 'Listing.');
    const found = says(events, 'Found sub-was-here.');
    expect(sub(listing!)).toBe(id);
    expect(sub(found!)).toBe(id);
    const foundDeltas = of(events, 'item.delta').filter((e) => e.data.item_id === found!.data.item.item_id);
    expect(foundDeltas.length).toBeGreaterThan(0);
    expect(new Set(foundDeltas.map(sub))).toEqual(new Set([id]));
    // The main agent's own items do not.
    expect(sub(call!)).toBeUndefined();
    expect(sub(says(events, 'The sub-agent is done.')!)).toBeUndefined();
    expect(sub(says(events, 'Delegating.')!)).toBeUndefined();
    // The turn ended once, at the parent's idle, after the sub-agent's work.
    expect(events.indexOf(ended!)).toBeLessThan(events.findIndex((e) => e.type === 'turn.ended'));
    expect(events.indexOf(says(events, 'The sub-agent is done.')!)).toBeGreaterThan(events.indexOf(ended!));
    expectNoUnparsed(await getEvents(app, 'oa-1'));
  }, 90_000);

  it('an interrupt mid-sub-agent ends the sub-agent and the turn; the session goes on', async () => {
    await create('oa-2');
    const from = await lastSequence(app, 'oa-2');
    expect((await post(app, '/v1/sessions/oa-2/messages', { message: '[scenario:slow] Delegate slowly.' })).statusCode).toBe(204);
    await eventsUntil(app, 'oa-2', from, ['subagent.started'], 60_000);
    await waitFor(() => (fake.requests.some((r) => r.scenario === 'slowsub') ? true : undefined), 30_000, 'the sub-agent asking the model');
    const t0 = Date.now();
    expect((await post(app, '/v1/sessions/oa-2/interrupt')).statusCode).toBe(202);
    const events = await eventsUntil(app, 'oa-2', from, ['turn.ended', 'session.ended'], 15_000);
    console.log(`[opencode sub-agents] interrupt → turn.ended: ${Date.now() - t0} ms`);
    const [started] = of(events, 'subagent.started');
    const [ended] = of(events, 'subagent.ended');
    expect(ended?.data).toMatchObject({ subagent_id: started!.data.subagent_id, outcome: 'interrupted' });
    expect(events.indexOf(ended!)).toBeLessThan(events.findIndex((e) => e.type === 'turn.ended'));
    expect(of(events, 'turn.ended')[0]?.data.metadata).toMatchObject({ reason: 'interrupted' });

    const subRequests = fake.requests.filter((r) => r.scenario === 'slowsub').length;
    const next = await sendTurn(app, 'oa-2', 'Carry on.', { timeoutMs: 60_000 });
    expect(of(next.events, 'turn.ended')[0]?.data.metadata).toMatchObject({ reason: 'completed' });
    expect(fake.requests.filter((r) => r.scenario === 'slowsub').length).toBe(subRequests);
    expectNoUnparsed(await getEvents(app, 'oa-2'));
  }, 120_000);

  it('a permission the sub-agent asks for says so, and so does its resolution', async () => {
    await create('oa-3', 'default');
    const from = await lastSequence(app, 'oa-3');
    const answered = new Set<string>();
    let events: UniversalEvent[] = [];
    // Answer what is asked (the task call itself may be asked first) until the turn ends.
    for (let round = 0; round < 5; round++) {
      if (round === 0) expect((await post(app, '/v1/sessions/oa-3/messages', { message: '[scenario:asks] Delegate a write.' })).statusCode).toBe(204);
      events = await eventsUntil(app, 'oa-3', from, ['turn.ended', 'permission.requested'], 60_000);
      const open = of(events, 'permission.requested').filter((e) => !answered.has(e.data.permission_id));
      if (events.some((e) => e.type === 'turn.ended')) break;
      for (const p of open) {
        answered.add(p.data.permission_id);
        expect((await post(app, `/v1/sessions/oa-3/permissions/${encodeURIComponent(p.data.permission_id)}/reply`, { reply: 'once' })).statusCode).toBe(204);
      }
      if (open.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    events = await eventsUntil(app, 'oa-3', from, ['turn.ended'], 60_000);
    const started = of(events, 'subagent.started')[0]!;
    const write = of(events, 'permission.requested').find((e) => e.data.action === 'edit' || e.data.action === 'write');
    expect(write, JSON.stringify(of(events, 'permission.requested').map((e) => e.data))).toBeDefined();
    expect(write!.data.subagent_id).toBe(started.data.subagent_id);
    const resolved = of(events, 'permission.resolved').find((e) => e.data.permission_id === write!.data.permission_id);
    expect(resolved?.data).toMatchObject({ status: 'approved', subagent_id: started.data.subagent_id });
    expect(readFileSync(join(sandbox.work, 'from-sub.txt'), 'utf8')).toBe('asked-first\n');
    expectNoUnparsed(await getEvents(app, 'oa-3'));
  }, 120_000);
});
