// Shared OpenCode servers end to end (docs/opencode.md, "Shared servers"): the daemon's HTTP API,
// the real pinned `opencode serve` hosting several sessions, the fake model behind it. Most tests
// use bypass (nothing asked) to keep them short; one shares sessions that are asked. Sessions
// pick the fake model's scenario with a `[scenario:NAME]` marker in their prompt, so two sessions
// on one server get different answers and any event that reached the wrong session shows.
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { assistantMessages, completedItems, eventsUntil, expectWellFormedTurn, lastSequence, ofType, permissionIds, replyPermission, sendTurn, textOf } from '../../support/e2e-turns.js';
import type { Scenario } from '../../fake-model/server.js';
import { e2eResources } from '../../support/agent-e2e.js';
import { opencodeConfig, seedConfigDir } from './harness.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { alive, allGone, leftovers, processes } from '../../support/procs.js';
import { needAgents } from '../../support/test-agents.js';

needAgents(['opencode']);

const r = e2eResources();

/** A daemon (sharing on unless `config` says otherwise) and the env its OpenCode sessions get. */
async function daemon(scenarios: Record<string, Scenario>, config: Partial<Config> = {}) {
  const sandbox = r.makeSandbox('opencode-shared');
  const fake = await r.startFakeModel({ scenarios });
  const app = await r.makeApp({ baseDir: sandbox.work, config });
  seedConfigDir(sandbox);
  const configPath = join(sandbox.root, 'opencode.json');
  writeFileSync(configPath, JSON.stringify(opencodeConfig(fake)));
  const env: Record<string, string> = { ...sandbox.env, OPENCODE_CONFIG: configPath, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', npm_config_offline: 'true' };
  return { app, env, sandbox };
}

/** A session in `permissionMode` (bypass unless given): same mode, same env, same server, in the
 *  sandbox's work dir unless `cwd` names another. */
async function create(id: string, env: Record<string, string>, permissionMode = 'bypass', cwd = r.sandbox.work): Promise<void> {
  const res = await post(r.app, `/v1/sessions/${id}`, { agent: 'opencode', cwd, env, permissionMode });
  expect(res.statusCode, res.body).toBe(200);
}

/** The pid of the `opencode serve` a session's handle is on. */
function pidOf(id: string): number {
  const session = (r.app.sessions as unknown as { get(id: string): { agent: { current?: { pid?: number } } } }).get(id);
  expect(session.agent.current?.pid, `${id} has a server`).toBeTypeOf('number');
  return session.agent.current!.pid!;
}

const info = async (id: string) => (await r.app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` })).json() as { status: string; nativeSessionId?: string };
const toolOutputs = (events: UniversalEvent[]) => completedItems(events).flatMap((i) => i.content.flatMap((p) => (p.type === 'tool_result' ? [p.output] : [])));

/** Posts a message without waiting; returns the sequence it started after. */
async function start(id: string, message: string): Promise<number> {
  const from = await lastSequence(r.app, id);
  const res = await post(r.app, `/v1/sessions/${id}/messages`, { message });
  expect(res.statusCode, res.body).toBe(204);
  return from;
}

const question = (prompt: string) => ({ questions: [{ question: prompt, header: 'Colour', options: [{ label: 'red', description: 'warm' }, { label: 'blue', description: 'cool' }] }] });
const questionIds = (events: UniversalEvent[]) => ofType(events, 'question.requested').map((e) => e.data.question_id);

const slowShell = (name: string): Scenario => [[{ text: `${name} is working` }, { sleepMs: 20_000 }, { text: 'never said' }]];

describe('opencode shared servers (real server, fake model)', () => {
  it('two sessions on one server: concurrent turns stay apart, questions are answered per session, nothing unparsed', async () => {
    const { env } = await daemon({
      alpha: [[{ text: 'ALPHA asks.' }, { call: 'question', input: question('Alpha colour?') }], [{ text: 'ALPHA finished.' }]],
      beta: [[{ text: 'BETA runs it.' }, { tool: 'shell', command: 'echo beta-ran' }], [{ call: 'question', input: question('Beta colour?') }], [{ text: 'BETA finished.' }]],
    });
    await create('a', env);
    const t = performance.now();
    await create('b', env);
    const secondCreateMs = performance.now() - t;
    expect(pidOf('b')).toBe(pidOf('a'));
    expect((await info('a')).nativeSessionId).not.toBe((await info('b')).nativeSessionId);

    const [fromA, fromB] = await Promise.all([start('a', 'Ask alpha. [scenario:alpha]'), start('b', 'Run beta. [scenario:beta]')]);
    const [askedA, askedB] = await Promise.all([eventsUntil(r.app, 'a', fromA, ['question.requested'], 30_000), eventsUntil(r.app, 'b', fromB, ['question.requested'], 30_000)]);
    const [queA] = questionIds(askedA);
    const [queB] = questionIds(askedB);
    expect(queA).toMatch(/^que_/);
    expect(queB).toMatch(/^que_/);
    expect(queA).not.toBe(queB);
    expect(ofType(askedA, 'question.requested')[0]?.data.prompt).toBe('Alpha colour?');
    expect(ofType(askedB, 'question.requested')[0]?.data.prompt).toBe('Beta colour?');
    // A session cannot answer the other's request: it is not one of its own.
    expect((await post(r.app, `/v1/sessions/a/questions/${encodeURIComponent(queB!)}/reply`, { answers: [['red']] })).statusCode).toBe(404);
    expect((await post(r.app, `/v1/sessions/a/questions/${encodeURIComponent(queA!)}/reply`, { answers: [['blue']] })).statusCode).toBe(204);
    expect((await post(r.app, `/v1/sessions/b/questions/${encodeURIComponent(queB!)}/reject`)).statusCode).toBe(204);
    const [eventsA, eventsB] = await Promise.all([eventsUntil(r.app, 'a', fromA, ['turn.ended'], 30_000), eventsUntil(r.app, 'b', fromB, ['turn.ended'], 30_000)]);
    await expectWellFormedTurn(r.app, 'a', { from: fromA, events: eventsA }, 'Ask alpha. [scenario:alpha]');
    await expectWellFormedTurn(r.app, 'b', { from: fromB, events: eventsB }, 'Run beta. [scenario:beta]');
    expect(ofType(eventsA, 'question.resolved').map((e) => [e.data.status, e.data.response])).toEqual([['answered', 'blue']]);
    expect(ofType(eventsB, 'question.resolved').map((e) => e.data.status)).toEqual(['rejected']);
    expect(toolOutputs(eventsB)).toContain('beta-ran\n');
    expect(textOf(assistantMessages(eventsA).at(-1))).toBe('ALPHA finished.');
    // Nothing of one session reached the other, raw payloads included.
    const allA = JSON.stringify(await getEvents(r.app, 'a', 0, true));
    const allB = JSON.stringify(await getEvents(r.app, 'b', 0, true));
    expect(allA).not.toMatch(/BETA|beta-ran|Beta colour/);
    expect(allB).not.toMatch(/ALPHA|Alpha colour/);
    expect(allA).not.toContain((await info('b')).nativeSessionId!);
    expect(allB).not.toContain((await info('a')).nativeSessionId!);
    expectNoUnparsed(await getEvents(r.app, 'a'));
    expectNoUnparsed(await getEvents(r.app, 'b'));
    console.log(`[opencode-shared] second session's create on the running server: ${secondCreateMs.toFixed(0)} ms`);
  }, 120_000);

  it("sessions that can be asked share too: one session's `always` covers its own later requests, never another's", async () => {
    const { env } = await daemon({
      alpha: [[{ tool: 'shell', command: 'echo a1' }], [{ tool: 'shell', command: 'echo a2' }], [{ text: 'ALPHA done.' }]],
      beta: [[{ tool: 'shell', command: 'echo b1' }], [{ text: 'BETA done.' }]],
    });
    // OpenCode 1.18.33 keeps an `always` grant in its instance for every session on it (without
    // grants.ts, B's command ran unasked here): on a shared server the driver keeps it per session.
    await create('a', env, 'default');
    await create('b', env, 'default');
    expect(pidOf('b')).toBe(pidOf('a'));
    const turnA = await sendTurn(r.app, 'a', 'Two commands. [scenario:alpha]', { timeoutMs: 30_000 });
    await replyPermission(r.app, 'a', permissionIds(turnA.events)[0]!, 'always');
    const doneA = await eventsUntil(r.app, 'a', turnA.from, ['turn.ended'], 30_000);
    expect(permissionIds(doneA)).toHaveLength(1);
    expect(ofType(doneA, 'permission.resolved').map((e) => [e.data.status, (e.data.metadata as { reply?: string } | undefined)?.reply])).toEqual([['approved', 'always']]);
    expect(toolOutputs(doneA)).toEqual(['a1\n', 'a2\n']);
    await expectWellFormedTurn(r.app, 'a', { from: turnA.from, events: doneA }, 'Two commands. [scenario:alpha]');
    const turnB = await sendTurn(r.app, 'b', 'One command. [scenario:beta]', { timeoutMs: 30_000 });
    expect(permissionIds(turnB.events), JSON.stringify(turnB.events.map((e) => e.type))).toHaveLength(1);
    await replyPermission(r.app, 'b', permissionIds(turnB.events)[0]!, 'once');
    const doneB = await eventsUntil(r.app, 'b', turnB.from, ['turn.ended'], 30_000);
    expect(toolOutputs(doneB)).toEqual(['b1\n']);
    expectNoUnparsed(await getEvents(r.app, 'a'));
    expectNoUnparsed(await getEvents(r.app, 'b'));
  }, 120_000);

  it("sessions in different directories share one server, each working in its own; a directory's instance goes with its last session", async () => {
    const { env } = await daemon({
      alpha: [[{ tool: 'shell', command: 'pwd' }], [{ text: 'ALPHA done.' }]],
      beta: [[{ tool: 'shell', command: 'pwd' }], [{ text: 'BETA done.' }]],
      quick: [[{ text: 'QUICK answer.' }]],
    });
    const otherDir = join(r.sandbox.root, 'other-project');
    mkdirSync(otherDir);
    await create('a', env);
    await create('b', env, 'bypass', otherDir);
    const pid = pidOf('a');
    expect(pidOf('b')).toBe(pid);
    const [fromA, fromB] = await Promise.all([start('a', 'Where? [scenario:alpha]'), start('b', 'Where? [scenario:beta]')]);
    const [eventsA, eventsB] = await Promise.all([eventsUntil(r.app, 'a', fromA, ['turn.ended'], 30_000), eventsUntil(r.app, 'b', fromB, ['turn.ended'], 30_000)]);
    await expectWellFormedTurn(r.app, 'a', { from: fromA, events: eventsA }, 'Where? [scenario:alpha]');
    await expectWellFormedTurn(r.app, 'b', { from: fromB, events: eventsB }, 'Where? [scenario:beta]');
    // Each session's tools ran in its own directory: OpenCode's instance there.
    expect(toolOutputs(eventsA)).toEqual([`${realpathSync(r.sandbox.work)}\n`]);
    expect(toolOutputs(eventsB)).toEqual([`${realpathSync(otherDir)}\n`]);
    const allA = JSON.stringify(await getEvents(r.app, 'a', 0, true));
    const allB = JSON.stringify(await getEvents(r.app, 'b', 0, true));
    expect(allA).not.toMatch(/BETA|other-project/);
    expect(allB).not.toMatch(/ALPHA/);
    // The last session of the other directory goes: the server stays for the first one, and a
    // new session there gets a fresh instance on the same server.
    expect((await post(r.app, '/v1/sessions/b/terminate')).statusCode).toBe(204);
    expect(alive(pid)).toBe(true);
    await create('c', env, 'bypass', otherDir);
    expect(pidOf('c')).toBe(pid);
    const turn = await sendTurn(r.app, 'c', 'Answer. [scenario:quick]', { timeoutMs: 30_000 });
    await expectWellFormedTurn(r.app, 'c', turn, 'Answer. [scenario:quick]');
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('QUICK answer.');
    const again = await sendTurn(r.app, 'a', 'Answer. [scenario:quick]', { timeoutMs: 30_000 });
    await expectWellFormedTurn(r.app, 'a', again, 'Answer. [scenario:quick]');
    for (const id of ['a', 'b', 'c']) expectNoUnparsed(await getEvents(r.app, id));
  }, 120_000);

  it('terminating one session (mid-turn) leaves the other working; the last one ends the server', async () => {
    const { env } = await daemon({ slow: slowShell('SLOW'), quick: [[{ text: 'QUICK answer.' }], [{ text: 'QUICK again.' }]] });
    await create('a', env);
    await create('b', env);
    const pid = pidOf('a');
    expect(pidOf('b')).toBe(pid);
    const fromA = await start('a', 'Take long. [scenario:slow]');
    await waitFor(async () => (await getEvents(r.app, 'a', fromA)).some((e) => e.type === 'item.delta' && e.source === 'agent'), 30_000, 'a streamed delta');
    expect((await post(r.app, '/v1/sessions/a/terminate')).statusCode).toBe(204);
    const eventsA = await getEvents(r.app, 'a', fromA);
    expect(eventsA.at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
    // As on a server of its own: the turn ends as terminated, right before the session.
    expect(eventsA.at(-2)).toMatchObject({ type: 'turn.ended', data: { metadata: { reason: 'terminated' } } });
    expect(alive(pid)).toBe(true);
    const turn = await sendTurn(r.app, 'b', 'Answer. [scenario:quick]', { timeoutMs: 30_000 });
    await expectWellFormedTurn(r.app, 'b', turn, 'Answer. [scenario:quick]');
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('QUICK answer.');
    expectNoUnparsed(await getEvents(r.app, 'a'));
    expectNoUnparsed(await getEvents(r.app, 'b'));
    // Nothing the terminated session's turn did afterwards (its abort) reached its log.
    expect((await getEvents(r.app, 'a')).at(-1)?.type).toBe('session.ended');
    expect((await post(r.app, '/v1/sessions/b/terminate')).statusCode).toBe(204);
    await allGone(pid, 10_000);
  }, 120_000);

  it('resuming a native session joins the running server of its key: the conversation goes on', async () => {
    const { env } = await daemon({ conv: [[{ text: 'FIRST' }], [{ text: 'SECOND' }]], quick: [[{ text: 'QUICK answer.' }]] });
    await create('keeper', env);
    await create('b', env);
    const pid = pidOf('keeper');
    await sendTurn(r.app, 'b', 'First? [scenario:conv]', { timeoutMs: 30_000 });
    const nativeSessionId = (await info('b')).nativeSessionId;
    expect((await post(r.app, '/v1/sessions/b/terminate')).statusCode).toBe(204);
    const res = await post(r.app, '/v1/sessions/resumed', { agent: 'opencode', cwd: r.sandbox.work, env, permissionMode: 'bypass', nativeSessionId });
    expect(res.statusCode, res.body).toBe(200);
    expect(pidOf('resumed')).toBe(pid);
    const turn = await sendTurn(r.app, 'resumed', 'Second? [scenario:conv]', { timeoutMs: 30_000 });
    await expectWellFormedTurn(r.app, 'resumed', turn, 'Second? [scenario:conv]');
    // The fake model answers by the conversation it is sent: SECOND means the first turn was in it.
    expect(textOf(assistantMessages(turn.events).at(-1))).toBe('SECOND');
    expectNoUnparsed(await getEvents(r.app, 'resumed'));
    expect(JSON.stringify(await getEvents(r.app, 'keeper', 0, true))).not.toMatch(/FIRST|SECOND/);
  }, 120_000);

  it('a SIGKILLed shared server ends every session on it with session.ended and its exit; the next session gets a new server', async () => {
    const { env } = await daemon({ slow: slowShell('SLOW'), quick: [[{ text: 'QUICK answer.' }]] });
    await create('a', env);
    await create('b', env);
    await create('other', { ...env, SESSION_TAG: 'other' });
    const pid = pidOf('a');
    expect(pidOf('b')).toBe(pid);
    const otherPid = pidOf('other');
    expect(otherPid).not.toBe(pid);
    const fromA = await start('a', 'Take long. [scenario:slow]');
    await waitFor(async () => (await getEvents(r.app, 'a', fromA)).some((e) => e.type === 'item.delta' && e.source === 'agent'), 30_000, 'a streamed delta');
    process.kill(-pid, 'SIGKILL');
    const eventsA = await eventsUntil(r.app, 'a', fromA, ['session.ended'], 15_000);
    const eventsB = await eventsUntil(r.app, 'b', 0, ['session.ended'], 15_000);
    expect(eventsA.find((e) => e.type === 'error')).toMatchObject({ data: { code: 'agent_exited', details: { signal: 'SIGKILL' } } });
    expect(eventsA.find((e) => e.type === 'turn.ended')).toMatchObject({ data: { metadata: { reason: 'error' } } });
    for (const events of [eventsA, eventsB]) {
      const ended = events.find((e) => e.type === 'session.ended');
      expect(ended).toMatchObject({ data: { reason: 'error', terminated_by: 'agent', exit_code: null, message: 'agent process exited with signal SIGKILL' } });
      expect(ended?.type === 'session.ended' && ended.data.stderr).toBeTruthy();
    }
    expect((await info('a')).status).toBe('ended');
    expect((await info('b')).status).toBe('ended');
    await allGone(pid, 10_000);
    // The other server never noticed.
    expect(alive(otherPid)).toBe(true);
    expect((await info('other')).status).toBe('idle');
    await create('c', env);
    expect(pidOf('c')).not.toBe(pid);
    const turn = await sendTurn(r.app, 'c', 'Answer. [scenario:quick]', { timeoutMs: 30_000 });
    await expectWellFormedTurn(r.app, 'c', turn, 'Answer. [scenario:quick]');
    expectNoUnparsed(await getEvents(r.app, 'c'));
  }, 120_000);

  it('different env or permission mode: different servers; per-session: one server each', async () => {
    const { env } = await daemon({ quick: [[{ text: 'QUICK answer.' }]] });
    await create('a', env);
    await create('env', { ...env, SESSION_TAG: 'other' });
    await create('mode', env, 'acceptEdits');
    await create('mode2', env, 'acceptEdits');
    await create('same', env);
    expect(new Set([pidOf('a'), pidOf('env'), pidOf('mode')]).size).toBe(3);
    expect(pidOf('mode2')).toBe(pidOf('mode'));
    expect(pidOf('same')).toBe(pidOf('a'));
    await r.app.app.close();
    await r.fake.close();
    r.sandbox.cleanup();
    const again = await daemon({ quick: [[{ text: 'QUICK answer.' }]] }, { opencodeServers: 'per-session' });
    await create('x', again.env);
    await create('y', again.env);
    expect(pidOf('x')).not.toBe(pidOf('y'));
  }, 120_000);

  it('daemon shutdown leaves no opencode process behind', async () => {
    const { env } = await daemon({ quick: [[{ text: 'QUICK answer.' }]] });
    await create('a', env);
    await create('b', env);
    await create('c', { ...env, SESSION_TAG: 'other' });
    const pids = [...new Set(['a', 'b', 'c'].map(pidOf))];
    expect(pids).toHaveLength(2);
    await r.app.app.close();
    r.dropApp();
    for (const pid of pids) await allGone(pid, 10_000);
    for (const pid of pids) expect(leftovers(pid)).toEqual([]);
    expect(processes().filter((p) => p.ppid === process.pid && p.comm.startsWith('opencode') && p.state !== 'Z')).toEqual([]);
  }, 120_000);
});
