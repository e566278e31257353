// Codex end to end, messages during a turn and forks (docs/queue-steer-fork.md, docs/codex.md):
// delivery queue and interrupt (the daemon's), steer (`turn/steer` into the running turn) and
// forks at the end and at an earlier turn (`thread/fork`, through a turn id). The daemon's HTTP
// API, the real pinned Codex (0.171.0) and the fake model behind it (codex-session.ts).
import { describe, expect, it } from 'vitest';
import type { AgentInfo, SessionInfo } from '../../../src/schema/api.js';
import type { MessageAccepted } from '../../../src/schema/delivery.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import type { FakeModel, Scenario } from '../../fake-model/server.js';
import { ofType, sendTurn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { codexE2E, completed, lastAssistantText, modelRequests, textOf } from './codex-session.js';

const SID = 'codex-delivery';
const e2e = codexE2E(SID);
const start = (scenario: Scenario) => e2e.start({ scenario, permissionMode: 'bypass' });

async function accepted(message: string, delivery: string): Promise<MessageAccepted> {
  const res = await post(e2e.app, `/v1/sessions/${SID}/messages`, { message, delivery });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<MessageAccepted>();
}
/** Sends `message` and waits until the model is mid-answer: the fake model completes the answer's
 *  first text (its first message item) before it sleeps. */
async function slowTurn(message: string): Promise<void> {
  expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message })).statusCode).toBe(204);
  await waitFor(async () => lastAssistantText(await getEvents(e2e.app, SID)).startsWith('SLOW'), 20_000, 'the slow answer to start');
}
/** All events of session `id` once `n` turns have ended there. */
const turnsEnded = (n: number, id = SID) =>
  waitFor(async () => {
    const events = await getEvents(e2e.app, id);
    return ofType(events, 'turn.ended').length >= n ? events : undefined;
  }, 30_000, `${n} turns ended in ${id}`);

/** The conversation a model request carried: its user and assistant messages, as `role:text`
 *  (Codex's developer and environment messages left out). */
function conversation(body: unknown): string[] {
  const input = (body as { input?: { type?: string; role?: string; content?: { text?: string }[] }[] } | undefined)?.input ?? [];
  return input
    .filter((i) => i.type === 'message' && (i.role === 'user' || i.role === 'assistant'))
    .map((i) => `${i.role}:${(i.content ?? []).map((c) => c.text ?? '').join('')}`)
    .filter((m) => !m.startsWith('user:<environment_context>'));
}
const lastConversation = (fake: FakeModel) => conversation(modelRequests({ fake }).at(-1)?.body);
const userTexts = (events: UniversalEvent[]) => completed(events).filter((i) => i.kind === 'message' && i.role === 'user').map(textOf);

