// Codex end to end: the daemon's HTTP API, the real pinned Codex (0.171.0, `codex app-server`) as
// the session's agent process, and the fake model server behind it. Every session runs in a
// throwaway sandbox (HOME, TMPDIR, XDG_* and the work dir) with CODEX_HOME inside it holding a
// config.toml for the fake provider (test/agents/codex/codex-session.ts's codexSessionEnv), so nothing
// reads or writes the machine's own config. More: test/agents/codex/e2e-features.test.ts, test/agents/codex/e2e-mcp.test.ts.
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../src/schema/api.js';
import type { UniversalEvent, UniversalItem } from '../../../src/schema/events.js';
import type { Scenario } from '../../fake-model/server.js';
import { eventsUntil, expectWellFormedTurn, lastSequence, permissionIds, replyPermission, sendTurn, turnAnswering as turnAnsweringIn } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post } from '../../support/helpers.js';
import { codexE2E } from './codex-session.js';
import { leftovers, processes } from '../../support/procs.js';

const SID = 'codex-e2e';
const e2e = codexE2E(SID);

/** A daemon with one codex session against a fake model answering `scenario`. */
function start(scenario: Scenario, permissionMode: PermissionMode = 'bypass', extra: Record<string, unknown> = {}) {
  return e2e.start({ scenario, permissionMode, body: extra });
}

/** The pid of the codex process working in `dir` (found in /proc, as a client would not know it). */
function codexPid(dir: string): number {
  const found = processes().filter((p) => {
    try {
      return readlinkSync(`/proc/${p.pid}/cwd`) === dir && p.state !== 'Z' && p.comm.startsWith('codex');
    } catch {
      return false;
    }
  });
  expect(found.map((p) => p.comm), 'one codex process in the work dir').toHaveLength(1);
  return found[0]!.pid;
}

const completed = (events: UniversalEvent[]): UniversalItem[] => events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
const assistantMessages = (events: UniversalEvent[]) => completed(events).filter((i) => i.kind === 'message' && i.role === 'assistant');
const textOf = (item: UniversalItem | undefined) => (item?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const deltasOf = (events: UniversalEvent[], itemId: string) =>
  events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === itemId ? [e.data.delta] : []));
const allEvents = () => e2e.events();
const reply = (permissionId: string, answer: 'once' | 'always' | 'reject') => replyPermission(e2e.app, SID, permissionId, answer);
/** Runs a turn to its end, answering every permission request with `answer`; returns all its events. */
const turnAnswering = (message: string, answer: 'once' | 'always' | 'reject') => turnAnsweringIn(e2e.app, SID, message, answer);

