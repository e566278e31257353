// Live usage and budgets over HTTP against the mock (docs/budgets.md): usage.updated and the
// session's totals, PATCH …/{id} with a budget, and a crossed budget pausing the mock exactly
// between its steps (`spend`) or holding a turn before the agent sees it (max_turns).
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { SessionInfo } from '../../src/schema/api.js';
import type { TokenUsage, UniversalEvent, UsageTotals } from '../../src/schema/events.js';
import { raisedLimit } from '../../src/sessions/budget.js';
import { expectProblem } from '../support/http-problems.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, waitFor } from '../support/helpers.js';

let app: App;

afterEach(async () => {
  await app?.app.close();
});

const info = async (id = 's1') => (await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json<SessionInfo>();
const patch = (body: unknown, id = 's1') =>
  app.app.inject({ method: 'PATCH', url: `/v1/sessions/${id}`, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const send = async (message: string) => {
  const res = await post(app, '/v1/sessions/s1/messages', { message });
  expect(res.statusCode, res.body).toBe(204);
};
const reply = async (id: string, answer: 'once' | 'always' | 'reject') => {
  const res = await post(app, `/v1/sessions/s1/permissions/${id}/reply`, { reply: answer });
  expect(res.statusCode, res.body).toBe(204);
};
const of = <T extends UniversalEvent['type']>(events: UniversalEvent[], type: T) =>
  events.filter((e): e is Extract<UniversalEvent, { type: T }> => e.type === type);
const until = (check: (events: UniversalEvent[]) => boolean, what: string) =>
  waitFor(async () => {
    const events = await getEvents(app, 's1');
    return check(events) ? events : undefined;
  }, 10_000, what);
const turnsEnded = (n: number) => until((e) => of(e, 'turn.ended').length >= n, `${n} turns ended`);
const budgetAsked = (n: number) => until((e) => of(e, 'permission.requested').filter((p) => p.data.action === 'budget').length >= n, `budget request ${n}`);
const texts = (events: UniversalEvent[]) =>
  of(events, 'item.completed')
    .filter((e) => e.data.item.role === 'assistant')
    .map((e) => e.data.item.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));

/** The invariant: the last usage.updated's totals are the sum of the turns' turn.ended usage. */
function expectTotalsAreTheTurnsSum(events: UniversalEvent[]): UsageTotals {
  const sum = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  for (const e of of(events, 'turn.ended')) {
    const u: TokenUsage | undefined = e.data.metadata.usage;
    if (!u) continue;
    sum.input_tokens += u.input_tokens;
    sum.output_tokens += u.output_tokens;
    sum.cache_read_input_tokens += u.cache_read_input_tokens ?? 0;
    sum.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0;
  }
  const last = of(events, 'usage.updated').at(-1)!.data.totals;
  expect(last).toMatchObject(sum);
  return last;
}

async function start(config: Partial<Config> = {}, extra: Record<string, unknown> = {}): Promise<void> {
  app = await makeApp({ config });
  await createMock(app, 's1', extra);
}

describe('usage', () => {
  it('a step-reporting turn: usage.updated per step, totals equal the turns’ usage, GET shows them, priced by the table', async () => {
    await start();
    expect((await info()).usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    await send('spend 3');
    await turnsEnded(1);
    await send('spend 2 1000 500');
    const events = await turnsEnded(2);
    const updates = of(events, 'usage.updated');
    // Each step adds at once; the turns' own totals match their steps, so no settling update follows.
    expect(updates.map((u) => [u.data.scope, u.data.added.input_tokens, u.data.added.output_tokens])).toEqual([
      ['step', 100, 20],
      ['step', 100, 20],
      ['step', 100, 20],
      ['step', 1000, 500],
      ['step', 1000, 500],
    ]);
    expect(updates.every((u) => u.source === 'daemon' && u.data.model === 'mock-1')).toBe(true);
    // A turn whose agent reports no usage adds none.
    await send('echo free');
    expect(of(await turnsEnded(3), 'usage.updated')).toHaveLength(5);
    const totals = expectTotalsAreTheTurnsSum(await getEvents(app, 's1'));
    expect(totals).toMatchObject({ input_tokens: 2300, output_tokens: 1060, cache_read_input_tokens: 75 + 500, cost_source: 'price_table' });
    // mock-1: $1 per million fresh input, $0.1 cached, $2 output.
    expect(totals.cost_usd).toBeCloseTo(((2300 - 575) * 1 + 575 * 0.1 + 1060 * 2) / 1e6, 12);
    expect((await info()).usage).toEqual(totals);
    expectNoUnparsed(events);
  });

  it('/metrics counts tokens and cost by agent and model', async () => {
    await start();
    const auth = {};
    const res = await app.app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ message: 'spend 2' }) });
    expect(res.statusCode, res.body).toBe(204);
    await waitFor(async () => {
      const r = await app.app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: auth });
      return r.json<SessionInfo>().status === 'idle' && r.json<SessionInfo>().usage.input_tokens === 200;
    }, 10_000, 'spend 2 to end');
    const metrics = (await app.app.inject({ method: 'GET', url: '/metrics', headers: auth })).body;
    for (const [kind, n] of [['input', 200], ['output', 40], ['cache_read', 50]] as const) {
      expect(metrics).toMatch(new RegExp(`^agentwire_tokens_total\\{agent="mock",model="mock-1",kind="${kind}"\\} ${n}$`, 'm'));
    }
    expect(metrics).toMatch(/^agentwire_cost_usd_total\{agent="mock",model="mock-1",source="price_table"\} 0\.000\d+$/m);
  });
});

