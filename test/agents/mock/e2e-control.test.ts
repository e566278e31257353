// The mock commands that steer the turn or the session rather than produce content, end to end:
// permission and question pauses, reported errors, the agent ending or crashing, interrupts.
import { describe, expect, it } from 'vitest';
import {
  assistantMessages,
  completedItems,
  deltasOf,
  eventsUntil,
  expectWellFormedTurn,
  ofType,
  sendTurn,
  textOf,
  type Turn,
} from '../../support/e2e-turns.js';
import { mockE2E } from '../../support/agent-e2e.js';
import { post, waitFor } from '../../support/helpers.js';

const SID = 'e2e';
const e2e = mockE2E(SID);

async function status(): Promise<string> {
  return (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ status: string }>().status;
}

/** After a HITL reply: the whole turn, from its turn.started to its turn.ended. */
async function resume(paused: Turn): Promise<Turn> {
  return { from: paused.from, events: await eventsUntil(e2e.app, SID, paused.from) };
}

async function askPermission(): Promise<{ turn: Turn; permissionId: string }> {
  const turn = await sendTurn(e2e.app, SID, 'permission');
  const [asked] = ofType(turn.events, 'permission.requested');
  expect(asked).toMatchObject({ source: 'agent', data: { action: 'write_file', status: 'requested', metadata: { input: { path: 'notes.txt' } } } });
  expect(await status()).toBe('waiting');
  return { turn, permissionId: asked!.data.permission_id };
}

async function replyPermission(permissionId: string, reply: string) {
  const res = await post(e2e.app, `/v1/sessions/${SID}/permissions/${permissionId}/reply`, { reply });
  expect(res.statusCode, res.body).toBe(204);
}

function toolKinds(events: Turn['events']): string[] {
  return completedItems(events)
    .map((i) => i.kind)
    .filter((k) => k === 'tool_call' || k === 'tool_result');
}

describe('mock e2e: permissions', () => {
  it('once: the tool runs and the reply says so', async () => {
    const { turn, permissionId } = await askPermission();
    await replyPermission(permissionId, 'once');
    const done = await resume(turn);
    await expectWellFormedTurn(e2e.app, SID, done, 'permission');
    expect(ofType(done.events, 'permission.resolved')).toEqual([
      expect.objectContaining({ source: 'daemon', synthetic: true, data: expect.objectContaining({ permission_id: permissionId, status: 'approved', metadata: expect.objectContaining({ reply: 'once' }) }) }),
    ]);
    expect(toolKinds(done.events)).toEqual(['tool_call', 'tool_result']);
    expect(assistantMessages(done.events).map(textOf).at(-1)).toBe('Permission granted; wrote notes.txt.');
    expect(await status()).toBe('idle');
  });

  it('reject: nothing runs and the reply says so', async () => {
    const { turn, permissionId } = await askPermission();
    await replyPermission(permissionId, 'reject');
    const done = await resume(turn);
    await expectWellFormedTurn(e2e.app, SID, done, 'permission');
    expect(ofType(done.events, 'permission.resolved').map((e) => e.data.status)).toEqual(['denied']);
    expect(toolKinds(done.events)).toEqual([]);
    expect(assistantMessages(done.events).map(textOf).at(-1)).toBe('Permission denied; did not write notes.txt.');
  });

  it('always: a later permission command does not ask again', async () => {
    const { turn, permissionId } = await askPermission();
    await replyPermission(permissionId, 'always');
    await expectWellFormedTurn(e2e.app, SID, await resume(turn), 'permission');

    const again = await sendTurn(e2e.app, SID, 'permission');
    await expectWellFormedTurn(e2e.app, SID, again, 'permission');
    expect(ofType(again.events, 'permission.requested')).toEqual([]);
    expect(toolKinds(again.events)).toEqual(['tool_call', 'tool_result']);
    expect(assistantMessages(again.events).map(textOf).at(-1)).toBe('Permission granted; wrote notes.txt.');
  });
});

describe('mock e2e: questions', () => {
  async function ask(): Promise<{ turn: Turn; questionId: string }> {
    const turn = await sendTurn(e2e.app, SID, 'question');
    const [asked] = ofType(turn.events, 'question.requested');
    expect(asked?.data).toMatchObject({ prompt: 'Which color do you prefer?', options: ['red', 'green', 'blue'], status: 'requested' });
    expect(await status()).toBe('waiting');
    return { turn, questionId: asked!.data.question_id };
  }

  it('answer: the agent hears it', async () => {
    const { turn, questionId } = await ask();
    const res = await post(e2e.app, `/v1/sessions/${SID}/questions/${questionId}/reply`, { answers: [['red']] });
    expect(res.statusCode, res.body).toBe(204);
    const done = await resume(turn);
    await expectWellFormedTurn(e2e.app, SID, done, 'question');
    expect(ofType(done.events, 'question.resolved').map((e) => e.data)).toEqual([
      expect.objectContaining({ question_id: questionId, status: 'answered', response: 'red' }),
    ]);
    expect(assistantMessages(done.events).map(textOf)).toEqual(['You answered: red']);
  });

  it('reject: the agent hears that too', async () => {
    const { turn, questionId } = await ask();
    const res = await post(e2e.app, `/v1/sessions/${SID}/questions/${questionId}/reject`);
    expect(res.statusCode, res.body).toBe(204);
    const done = await resume(turn);
    await expectWellFormedTurn(e2e.app, SID, done, 'question');
    expect(ofType(done.events, 'question.resolved').map((e) => e.data.status)).toEqual(['rejected']);
    expect(assistantMessages(done.events).map(textOf)).toEqual(['Question rejected.']);
  });
});

