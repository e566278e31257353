// Messages during a turn and forks (docs/queue-steer-fork.md) for a built-in ACP agent, end to end:
// the real pinned CLI, the fake model, over the HTTP API; run by builtin-e2e.ts inside its describe,
// sharing its sandbox, fake model and app. Neither agent can steer: a session/prompt sent while one
// runs cancels the running one, so the daemon queues instead and never sends a second prompt while
// one runs (checked on the model requests). Qwen Code forks natively (src/agents/qwen/fork.ts);
// Gemini CLI does not, and the daemon refuses.
import { expect, it } from 'vitest';
import type { SessionInfo } from '../../../src/schema/api.js';
import type { MessageAccepted } from '../../../src/schema/delivery.js';
import type { AgentE2E } from '../../support/agent-e2e.js';
import { assistantMessages, eventsUntil, ofType, sendTurn, textOf } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { expectProblem } from '../../support/http-problems.js';

const WAIT_MS = 60_000;

export function deliveryE2e(agent: 'gemini' | 'qwen', e2e: AgentE2E, sid: string, forks: boolean): void {
  const send = (message: string, delivery: string) => post(e2e.app, `/v1/sessions/${sid}/messages`, { message, delivery });
  const accepted = async (message: string, delivery: string) => {
    const res = await send(message, delivery);
    expect(res.statusCode, res.body).toBe(202);
    return res.json<MessageAccepted>();
  };
  /** The first model request (not a title or suggestion call) whose body has `text`. */
  const requestWith = (text: string) => e2e.fake.requests.find((r) => r.turn !== undefined && JSON.stringify(r.body).includes(text));
  const turnsEnded = (id: string, n: number) =>
    waitFor(async () => {
      const events = await getEvents(e2e.app, id);
      return ofType(events, 'turn.ended').length >= n || events.some((e) => e.type === 'session.ended') ? events : undefined;
    }, WAIT_MS, `${n} turns ended`);

  it(`delivery: steer is refused, queue waits for the running turn, interrupt stops it and goes first; fork ${forks ? 'after the last turn and an earlier one' : 'refused'}`, async () => {
    // Turn 1 streams, then waits: long enough to queue, steer and interrupt while it runs. Whether
    // the agent keeps the interrupted answer in its history shifts the next requests' turn index:
    // the `after` scenario answers every index the same.
    const after = [[{ text: 'Done.' }], [{ text: 'Done.' }], [{ text: 'Done.' }]];
    await e2e.start({ scenario: [[{ text: 'Counting slowly: one two' }, { sleepMs: 8_000 }, { text: ' three' }]], permissionMode: 'bypass', scenarios: { after } });
    const agents = (await e2e.app.app.inject({ method: 'GET', url: '/v1/agents' })).json<{ agents: { id: string; capabilities: Record<string, boolean> }[] }>();
    expect(agents.agents.find((a) => a.id === agent)?.capabilities).toMatchObject({ steer: false, fork: forks, forkAtTurn: forks });

    expect((await post(e2e.app, `/v1/sessions/${sid}/messages`, { message: 'Count.' })).statusCode).toBe(204);
    await eventsUntil(e2e.app, sid, 0, ['item.delta'], WAIT_MS);
    expectProblem(await send('Use tabs.', 'steer'), 409, 'steer_unsupported');
    const queued = await accepted('Queued message.', 'queue');
    expect(queued).toMatchObject({ status: 'queued', position: 0 });
    // A second session/prompt now would cancel turn 1: the queued message must not reach the agent.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(requestWith('Queued message.')).toBeUndefined();
    const first = await accepted('Interrupting message. [scenario:after]', 'interrupt');
    expect(first).toMatchObject({ status: 'queued', position: 0 });

    const events = await turnsEnded(sid, 3);
    expect(ofType(events, 'turn.ended').map((e) => e.data.metadata.reason)).toEqual(['interrupted', 'completed', 'completed']);
    expect(ofType(events, 'turn.started').map((e) => e.data.message_id)).toEqual([undefined, first.messageId, queued.messageId]);
    expect(ofType(events, 'message.dequeued').map((e) => [e.data.message_id, e.data.reason])).toEqual([
      [first.messageId, 'started'],
      [queued.messageId, 'started'],
    ]);
    expect(ofType(events, 'message.steered')).toEqual([]);
    expect(ofType(events, 'error')).toEqual([]);
    // One prompt at a time: the interrupting message reached the model before the queued one.
    const order = e2e.fake.requests.indexOf(requestWith('Interrupting message.')!);
    expect(order).toBeGreaterThan(-1);
    expect(e2e.fake.requests.indexOf(requestWith('Queued message.')!)).toBeGreaterThan(order);
    expect(assistantMessages(events.slice(-8)).map(textOf).at(-1)).toBe('Done.');
    const ends = ofType(events, 'turn.ended');
    if (!forks) {
      expectProblem(await post(e2e.app, `/v1/sessions/${sid}/fork`, {}), 409, 'fork_unsupported');
      expectProblem(await post(e2e.app, `/v1/sessions/${sid}/fork`, { at: ends[1]!.sequence }), 409, 'fork_unsupported');
      expectNoUnparsed(await getEvents(e2e.app, sid));
      return;
    }

    // Forks of that conversation: after its last turn and after turn 2. Turn 1 was interrupted, so
    // the agent has no branch point there (src/agents/qwen/fork.ts): refused, not branched elsewhere.
    expectProblem(await post(e2e.app, `/v1/sessions/${sid}/fork`, { at: ends[0]!.sequence }), 409, 'fork_unsupported');
    // Both at once, then a turn on each and on the parent at once: each fork is a CLI of its own.
    const [atEnd, atTwo] = await Promise.all([
      post(e2e.app, `/v1/sessions/${sid}/fork`, { id: 'fork-end' }),
      post(e2e.app, `/v1/sessions/${sid}/fork`, { id: 'fork-two', at: ends[1]!.sequence }),
    ]);
    expect(atEnd.statusCode, atEnd.body).toBe(201);
    expect(atTwo.statusCode, atTwo.body).toBe(201);
    const [end, two] = await Promise.all([
      sendTurn(e2e.app, 'fork-end', 'QUESTION-END', { timeoutMs: WAIT_MS }),
      sendTurn(e2e.app, 'fork-two', 'QUESTION-TWO', { timeoutMs: WAIT_MS }),
      sendTurn(e2e.app, sid, 'QUESTION-PARENT', { timeoutMs: WAIT_MS }),
    ]);
    expect(ofType(end.events, 'turn.ended').map((e) => [e.data.turn_id, e.data.metadata.reason])).toEqual([['turn_4', 'completed']]);
    expect(JSON.stringify(requestWith('QUESTION-END')?.body)).toMatch(/Interrupting message[^]*Done[^]*Queued message[^]*Done[^]*QUESTION-END/);
    expect(ofType(two.events, 'turn.ended').map((e) => [e.data.turn_id, e.data.metadata.reason])).toEqual([['turn_3', 'completed']]);
    const body = JSON.stringify(requestWith('QUESTION-TWO')?.body);
    expect(body).toMatch(/Interrupting message[^]*Done[^]*QUESTION-TWO/);
    expect(body).not.toContain('Queued message');
    // The parent goes on as it was, and each fork named its own native session (a restart resumes it).
    expect(JSON.stringify(requestWith('QUESTION-PARENT')?.body)).toMatch(/Queued message[^]*Done[^]*QUESTION-PARENT/);
    const infos = await Promise.all([sid, 'fork-end', 'fork-two'].map(async (id) => (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json<SessionInfo>()));
    expect(new Set(infos.map((i) => i.nativeSessionId)).size, JSON.stringify(infos)).toBe(3);
    expect(infos[1]).toMatchObject({ forkedFrom: { sessionId: sid, sequence: ends[2]!.sequence } });
    for (const id of [sid, 'fork-end', 'fork-two']) {
      const log = await getEvents(e2e.app, id);
      expect(ofType(log, 'session.forked')).toHaveLength(id === sid ? 0 : 1);
      expectNoUnparsed(log);
    }
  });
}
