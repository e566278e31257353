// OpenCode end to end, messages during a turn and forks (docs/queue-steer-fork.md,
// docs/opencode.md "Queue, steer and fork"): the daemon's HTTP API, the real pinned OpenCode and
// the fake model, set up as in e2e.test.ts. Queue and interrupt are the daemon's; steer is refused
// (409 steer_unsupported); forks are OpenCode's own (POST /session/{id}/fork), at the end and at
// an earlier turn, and what the model is sent on the fork's next turn shows which conversation it has.
import { describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../../src/schema/api.js';
import type { MessageAccepted } from '../../../src/schema/delivery.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import type { Scenario } from '../../fake-model/server.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { assistantMessages, ofType, sendTurn, textOf } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { e2eEnv } from './harness.js';

const SID = 'opencode-queue-fork';
/** Waits and test timeouts are generous: OpenCode's first turn on a fresh server is slow on a loaded machine. */
const WAIT_MS = 45_000;
const TEST_MS = 120_000;
const turn = (id: string, message: string) => sendTurn(e2e.app, id, message, { timeoutMs: WAIT_MS });

const e2e = agentE2E({
  agent: 'opencode',
  sid: SID,
  env: ({ fake, sandbox }) => e2eEnv(sandbox, fake!),
});

const start = (scenario: Scenario) => e2e.start({ scenario, permissionMode: 'bypass' });
const get = (url: string) => e2e.app.app.inject({ method: 'GET', url });
const info = async (id: string) => (await get(`/v1/sessions/${id}`)).json<SessionInfo>();
const deliver = (message: string, delivery: string, id = SID) => post(e2e.app, `/v1/sessions/${id}/messages`, { message, delivery });
const accepted = async (message: string, delivery: string) => {
  const res = await deliver(message, delivery);
  expect(res.statusCode, res.body).toBe(202);
  return res.json<MessageAccepted>();
};
const turnsEnded = (n: number, id = SID) =>
  waitFor(async () => {
    const events = await getEvents(e2e.app, id);
    return ofType(events, 'turn.ended').length >= n ? events : undefined;
  }, WAIT_MS, `${n} turns of ${id} ended`);
/** Waits until the fake model is streaming turn `n` (1-based) of the session's model calls. */
const modelAt = (n: number) => waitFor(() => chats().length >= n || undefined, WAIT_MS, `model call ${n}`);

/** The model calls (not OpenCode's toolless title calls), as `role:text` lines of their messages. */
function chats(): string[][] {
  return e2e.fake.requests
    .filter((r) => r.path.includes('chat') && !r.toolless)
    .map((r) =>
      ((r.body as { messages?: { role: string; content: unknown }[] }).messages ?? [])
        .filter((m) => m.role !== 'system')
        .map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : ((m.content as { text?: string }[]) ?? []).map((c) => c.text ?? '').join('')}`),
    );
}

const lastAnswer = (events: UniversalEvent[]) => textOf(assistantMessages(events).at(-1));

describe('opencode e2e: messages during a turn', () => {
  it('queue: starts as the next turn once the running one ends; steer: 409 steer_unsupported', async () => {
    await start([[{ text: 'First ' }, { sleepMs: 1500 }, { text: 'answer.' }], [{ text: 'Second answer.' }]]);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Q1' })).statusCode).toBe(204);
    await modelAt(1);
    const queued = await accepted('Q2', 'queue');
    expect(queued).toMatchObject({ delivery: 'queue', status: 'queued', position: 0 });
    const steer = await deliver('Q-steer', 'steer');
    expect(steer.statusCode, steer.body).toBe(409);
    expect(steer.json().code).toBe('steer_unsupported');
    const events = await turnsEnded(2);
    const [first, second] = ofType(events, 'turn.started');
    expect(ofType(events, 'turn.ended').map((e) => e.data.metadata?.reason)).toEqual(['completed', 'completed']);
    expect(second?.data.message_id).toBe(queued.messageId);
    expect(first?.data.message_id).toBeUndefined();
    expect(ofType(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([[queued.messageId, 'started']]);
    // The queued message is its own model call, after the whole first answer; the refused one never went anywhere.
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:First answer.', 'user:Q2']);
    expect(JSON.stringify(chats())).not.toContain('Q-steer');
    expect(lastAnswer(events)).toBe('Second answer.');
    expectNoUnparsed(events);
  }, TEST_MS);

  it('interrupt: the running turn ends interrupted, the message starts next', async () => {
    await start([[{ text: 'Long ' }, { sleepMs: 30_000 }, { text: 'never.' }], [{ text: 'After the interrupt.' }]]);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Q1' })).statusCode).toBe(204);
    // Once the first words are in, OpenCode keeps the interrupted answer in the history: the next
    // call holds one answer, so the fake model gives its second.
    await waitFor(async () => ofType(await getEvents(e2e.app, SID), 'item.delta').some((e) => e.source === 'agent') || undefined, WAIT_MS, 'the first delta');
    const now = await accepted('Q2 now', 'interrupt');
    expect(now).toMatchObject({ delivery: 'interrupt', status: 'queued', position: 0 });
    const events = await turnsEnded(2);
    expect(ofType(events, 'turn.ended').map((e) => e.data.metadata?.reason)).toEqual(['interrupted', 'completed']);
    expect(ofType(events, 'turn.started')[1]?.data.message_id).toBe(now.messageId);
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:Long ', 'user:Q2 now']);
    expect(lastAnswer(events)).toBe('After the interrupt.');
    expectNoUnparsed(events);
  }, TEST_MS);
});

describe('opencode e2e: fork', () => {
  it('forks at the end and after turn 1 of 2 (and a fork at a turn it copied): each goes on with its own conversation, the parent is unchanged', async () => {
    // The fake model answers by how many answers the conversation it is sent holds (test/fake-model/README.md).
    await start([[{ text: 'A1' }], [{ text: 'A2' }], [{ text: 'A3' }]]);
    const agents = (await get('/v1/agents')).json<{ agents: { id: string; capabilities: Record<string, boolean> }[] }>().agents;
    expect(agents.find((a) => a.id === 'opencode')?.capabilities).toMatchObject({ steer: false, fork: true, forkAtTurn: true });
    await turn(SID, 'Q1');
    await turn(SID, 'Q2');
    const parentNative = (await info(SID)).nativeSessionId;
    const firstEnd = ofType(await getEvents(e2e.app, SID), 'turn.ended')[0]!.sequence;

    const whole = await post(e2e.app, `/v1/sessions/${SID}/fork`, { id: 'fork-end' });
    expect(whole.statusCode, whole.body).toBe(201);
    const early = await post(e2e.app, `/v1/sessions/${SID}/fork`, { id: 'fork-turn-1', at: firstEnd });
    expect(early.statusCode, early.body).toBe(201);

    // The model is sent each fork's own history: OpenCode copied the parent's messages up to the branch point.
    const atEnd = await forkTurn('fork-end', 'Q3 whole', 2);
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2', 'assistant:A2', 'user:Q3 whole']);
    expect(lastAnswer(atEnd)).toBe('A3');
    const atTurn1 = await forkTurn('fork-turn-1', 'Q3 early', 1);
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:A1', 'user:Q3 early']);
    expect(lastAnswer(atTurn1)).toBe('A2'); // its second answer

    // A fork of a fork at a turn it copied: the messages up to there are the parent's, and so is the cut.
    const copiedEnd = ofType(await getEvents(e2e.app, 'fork-end'), 'turn.ended')[0]!.sequence;
    const again = await post(e2e.app, `/v1/sessions/fork-end/fork`, { id: 'fork-of-fork', at: copiedEnd });
    expect(again.statusCode, again.body).toBe(201);
    await forkTurn('fork-of-fork', 'Q4', 1);
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:A1', 'user:Q4']);

    // Each fork reports its own native session (with its first event since the fork), so a restart resumes it.
    const natives = [(await info('fork-end')).nativeSessionId, (await info('fork-turn-1')).nativeSessionId];
    expect(natives.every((n) => /^ses_/.test(n ?? ''))).toBe(true);
    expect(new Set([parentNative, ...natives]).size).toBe(3);

    // The parent goes on as before, untouched by either fork.
    await turn(SID, 'Q3 parent');
    expect(chats().at(-1)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2', 'assistant:A2', 'user:Q3 parent']);
    for (const id of [SID, 'fork-end', 'fork-turn-1', 'fork-of-fork']) expectNoUnparsed(await getEvents(e2e.app, id));
  }, TEST_MS);
});

/** A turn on a fork whose log holds `copiedTurns` turns: it is `turn_<copiedTurns+1>`, and it is
 *  the fork's only conversation since the branch point (the copies OpenCode announces on its event
 *  stream after forking are the past, not new items). */
async function forkTurn(id: string, message: string, copiedTurns: number): Promise<UniversalEvent[]> {
  const done = await turn(id, message);
  const all = await getEvents(e2e.app, id);
  const own = all.slice(all.findIndex((e) => e.type === 'session.forked') + 1);
  const started = ofType(done.events, 'turn.started');
  expect(started.map((e) => e.data.turn_id)).toEqual([`turn_${copiedTurns + 1}`]);
  expect(own.filter((e) => e.sequence < started[0]!.sequence).map((e) => e.type)).toEqual([]);
  expect(assistantMessages(own).map((i) => textOf(i))).toEqual([lastAnswer(done.events)]);
  expect(ofType(all, 'turn.ended').at(-1)?.data.metadata?.reason).toBe('completed');
  return done.events;
}