describe('codex e2e (real CLI, fake model)', () => {
  it('streams text as deltas that add up to the completed message', async () => {
    await start([[{ text: 'Hello from the fake model, streamed in several pieces.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Say hello.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Say hello.', { userFrom: 'agent' });
    const [reply] = assistantMessages(turn.events);
    expect(textOf(reply)).toBe('Hello from the fake model, streamed in several pieces.');
    const deltas = deltasOf(turn.events, reply!.item_id);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(textOf(reply));
    expectNoUnparsed(await allEvents());
  });

  it('runs a shell command: tool_call and tool_result with its output; each model request updates the usage totals', async () => {
    await start([[{ tool: 'shell', command: 'echo hello-from-shell' }], [{ text: 'It printed hello-from-shell.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Run echo.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Run echo.', { userFrom: 'agent' });
    const items = completed(turn.events);
    const call = items.find((i) => i.kind === 'tool_call');
    const result = items.find((i) => i.kind === 'tool_result');
    const callPart = call?.content.find((p) => p.type === 'tool_call');
    expect(callPart?.type === 'tool_call' ? callPart.arguments : '').toContain('echo hello-from-shell');
    const resultPart = result?.content.find((p) => p.type === 'tool_result');
    expect(resultPart?.type === 'tool_result' ? resultPart.output : '').toContain('hello-from-shell');
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('It printed hello-from-shell.');
    const all = await allEvents();
    expectNoUnparsed(all);
    // Live usage (docs/budgets.md): each of the turn's two model requests is a step as it happens,
    // and the totals equal the turn's usage at its end.
    const updates = all.flatMap((e) => (e.type === 'usage.updated' ? [e.data] : []));
    expect(updates.filter((u) => u.scope === 'step').length).toBeGreaterThanOrEqual(2);
    const ended = all.flatMap((e) => (e.type === 'turn.ended' ? [e.data.metadata.usage] : []));
    expect(ended).toHaveLength(1);
    expect(updates.at(-1)!.totals).toMatchObject({ input_tokens: ended[0]!.input_tokens, output_tokens: ended[0]!.output_tokens });
  });

  it('writes a file: the change is in the stream with its diff', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'hello.txt', content: 'hello\n' }], [{ text: 'Wrote hello.txt.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Write hello.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write hello.txt.', { userFrom: 'agent' });
    expect(readFileSync(join(sandbox.work, 'hello.txt'), 'utf8')).toBe('hello\n');
    const parts = completed(turn.events).flatMap((i) => i.content);
    const ref = parts.find((p) => p.type === 'file_ref');
    expect(ref, JSON.stringify(parts)).toBeDefined();
    expect(ref?.type === 'file_ref' ? ref.path : '').toContain('hello.txt');
    expect(ref?.type === 'file_ref' ? ref.diff : '').toContain('hello');
    expectNoUnparsed(await allEvents());
  });

  it.each([
    ['once', true],
    ['reject', false],
  ] as const)('default mode asks before a write; reply %s', async (answer, written) => {
    const { sandbox } = await start([[{ tool: 'write', path: 'notes.txt', content: 'notes\n' }], [{ text: 'Finished.' }]], 'default');
    const turn = await sendTurn(e2e.app, SID, 'Write notes.txt.');
    const [permissionId] = permissionIds(turn.events);
    expect(permissionId, JSON.stringify(turn.events.map((e) => e.type))).toBeDefined();
    expect((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json()).toMatchObject({ status: 'waiting' });
    expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(false);
    await reply(permissionId!, answer);
    const rest = await eventsUntil(e2e.app, SID, turn.from);
    const resolved = rest.filter((e) => e.type === 'permission.resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]!.type === 'permission.resolved' && resolved[0]!.data.permission_id).toBe(permissionId);
    expect(rest.at(-1)?.type).toBe('turn.ended');
    expect(existsSync(join(sandbox.work, 'notes.txt'))).toBe(written);
    expect(textOf(assistantMessages(rest).at(-1))).toBe('Finished.');
    expectNoUnparsed(await allEvents());
  });

  it("default mode: 'always' (acceptForSession) — the same command is not asked again", async () => {
    const { sandbox } = await start(
      [[{ tool: 'shell', command: 'echo x >> log.txt' }], [{ tool: 'shell', command: 'echo x >> log.txt' }], [{ text: 'Twice.' }]],
      'default',
    );
    const { events } = await turnAnswering('Log twice.', 'always');
    expect(permissionIds(events)).toHaveLength(1);
    expect(readFileSync(join(sandbox.work, 'log.txt'), 'utf8')).toBe('x\nx\n');
    expect(textOf(assistantMessages(events).at(-1))).toBe('Twice.');
    expectNoUnparsed(await allEvents());
  });

  it('acceptEdits mode: a write in the work dir is not asked', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'auto.txt', content: 'auto\n' }], [{ text: 'Wrote it.' }]], 'acceptEdits');
    const turn = await sendTurn(e2e.app, SID, 'Write auto.txt.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Write auto.txt.', { userFrom: 'agent' });
    expect(permissionIds(turn.events)).toEqual([]);
    expect(readFileSync(join(sandbox.work, 'auto.txt'), 'utf8')).toBe('auto\n');
    expectNoUnparsed(await allEvents());
  });

  it('plan mode (read-only sandbox): a write is asked, and rejected it is not written', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'plan.txt', content: 'plan\n' }], [{ text: 'Not written.' }]], 'plan');
    const { events } = await turnAnswering('Write plan.txt.', 'reject');
    expect(permissionIds(events)).toHaveLength(1);
    expect(existsSync(join(sandbox.work, 'plan.txt'))).toBe(false);
    expectNoUnparsed(await allEvents());
  });

  it('interrupts mid-turn; the turn ends and the next turn works on the same process', async () => {
    const { sandbox } = await start([
      [{ text: 'Counting slowly: one two three' }, { sleepMs: 4_000 }, { text: ' four five' }],
      [{ text: 'After the interrupt.' }],
    ]);
    const pid = codexPid(sandbox.work);
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'Count.' })).statusCode).toBe(204);
    await eventsUntil(e2e.app, SID, from, ['item.delta']);
    const t0 = Date.now();
    const res = await post(e2e.app, `/v1/sessions/${SID}/interrupt`);
    expect(res.statusCode, res.body).toBe(202);
    const events = await eventsUntil(e2e.app, SID, from, ['turn.ended', 'session.ended']);
    const interruptMs = Date.now() - t0;
    console.log(`[codex e2e] interrupt → turn.ended: ${interruptMs} ms`);
    expect(interruptMs).toBeLessThan(3_000);
    expect(events.some((e) => e.type === 'session.ended')).toBe(false);

    const second = await sendTurn(e2e.app, SID, 'Go on.');
    await expectWellFormedTurn(e2e.app, SID, second, 'Go on.', { userFrom: 'agent' });
    expect(assistantMessages(second.events).length).toBeGreaterThan(0);
    expect(codexPid(sandbox.work)).toBe(pid);
    expectNoUnparsed(await allEvents());
  });

  it('recovers from a model error (HTTP 500 once, then success)', async () => {
    await start([[{ error: 500, times: 1, retryAfterMs: 10 }, { text: 'Recovered after the retry.' }]]);
    const turn = await sendTurn(e2e.app, SID, 'Try.');
    await expectWellFormedTurn(e2e.app, SID, turn, 'Try.', { userFrom: 'agent' });
    expect(assistantMessages(turn.events).map(textOf)).toEqual(['Recovered after the retry.']);
    expect(e2e.fake.requests.filter((r) => r.status === 500)).toHaveLength(1);
    expectNoUnparsed(await allEvents());
  });

  it('runs two turns on the same thread and process', async () => {
    const { sandbox } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    const pid = codexPid(sandbox.work);
    for (const word of ['FIRST', 'SECOND']) {
      const turn = await sendTurn(e2e.app, SID, `Reply ${word}.`);
      await expectWellFormedTurn(e2e.app, SID, turn, `Reply ${word}.`, { userFrom: 'agent' });
      expect(assistantMessages(turn.events).map(textOf)).toEqual([word]);
    }
    // The second model request carried the first exchange.
    expect(JSON.stringify(e2e.fake.requests.at(-1)?.body)).toContain('FIRST');
    expect(codexPid(sandbox.work)).toBe(pid);
    const native = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ nativeSessionId?: string }>().nativeSessionId;
    expect(native).toBeTruthy();
    expectNoUnparsed(await allEvents());
  });

  it('re-opens the thread with nativeSessionId (thread/resume): the conversation continues', async () => {
    const { env } = await start([[{ text: 'FIRST' }], [{ text: 'SECOND' }]]);
    await sendTurn(e2e.app, SID, 'Reply FIRST.');
    const nativeId = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json<{ nativeSessionId?: string }>().nativeSessionId;
    expect(nativeId).toBeTruthy();
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    const res = await post(e2e.app, '/v1/sessions/again', { agent: 'codex', cwd: e2e.sandbox.work, env, permissionMode: 'bypass', nativeSessionId: nativeId });
    expect(res.statusCode, res.body).toBe(200);
    const turn = await sendTurn(e2e.app, 'again', 'Reply SECOND.');
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('SECOND');
    expect(JSON.stringify(e2e.fake.requests.at(-1)?.body)).toContain('FIRST');
    expectNoUnparsed(await getEvents(e2e.app, 'again'));
  });

  it('terminate ends the session and leaves no process behind', async () => {
    const { sandbox } = await start([[{ text: 'unused' }]]);
    const pid = codexPid(sandbox.work);
    const res = await post(e2e.app, `/v1/sessions/${SID}/terminate`);
    expect(res.statusCode, res.body).toBeLessThan(300);
    const events = await eventsUntil(e2e.app, SID, 0, ['session.ended']);
    const ended = events.find((e) => e.type === 'session.ended');
    expect(ended?.type === 'session.ended' ? ended.data : undefined).toMatchObject({ reason: 'terminated', terminated_by: 'daemon' });
    expect(leftovers(pid)).toEqual([]);
    expect(existsSync(`/proc/${pid}`) && readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z')).toBe(false);
    expectNoUnparsed(events);
  });

  it('terminate while a permission is pending declines it and leaves no process behind', async () => {
    const { sandbox } = await start([[{ tool: 'write', path: 'never.txt', content: 'no\n' }], [{ text: 'unused' }]], 'default');
    const pid = codexPid(sandbox.work);
    const turn = await sendTurn(e2e.app, SID, 'Write never.txt.');
    expect(permissionIds(turn.events)).toHaveLength(1);
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBeLessThan(300);
    await eventsUntil(e2e.app, SID, 0, ['session.ended']);
    expect(leftovers(pid)).toEqual([]);
    expect(existsSync(join(sandbox.work, 'never.txt'))).toBe(false);
    expectNoUnparsed(await allEvents());
  });
});

describe('codex without an executable', () => {
  it('answers 501 agent_not_available telling how to install it', async () => {
    const app = await e2e.makeApp({ config: { codexBin: '/nonexistent/codex' } });
    const res = await post(app, '/v1/sessions/no-codex', { agent: 'codex' });
    expect(res.statusCode, res.body).toBe(501);
    expect(res.json()).toMatchObject({ code: 'agent_not_available', agent: 'codex' });
    expect(res.json().detail).toContain('agentwire install-agent codex');
  });
});