describe('mock e2e: errors and endings', () => {
  it('error: an error event, then the turn ends normally and the session stays usable', async () => {
    const turn = await sendTurn(e2e.app, SID, 'error');
    await expectWellFormedTurn(e2e.app, SID, turn, 'error');
    const types = turn.events.map((e) => e.type);
    expect(types.indexOf('error')).toBeLessThan(types.indexOf('turn.ended'));
    expect(ofType(turn.events, 'error').map((e) => [e.source, e.data])).toEqual([['agent', { message: 'mock error requested', code: 'mock_error' }]]);
    expect(await status()).toBe('idle');
  });

  it('end: the agent ends the session itself', async () => {
    const turn = await sendTurn(e2e.app, SID, 'end', { until: ['session.ended'] });
    await expectWellFormedTurn(e2e.app, SID, turn, 'end');
    expect(assistantMessages(turn.events).map(textOf)).toEqual(['Goodbye.']);
    const ended = ofType(turn.events, 'session.ended');
    expect(ended).toEqual([expect.objectContaining({ source: 'agent', data: { reason: 'completed', terminated_by: 'agent' } })]);
    expect(turn.events.at(-1)?.type).toBe('session.ended');
    await waitFor(async () => (await status()) === 'ended', 5000, 'status ended');
    // The process exiting afterwards must not add a second ending.
    await new Promise((r) => setTimeout(r, 100));
    expect(ofType(await eventsUntil(e2e.app, SID, 0), 'session.ended')).toHaveLength(1);
  });

  it('crash: an error, then session.ended with the exit code and the whole stderr', async () => {
    const turn = await sendTurn(e2e.app, SID, 'crash');
    await expectWellFormedTurn(e2e.app, SID, turn, 'crash');
    expect(ofType(turn.events, 'turn.ended')[0]?.data.metadata).toEqual({ reason: 'error' });
    const [error] = ofType(turn.events, 'error');
    expect(error).toMatchObject({ source: 'daemon', data: { code: 'agent_exited', details: { exit_code: 3, signal: null } } });
    const [ended] = ofType(turn.events, 'session.ended');
    expect(ended?.data).toMatchObject({ reason: 'error', terminated_by: 'agent', exit_code: 3 });
    const lines = Array.from({ length: 5 }, (_, i) => `mock: fatal line ${i + 1}`);
    expect(ended?.data.stderr).toEqual({ head: lines.join('\n'), truncated: false, total_lines: 5 });
    expect(await status()).toBe('ended');
  });

  it('crash 200: stderr keeps the first 20 and the last 50 lines', async () => {
    const turn = await sendTurn(e2e.app, SID, 'crash 200');
    await expectWellFormedTurn(e2e.app, SID, turn, 'crash 200');
    const stderr = ofType(turn.events, 'session.ended')[0]?.data.stderr;
    expect(stderr).toMatchObject({ truncated: true, total_lines: 200 });
    const head = stderr?.head?.split('\n') ?? [];
    const tail = stderr?.tail?.split('\n') ?? [];
    expect(head).toHaveLength(20);
    expect(tail).toHaveLength(50);
    expect([head[0], head.at(-1), tail[0], tail.at(-1)]).toEqual([
      'mock: fatal line 1',
      'mock: fatal line 20',
      'mock: fatal line 151',
      'mock: fatal line 200',
    ]);
  });
});

describe('mock e2e: interrupt', () => {
  it('slow N + interrupt: the partial message completes and the turn ends as interrupted', async () => {
    const turn = await sendTurn(e2e.app, SID, 'slow 20', { until: ['item.delta'] });
    const res = await post(e2e.app, `/v1/sessions/${SID}/interrupt`);
    expect(res.statusCode, res.body).toBe(202);
    const done = await resume(turn);
    await expectWellFormedTurn(e2e.app, SID, done, 'slow 20');
    expect(ofType(done.events, 'turn.ended')[0]?.data.metadata).toEqual({ reason: 'interrupted' });
    const [partial] = assistantMessages(done.events);
    const text = textOf(partial);
    expect(text).toMatch(/^(tick \d+\n)+$/);
    expect(text).not.toContain('tick 20');
    expect(deltasOf(done.events, partial!.item_id).join('')).toBe(text);
    expect(await status()).toBe('idle');
  });
});