describe('budgets', () => {
  it('max_tokens pauses the mock between steps, goes on after once, ends budget_exceeded after reject; the session stays usable', async () => {
    await start({}, { budget: { max_tokens: 200 } });
    expect((await info()).budget).toEqual({ max_tokens: 200 });
    await send('spend 3');
    let events = await budgetAsked(1);
    const first = of(events, 'permission.requested')[0]!;
    expect(first.source).toBe('daemon');
    expect(first.data.metadata).toMatchObject({ limit: 'max_tokens', limit_value: 200, spent: 240, step: 200, paused: 'before_next_step' });
    // Paused exactly: two steps said, the third not, and the mock waits.
    await new Promise((r) => setTimeout(r, 200));
    events = await getEvents(app, 's1');
    expect(texts(events)).toEqual(['Step 1 of 3.', 'Step 2 of 3.']);
    expect((await info()).status).toBe('waiting');

    await reply(first.data.permission_id, 'once');
    events = await turnsEnded(1);
    expect(texts(events)).toEqual(['Step 1 of 3.', 'Step 2 of 3.', 'Step 3 of 3.']);
    expect(of(events, 'turn.ended')[0]!.data.metadata.reason).toBe('completed');
    expect(of(events, 'permission.resolved').at(-1)!.data).toMatchObject({ action: 'budget', status: 'approved' });
    expect((await info()).budget).toEqual({ max_tokens: 400 });

    await send('spend 3');
    events = await budgetAsked(2);
    const second = of(events, 'permission.requested')[1]!;
    expect(second.data.metadata).toMatchObject({ limit: 'max_tokens', limit_value: 400, spent: 480 });
    await reply(second.data.permission_id, 'reject');
    events = await turnsEnded(2);
    expect(of(events, 'turn.ended')[1]!.data.metadata.reason).toBe('budget_exceeded');
    expect(texts(events).at(-1)).toBe('Step 1 of 3.');
    expectTotalsAreTheTurnsSum(events);

    // Usable: a message that spends nothing still runs; a new budget lets the next spend through.
    expect((await patch({ budget: { max_tokens: 10_000 } })).statusCode).toBe(200);
    await send('echo still here');
    events = await turnsEnded(3);
    expect(texts(events).at(-1)).toBe('still here');
    expect(of(events, 'turn.ended')[2]!.data.metadata.reason).toBe('completed');
    expectNoUnparsed(events);
  });

  it('max_turns holds the turn before the agent sees it; a steer joins it, once delivers it, reject ends it unseen; interrupt ends a held turn', async () => {
    await start({}, { budget: { max_turns: 1 } });
    await send('echo one');
    await turnsEnded(1);
    await send('echo two');
    let events = await budgetAsked(1);
    const asked = of(events, 'permission.requested')[0]!;
    expect(asked.data.metadata).toMatchObject({ limit: 'max_turns', limit_value: 1, spent: 2, paused: 'before_turn' });
    expect(texts(events)).toEqual(['one']);
    // A message steered into the held turn joins its message: the agent gets both once it goes on.
    const steered = await post(app, '/v1/sessions/s1/messages', { message: 'and more', delivery: 'steer' });
    expect(steered.json()).toMatchObject({ delivery: 'steer', status: 'steered' });
    await reply(asked.data.permission_id, 'once');
    events = await turnsEnded(2);
    expect(texts(events)).toEqual(['one', 'two\n\nand more']);
    expect((await info()).budget).toEqual({ max_turns: 2 });

    await send('echo three');
    events = await budgetAsked(2);
    await reply(of(events, 'permission.requested')[1]!.data.permission_id, 'reject');
    events = await turnsEnded(3);
    expect(of(events, 'turn.ended')[2]!.data.metadata.reason).toBe('budget_exceeded');
    expect(texts(events)).toEqual(['one', 'two\n\nand more']);

    await send('echo four');
    await budgetAsked(3);
    expect((await post(app, '/v1/sessions/s1/interrupt')).statusCode).toBe(202);
    events = await turnsEnded(4);
    expect(of(events, 'turn.ended')[3]!.data.metadata.reason).toBe('interrupted');
    expect(of(events, 'permission.resolved').at(-1)!.data).toMatchObject({ action: 'budget', status: 'denied' });
    expect(texts(events)).toEqual(['one', 'two\n\nand more']);
    expectNoUnparsed(events);
  });

  it('always lifts the crossed limit; a daemon answering for the user (policy allow) rejects budget requests', async () => {
    await start({ permissionPolicy: 'allow' }, { budget: { max_turns: 1 } });
    await send('echo one');
    await turnsEnded(1);
    await send('echo two');
    let events = await turnsEnded(2);
    expect(of(events, 'turn.ended')[1]!.data.metadata.reason).toBe('budget_exceeded');
    expect(of(events, 'permission.resolved').at(-1)!.data).toMatchObject({ action: 'budget', status: 'denied', metadata: { reason: 'policy' } });
    await app.app.close();

    await start({}, { budget: { max_turns: 1, max_tokens: 5000 } });
    await send('echo one');
    await turnsEnded(1);
    await send('echo two');
    events = await budgetAsked(1);
    await reply(of(events, 'permission.requested')[0]!.data.permission_id, 'always');
    await turnsEnded(2);
    expect((await info()).budget).toEqual({ max_tokens: 5000 });
  });

  it('the daemon default (--budget-*) applies to a session that sets none; {} sets none', async () => {
    app = await makeApp({ config: { budgetMaxTurns: 3, budgetMaxCostUsd: 0.5 } });
    await createMock(app, 's1');
    await createMock(app, 's2', { budget: {} });
    expect((await info('s1')).budget).toEqual({ max_cost_usd: 0.5, max_turns: 3 });
    expect((await info('s2')).budget).toEqual({});
  });

  it('PATCH: a bad budget is 400 problem+json, an unknown session 404; null clears it', async () => {
    await start({}, { budget: { max_tokens: 100 } });
    expectProblem(await patch({ budget: { max_tokens: -1 } }), 400, 'invalid_request');
    expectProblem(await patch({ budget: { max_tokens: 1.5 } }), 400, 'invalid_request');
    expectProblem(await patch({ budget: { max_tokenz: 5 } }), 400, 'invalid_request');
    expectProblem(await patch({}), 400, 'invalid_request');
    expectProblem(await patch({ budget: { max_turns: 2 } }, 'nope'), 404, 'session_not_found');
    const res = await patch({ budget: { max_turns: 2, max_cost_usd: 1.25 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<SessionInfo>().budget).toEqual({ max_turns: 2, max_cost_usd: 1.25 });
    expect((await patch({ budget: null })).json<SessionInfo>().budget).toEqual({});
  });

  it('limits out of range are a 400 at create and PATCH: no loop runs a count a client chose', async () => {
    app = await makeApp();
    for (const budget of [{ max_cost_usd: 1e-300 }, { max_tokens: 1e16 }, { max_turns: 1e7 }, { max_cost_usd: 1e10 }]) {
      const res = await post(app, `/v1/sessions/s1`, { agent: 'mock', budget });
      expectProblem(res, 400, 'invalid_request');
    }
    await createMock(app, 's1', { budget: { max_cost_usd: 1e-6 } });
    expectProblem(await patch({ budget: { max_cost_usd: 1e-300 } }), 400, 'invalid_request');
    // The smallest cost limit, raised by `once` to above what the mock's spend costs: computed, at once.
    await send('spend 2 100000 100000');
    const events = await budgetAsked(1);
    const asked = of(events, 'permission.requested')[0]!.data;
    await reply(asked.permission_id, 'once');
    await turnsEnded(1);
    expect((await info()).budget.max_cost_usd!).toBeGreaterThan((asked.metadata as { spent: number }).spent);
  });

  it('raisedLimit: whole steps past what is spent, computed, for any numbers', () => {
    expect(raisedLimit(100, 100, 250, false)).toBe(300);
    expect(raisedLimit(100, 100, 200, false)).toBe(300);
    expect(raisedLimit(1, 1, 2, true)).toBe(2);
    expect(raisedLimit(3, 3, 4, true)).toBe(6);
    // The hangs: a step lost in rounding, and a count of steps near 1e300.
    expect(raisedLimit(100, 100, 1e300, false)).toBeGreaterThan(1e300);
    expect(raisedLimit(1e-300, 1e-300, 1e-4, false)).toBeGreaterThan(1e-4);
    expect(raisedLimit(1e20, 1, 1e20, false)).toBeGreaterThan(1e20);
    expect(raisedLimit(1, 1, Number.POSITIVE_INFINITY, false)).toBe(Number.MAX_VALUE);
  });

  it('a fork starts with the totals its copied events say were spent, and its parent’s budget', async () => {
    await start({}, { budget: { max_tokens: 100_000 } });
    await send('spend 2');
    await turnsEnded(1);
    const res = await post(app, '/v1/sessions/s1/fork', { id: 'f1' });
    expect(res.statusCode, res.body).toBe(201);
    const fork = await info('f1');
    expect(fork.usage).toEqual((await info()).usage);
    expect(fork.budget).toEqual({ max_tokens: 100_000 });
  });
});