describe('codex e2e: queue, steer, interrupt and fork (real CLI, fake model)', () => {
  it('GET /v1/agents says Codex steers and forks at the end and at an earlier turn', async () => {
    await start([]);
    const agents = (await e2e.app.app.inject({ method: 'GET', url: '/v1/agents' })).json<{ agents: AgentInfo[] }>().agents;
    expect(agents.find((a) => a.id === 'codex')?.capabilities).toMatchObject({ steer: true, fork: true, forkAtTurn: true });
  });

  it('delivery queue waits for the running turn; interrupt stops it and goes first', async () => {
    const { fake } = await start([[{ text: 'SLOW one' }, { sleepMs: 30_000 }, { text: ' never' }], [{ text: 'B' }], [{ text: 'C' }]]);
    await slowTurn('Q1');
    const queued = await accepted('Q-queued', 'queue');
    expect(queued).toMatchObject({ delivery: 'queue', status: 'queued', position: 0 });
    const now = await accepted('Q-interrupt', 'interrupt');
    expect(now).toMatchObject({ delivery: 'interrupt', status: 'queued', position: 0 });

    const events = await turnsEnded(3);
    expect(ofType(events, 'turn.ended').map((e) => e.data.metadata.reason)).toEqual(['interrupted', 'completed', 'completed']);
    expect(ofType(events, 'turn.started').map((e) => e.data.message_id)).toEqual([undefined, now.messageId, queued.messageId]);
    expect(ofType(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([
      [now.messageId, 'started'],
      [queued.messageId, 'started'],
    ]);
    // Codex echoes each message as the user item of its own turn.
    expect(userTexts(events)).toEqual(['Q1', 'Q-interrupt', 'Q-queued']);
    // The model got them in that order, each after the answer before it.
    const last = lastConversation(fake);
    // Codex tells the model itself that the first turn was interrupted.
    const users = last.filter((m) => m.startsWith('user:')).map((m) => (m.startsWith('user:<turn_aborted>') ? '<turn_aborted>' : m));
    expect(users).toEqual(['user:Q1', '<turn_aborted>', 'user:Q-interrupt', 'user:Q-queued']);
    expect(last.at(-2)).toBe('assistant:B');
    expect(lastAssistantText(events)).toBe('C');
    expectNoUnparsed(events);
  });

  it('delivery steer: the running turn takes the message, and the model gets it in the same turn', async () => {
    const { fake } = await start([[{ text: 'SLOW start' }, { sleepMs: 5_000 }, { text: ' end' }], [{ text: 'Steered answer.' }]]);
    await slowTurn('Q1');
    const m = await accepted('Use tabs instead.', 'steer');
    expect(m).toMatchObject({ delivery: 'steer', status: 'steered' });

    const events = await turnsEnded(1);
    expect(ofType(events, 'turn.started')).toHaveLength(1);
    expect(ofType(events, 'turn.ended').map((e) => [e.data.turn_id, e.data.metadata.reason])).toEqual([['turn_1', 'completed']]);
    expect(ofType(events, 'message.steered').map((e) => [e.data.message_id, e.data.turn_id, e.data.message])).toEqual([[m.messageId, 'turn_1', 'Use tabs instead.']]);
    // Codex echoes the steered input as a second userMessage item of the same turn (the daemon adds
    // none of its own: capability userMessages), after message.steered.
    const users = ofType(events, 'item.completed').filter((e) => e.data.item.role === 'user');
    expect(users.map((e) => [e.source, textOf(e.data.item)])).toEqual([
      ['agent', 'Q1'],
      ['agent', 'Use tabs instead.'],
    ]);
    const steered = ofType(events, 'message.steered')[0]!;
    expect(users[1]!.sequence).toBeGreaterThan(steered.sequence);
    expect(users[1]!.sequence).toBeLessThan(ofType(events, 'turn.ended')[0]!.sequence);
    // Codex cut the first answer short and asked again within the turn, the steered text last.
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:SLOW start', 'user:Use tabs instead.']);
    expect(lastAssistantText(events)).toBe('Steered answer.');
    expectNoUnparsed(events);
  });

  it('forks at the end and at an earlier turn: new threads holding that much of the conversation', { timeout: 60_000 }, async () => {
    // The fourth answer is slow: the parent is forked while it runs that turn.
    const { fake } = await start([[{ text: 'A1' }], [{ text: 'A2' }], [{ text: 'A3' }], [{ text: 'SLOW A4' }, { sleepMs: 2_500 }, { text: '.' }]]);
    await sendTurn(e2e.app, SID, 'Q1');
    await sendTurn(e2e.app, SID, 'Q2');
    const parent = await getEvents(e2e.app, SID);
    const info = async (id: string) => (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json<SessionInfo>();
    const parentThread = (await info(SID)).nativeSessionId;
    expect(parentThread).toEqual(expect.any(String));

    // At the end: the whole conversation, in a thread of its own.
    const end = await post(e2e.app, `/v1/sessions/${SID}/fork`, { id: 'codex-fork-end' });
    expect(end.statusCode, end.body).toBe(201);
    expect(end.json<SessionInfo>()).toMatchObject({ forkedFrom: { sessionId: SID, sequence: parent.at(-1)!.sequence } });
    const onEnd = await sendTurn(e2e.app, 'codex-fork-end', 'Q3 on the fork');
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2', 'assistant:A2', 'user:Q3 on the fork']);
    expect(ofType(onEnd.events, 'turn.started')[0]?.data.turn_id).toBe('turn_3');
    // Its own thread (thread/fork's new id), which a restart would resume.
    const endThread = (await info('codex-fork-end')).nativeSessionId;
    expect(endThread).toEqual(expect.any(String));
    expect(endThread).not.toBe(parentThread);

    // After turn 1 of 2: the first question and answer only.
    const firstEnd = ofType(parent, 'turn.ended')[0]!;
    const early = await post(e2e.app, `/v1/sessions/${SID}/fork`, { id: 'codex-fork-1', at: firstEnd.sequence });
    expect(early.statusCode, early.body).toBe(201);
    await sendTurn(e2e.app, 'codex-fork-1', 'Q2 on the early fork');
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2 on the early fork']);

    // A fork of the fork, after a turn it copied: its thread has the parent's turn ids too.
    const onEndEvents = await getEvents(e2e.app, 'codex-fork-end');
    const again = await post(e2e.app, '/v1/sessions/codex-fork-end/fork', { id: 'codex-fork-2', at: ofType(onEndEvents, 'turn.ended')[1]!.sequence });
    expect(again.statusCode, again.body).toBe(201);
    await sendTurn(e2e.app, 'codex-fork-2', 'Q3 on the second fork');
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2', 'assistant:A2', 'user:Q3 on the second fork']);

    // The parent's own thread has none of its forks' questions.
    await sendTurn(e2e.app, SID, 'Q3 on the parent');
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2', 'assistant:A2', 'user:Q3 on the parent']);

    // While the parent runs a turn, it forks after one that has ended (its app-server holds the
    // thread; Codex refuses to fork through a turn in progress, and the daemon never asks it to).
    await slowTurn('Q4 on the parent');
    const during = await post(e2e.app, `/v1/sessions/${SID}/fork`, { id: 'codex-fork-3', at: firstEnd.sequence });
    expect(during.statusCode, during.body).toBe(201);
    expect((await info(SID)).status).toBe('running');
    await sendTurn(e2e.app, 'codex-fork-3', 'Q2 on a fork taken mid-turn');
    expect(lastConversation(fake)).toEqual(['user:Q1', 'assistant:A1', 'user:Q2 on a fork taken mid-turn']);
    await turnsEnded(4);
    for (const id of [SID, 'codex-fork-end', 'codex-fork-1', 'codex-fork-2', 'codex-fork-3']) expectNoUnparsed(await getEvents(e2e.app, id));
  });
});
