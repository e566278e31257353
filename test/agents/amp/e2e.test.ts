// Amp end to end: the daemon's HTTP API with the Amp adapter driving the stand-in CLI
// (test/support/amp-standin, which reproduces the pinned binary's stream-json format, exit codes,
// thread store and delegate calls; the real CLI cannot run a turn without Amp's servers). Each
// session runs in a throwaway sandbox; the stand-in's threads live inside it.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../../src/agents/registry.js';
import type { Config } from '../../../src/config.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { agentE2E } from '../../support/agent-e2e.js';
import { assistantMessages, completedItems, deltasOf, eventsUntil, expectWellFormedTurn, lastSequence, ofType, sendTurn, textOf } from '../../support/e2e-turns.js';
import { expectNoUnparsed, getEvents, post, waitFor } from '../../support/helpers.js';
import { expectProblem } from '../../support/http-problems.js';
import type { Sandbox } from '../../support/sandbox.js';
import { processes } from '../../support/procs.js';

const STANDIN = new URL('../../support/amp-standin/amp', import.meta.url).pathname;
const SID = 'amp-e2e';
// A short stdin timeout: a driver that left stdin open would fail every turn (Amp waits 30 s).
const e2e = agentE2E({
  agent: 'amp',
  sid: SID,
  fakeModel: false,
  pinnedCli: false,
  app: () => ({ config: { ampBin: STANDIN } }),
  env: ({ sandbox }) => ({ ...sandbox.env, AMP_API_KEY: 'sgamp_standin', AMP_STANDIN_HOME: join(sandbox.root, 'threads'), AMP_STANDIN_STDIN_TIMEOUT_MS: '3000' }),
});

function start(extra: Record<string, unknown> = {}, env: Record<string, string> = {}, config: Partial<Config> = {}, prepare?: (box: Sandbox) => void) {
  return e2e.start({ body: extra, env, config, ...(prepare ? { prepare } : {}) });
}

const all = () => e2e.events();
const threadOf = (events: UniversalEvent[]) => ofType(events, 'session.started')[0]?.native_session_id;

async function reply(id: string, answer: 'once' | 'always' | 'reject') {
  const res = await post(e2e.app, `/v1/sessions/${SID}/permissions/${id}/reply`, { reply: answer });
  expect(res.statusCode, res.body).toBe(204);
}

/** The stand-in processes (node running amp.mjs) working in `dir`. */
function ampProcesses(dir: string) {
  return processes().filter((p) => {
    try {
      return p.state !== 'Z' && readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('amp-standin') && readFileSync(`/proc/${p.pid}/environ`, 'utf8').includes(dir);
    } catch {
      return false;
    }
  });
}

describe('Amp through the daemon (stand-in CLI)', () => {
  it('answers a text turn: session.started from system/init names the thread; one full-text delta', async () => {
    await start();
    const turn = await sendTurn(e2e.app, SID, 'hello there');
    await expectWellFormedTurn(e2e.app, SID, turn, 'hello there');
    const events = await all();
    const started = ofType(events, 'session.started');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ source: 'agent', data: { metadata: { agent_mode: 'medium', cwd: e2e.sandbox.work } } });
    expect(threadOf(events)).toMatch(/^T-[0-9a-f-]{36}$/);
    const [message] = assistantMessages(turn.events);
    expect(textOf(message)).toBe('You said: hello there (message 1 in this thread)');
    expect(deltasOf(turn.events, message!.item_id)).toEqual([textOf(message)]);
    const info = (await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json() as { nativeSessionId: string; status: string };
    expect(info).toMatchObject({ nativeSessionId: threadOf(events), status: 'idle' });
  });

  it('keeps one thread over two turns (threads continue), with no process between turns', async () => {
    await start();
    const first = await sendTurn(e2e.app, SID, 'one');
    await expectWellFormedTurn(e2e.app, SID, first, 'one');
    await waitFor(() => ampProcesses(e2e.sandbox.root).length === 0 || undefined, 5000, 'the first turn process to exit');
    const second = await sendTurn(e2e.app, SID, 'two');
    await expectWellFormedTurn(e2e.app, SID, second, 'two');
    expect(textOf(assistantMessages(second.events)[0])).toBe('You said: two (message 2 in this thread)');
    const events = await all();
    expect(new Set(events.map((e) => e.native_session_id).filter(Boolean)).size).toBe(1);
    expect(readdirSync(join(e2e.sandbox.root, 'threads'))).toEqual([`${threadOf(events)}.json`]);
    // Terminating an idle session ends it (the last turn's process may still be on its way out).
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    expect(ofType(await all(), 'session.ended').map((e) => e.data)).toEqual([{ reason: 'terminated', terminated_by: 'daemon', exit_code: expect.toBeOneOf([null, 0]) }]);
    expect(ampProcesses(e2e.sandbox.root)).toEqual([]);
  });

  it("passes a prompt that starts with '-' (or is very long) on stdin, and names attachments by path", async () => {
    await start();
    writeFileSync(join(e2e.sandbox.work, 'spec.md'), '# spec');
    const turn = await sendTurn(e2e.app, SID, '-v is not a flag here');
    await expectWellFormedTurn(e2e.app, SID, turn, '-v is not a flag here');
    expect(textOf(assistantMessages(turn.events)[0])).toBe('You said: -v is not a flag here (message 1 in this thread)');
    const long = 'x'.repeat(150_000);
    const second = await sendTurn(e2e.app, SID, long, { attachments: [{ path: 'spec.md' }] });
    expect(textOf(assistantMessages(second.events)[0])).toBe(`You said: ${long}\n\nAttached files:\n- ${join(e2e.sandbox.work, 'spec.md')} (message 2 in this thread)`);
    expectNoUnparsed(await all());
  });

  it('turns thinking into reasoning parts and runs a shell command (bypass)', async () => {
    await start({ permissionMode: 'bypass', agentMode: 'high' });
    const prompt = '/think Let me look.\n/bash echo hi; exit 3\n/text It printed hi.';
    const turn = await sendTurn(e2e.app, SID, prompt);
    await expectWellFormedTurn(e2e.app, SID, turn, prompt);
    const items = completedItems(turn.events);
    expect(items.find((i) => i.kind === 'message' && i.role === 'assistant')?.content).toEqual([{ type: 'reasoning', text: 'Let me look.', visibility: 'public' }]);
    const call = items.find((i) => i.kind === 'tool_call');
    expect(call?.content[0]).toMatchObject({ type: 'tool_call', name: 'Bash', arguments: '{"cmd":"echo hi; exit 3"}' });
    const result = items.find((i) => i.kind === 'tool_result');
    expect(result).toMatchObject({ status: 'completed', content: [{ type: 'tool_result', output: 'hi\n' }, { type: 'json', json: { exit_code: 3 } }] });
    expect(ofType(await all(), 'session.started')[0]?.data.metadata).toMatchObject({ agent_mode: 'high' });
    expect(ofType(turn.events, 'permission.requested')).toEqual([]);
  });

  it('shows a file edit as file_ref parts, and the file really changes (acceptEdits: no prompt)', async () => {
    await start({ permissionMode: 'acceptEdits' });
    const prompt = '/write {"path":"notes.txt","content":"alpha\\n"}\n/edit {"path":"notes.txt","old_str":"alpha","new_str":"beta"}\n/text Edited.';
    const turn = await sendTurn(e2e.app, SID, prompt);
    await expectWellFormedTurn(e2e.app, SID, turn, prompt);
    expect(readFileSync(join(e2e.sandbox.work, 'notes.txt'), 'utf8')).toBe('beta\n');
    const calls = completedItems(turn.events).filter((i) => i.kind === 'tool_call');
    expect(calls.map((c) => c.content[1])).toEqual([
      { type: 'file_ref', path: 'notes.txt', action: 'write', diff: '--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+alpha\n' },
      { type: 'file_ref', path: 'notes.txt', action: 'patch', diff: '--- a/notes.txt\n+++ b/notes.txt\n@@ @@\n-alpha\n+beta\n' },
    ]);
    const results = completedItems(turn.events).filter((i) => i.kind === 'tool_result');
    expect(results.map((r) => r.content.at(-1))).toEqual([
      { type: 'file_ref', path: 'notes.txt', action: 'write' },
      { type: 'file_ref', path: 'notes.txt', action: 'patch' },
    ]);
    expect(ofType(turn.events, 'permission.requested')).toEqual([]);
  });

  it('reports an agent error result (exit code 0) as error + turn.ended; the session goes on', async () => {
    await start();
    const prompt = '/text Working on it.\n/error Amp server returned an error: overloaded';
    const turn = await sendTurn(e2e.app, SID, prompt);
    await expectWellFormedTurn(e2e.app, SID, turn, prompt);
    expect(ofType(turn.events, 'error').map((e) => e.data)).toEqual([{ message: 'Amp server returned an error: overloaded', code: 'amp_error_during_execution' }]);
    const next = await sendTurn(e2e.app, SID, 'still there?');
    await expectWellFormedTurn(e2e.app, SID, next, 'still there?');
    expect(textOf(assistantMessages(next.events)[0])).toContain('message 2 in this thread');
  });

  it('ends the session on a fatal `Error: …` exit (code 1), with the message and stderr', async () => {
    await start();
    await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: "/fatal Couldn't connect to the Amp server at https://ampcode.com/." });
    const events = await eventsUntil(e2e.app, SID, 0, ['session.ended']);
    expectNoUnparsed(events);
    const message = "Error: Couldn't connect to the Amp server at https://ampcode.com/.";
    expect(ofType(events, 'error').map((e) => e.data)).toEqual([{ message, code: 'amp_exited', details: { exit_code: 1, signal: null } }]);
    expect(ofType(events, 'session.ended')[0]?.data).toMatchObject({ reason: 'error', terminated_by: 'agent', exit_code: 1, message });
    expect(events.map((e) => e.type).slice(-2)).toEqual(['turn.ended', 'session.ended']);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'again' })).statusCode).toBe(409);
  });

  it('interrupts a running turn with SIGINT: an error result ends the turn, the thread continues', async () => {
    await start();
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: '/text Starting.\n/sleep 20000\n/text never' })).statusCode).toBe(204);
    await waitFor(async () => ofType(await getEvents(e2e.app, SID, from), 'item.completed').some((e) => e.data.item.role === 'assistant') || undefined);
    expect((await post(e2e.app, `/v1/sessions/${SID}/interrupt`)).statusCode).toBe(202);
    const events = await eventsUntil(e2e.app, SID, from, ['turn.ended']);
    expectNoUnparsed(events);
    expect(ofType(events, 'error').map((e) => e.data.message)).toEqual(['User cancelled (SIGINT/SIGTERM)']);
    expect(ofType(events, 'turn.ended')[0]?.data.metadata.reason).toBe('interrupted');
    const next = await sendTurn(e2e.app, SID, 'after the interrupt');
    await expectWellFormedTurn(e2e.app, SID, next, 'after the interrupt');
    expect(textOf(assistantMessages(next.events)[0])).toContain('message 2 in this thread');
  });

  it('interrupts before the stream runs (the signal kills the CLI): error amp_interrupted, the session goes on', async () => {
    await start({}, { AMP_STANDIN_CONNECT_MS: '20000' });
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: 'slow to connect' })).statusCode).toBe(204);
    await waitFor(() => ampProcesses(e2e.sandbox.root).length > 0 || undefined);
    expect((await post(e2e.app, `/v1/sessions/${SID}/interrupt`)).statusCode).toBe(202);
    const events = await eventsUntil(e2e.app, SID, from, ['turn.ended']);
    expectNoUnparsed(events);
    expect(ofType(events, 'error').map((e) => e.data)).toEqual([
      { message: 'Amp was interrupted and exited with signal SIGINT without a result.', code: 'amp_interrupted', details: { exit_code: null, signal: 'SIGINT' } },
    ]);
    expect(((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json() as { status: string }).status).toBe('idle');
  });

  it('asks through the delegate: allow runs the command, reject tells Amp, always is remembered', async () => {
    await start();
    const prompt = '/bash echo allowed > a.txt\n/bash echo rejected > b.txt\n/text Done both.';
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: prompt })).statusCode).toBe(204);
    let events = await eventsUntil(e2e.app, SID, from, ['permission.requested']);
    const first = ofType(events, 'permission.requested')[0]!;
    expect(first.data).toMatchObject({ action: 'Bash', status: 'requested', metadata: { input: { cmd: 'echo allowed > a.txt' } } });
    expect((first.data.metadata as { thread_id: string }).thread_id).toMatch(/^T-/);
    expect(((await e2e.app.app.inject({ method: 'GET', url: `/v1/sessions/${SID}` })).json() as { status: string }).status).toBe('waiting');
    await reply(first.data.permission_id, 'once');
    events = await waitFor(async () => {
      const e = await getEvents(e2e.app, SID, from);
      return ofType(e, 'permission.requested').length === 2 ? e : undefined;
    });
    await reply(ofType(events, 'permission.requested')[1]!.data.permission_id, 'reject');
    events = await eventsUntil(e2e.app, SID, from, ['turn.ended']);
    expectNoUnparsed(events);
    expect(readFileSync(join(e2e.sandbox.work, 'a.txt'), 'utf8')).toBe('allowed\n');
    expect(existsSync(join(e2e.sandbox.work, 'b.txt'))).toBe(false);
    const results = completedItems(events).filter((i) => i.kind === 'tool_result');
    expect(results.map((r) => r.status)).toEqual(['completed', 'failed']);
    expect(results[1]?.content[0]).toMatchObject({ output: 'Tool execution rejected by user: The user rejected this tool use.' });
    expect(ofType(events, 'permission.resolved').map((e) => e.data.status)).toEqual(['approved', 'denied']);

    // `always`: the next Bash call of the session is answered at once, and still shown.
    const again = await sendTurn(e2e.app, SID, '/bash echo one > c.txt\n/text ok');
    await reply(ofType(again.events, 'permission.requested')[0]!.data.permission_id, 'always');
    await eventsUntil(e2e.app, SID, again.from, ['turn.ended']);
    const third = await sendTurn(e2e.app, SID, '/bash echo two > d.txt\n/text ok', { until: ['turn.ended'] });
    await expectWellFormedTurn(e2e.app, SID, third, '/bash echo two > d.txt\n/text ok');
    expect(readFileSync(join(e2e.sandbox.work, 'd.txt'), 'utf8')).toBe('two\n');
    expect(ofType(third.events, 'permission.requested')).toHaveLength(1);
    expect(ofType(third.events, 'permission.resolved')[0]?.data).toMatchObject({ status: 'approved', metadata: { reply: 'always', reason: 'remembered' } });
  });

  it('as --agent-user nobody: the CLI and its delegate run as that user, and permissions still go to the client', async () => {
    expect(process.getuid?.(), 'this test runs Amp as another user: run it as root (CI does)').toBe(0);
    await start({}, {}, { agentUser: 'nobody' }, (box) => {
      // The user must be able to use the session's cwd, HOME and TMPDIR, and the stand-in's threads.
      chmodSync(box.root, 0o755);
      for (const dir of [box.home, box.work, join(box.root, 'tmp'), join(box.root, 'threads')]) {
        mkdirSync(dir, { recursive: true });
        chmodSync(dir, 0o777);
      }
    });
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: '/bash id -u > who.txt' })).statusCode).toBe(204);
    const asked = ofType(await eventsUntil(e2e.app, SID, from, ['permission.requested']), 'permission.requested')[0]!;
    const cli = ampProcesses(e2e.sandbox.root);
    expect(cli.length).toBeGreaterThan(0);
    for (const p of cli) expect(readFileSync(`/proc/${p.pid}/status`, 'utf8')).toMatch(/^Uid:\t65534\t/m);
    await reply(asked.data.permission_id, 'once');
    const events = await eventsUntil(e2e.app, SID, from, ['turn.ended']);
    expectNoUnparsed(events);
    expect(readFileSync(join(e2e.sandbox.work, 'who.txt'), 'utf8')).toBe('65534\n');
    expect(ofType(events, 'permission.resolved').map((e) => e.data.status)).toEqual(['approved']);
  });

  it('terminate kills a turn blocked on a permission: the delegate and the CLI are gone, the session dir removed', async () => {
    await start();
    const from = await lastSequence(e2e.app, SID);
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: '/bash echo x > x.txt' })).statusCode).toBe(204);
    await eventsUntil(e2e.app, SID, from, ['permission.requested']);
    const dirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('agentwire-amp-'));
    const before = dirs();
    const procs = ampProcesses(e2e.sandbox.root);
    expect(procs.length).toBeGreaterThan(0);
    const delegates = processes().filter((p) => {
      try {
        return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('delegate.js') && p.state !== 'Z';
      } catch {
        return false;
      }
    });
    expect(delegates.length).toBeGreaterThan(0);
    expect((await post(e2e.app, `/v1/sessions/${SID}/terminate`)).statusCode).toBe(204);
    const events = await all();
    expect(ofType(events, 'session.ended')[0]?.data).toMatchObject({ reason: 'terminated', terminated_by: 'daemon' });
    expect(ofType(events, 'permission.resolved')[0]?.data).toMatchObject({ status: 'denied' });
    await waitFor(() => (ampProcesses(e2e.sandbox.root).length === 0 && delegates.every((d) => !existsSync(`/proc/${d.pid}/cmdline`) || processes().find((p) => p.pid === d.pid)?.state === 'Z')) || undefined, 5000, 'the CLI and its delegate to exit');
    expect(dirs().length).toBeLessThan(before.length + 1);
    expect(existsSync(join(e2e.sandbox.work, 'x.txt'))).toBe(false);
  });

  // Messages during a turn and forks (docs/queue-steer-fork.md, docs/amp.md): Amp runs one process
  // per turn with stdin closed, so nothing reaches a running turn (steer 409), and it cannot fork
  // a thread (409); queue and interrupt are the daemon's: each message runs as its own turn process.
  it('delivery: steer and fork are refused; queue waits for the running turn, interrupt stops it and goes first', async () => {
    await start();
    const agents = (await e2e.app.app.inject({ method: 'GET', url: '/v1/agents' })).json<{ agents: { id: string; capabilities: Record<string, boolean> }[] }>();
    expect(agents.agents.find((a) => a.id === 'amp')?.capabilities).toMatchObject({ steer: false, fork: false, forkAtTurn: false });
    const send = (message: string, delivery: string) => post(e2e.app, `/v1/sessions/${SID}/messages`, { message, delivery });
    expect((await post(e2e.app, `/v1/sessions/${SID}/messages`, { message: '/text Starting.\n/sleep 20000\n/text never' })).statusCode).toBe(204);
    await waitFor(async () => ofType(await all(), 'item.completed').some((e) => e.data.item.role === 'assistant') || undefined);
    expectProblem(await send('use tabs', 'steer'), 409, 'steer_unsupported');
    const queued = await send('queued', 'queue');
    expect(queued.json()).toMatchObject({ status: 'queued', position: 0 });
    const first = await send('instead', 'interrupt');
    expect(first.json()).toMatchObject({ status: 'queued', position: 0 });
    const events = await waitFor(async () => {
      const got = await all();
      return ofType(got, 'turn.ended').length >= 3 ? got : undefined;
    }, 10_000, 'three turns');
    expect(ofType(events, 'turn.ended').map((e) => e.data.metadata.reason)).toEqual(['interrupted', 'completed', 'completed']);
    expect(ofType(events, 'turn.started').map((e) => e.data.message_id)).toEqual([undefined, first.json().messageId, queued.json().messageId]);
    // One turn process at a time, in order, on the one thread.
    expect(assistantMessages(events).map(textOf).slice(-2)).toEqual(['You said: instead (message 2 in this thread)', 'You said: queued (message 3 in this thread)']);
    expectProblem(await post(e2e.app, `/v1/sessions/${SID}/fork`, {}), 409, 'fork_unsupported');
    expectProblem(await post(e2e.app, `/v1/sessions/${SID}/fork`, { at: ofType(events, 'turn.ended')[1]!.sequence }), 409, 'fork_unsupported');
    expectNoUnparsed(await all());
  });

  it('lists its modes and models, and refuses what Amp cannot do: an unknown agentMode, a model choice', async () => {
    const sandbox = e2e.makeSandbox('amp-e2e');
    const app = await e2e.makeApp({ baseDir: sandbox.work, config: { ampBin: STANDIN } });
    const env = { AMP_API_KEY: 'k' };
    const bad = await post(app, '/v1/sessions/m1', { agent: 'amp', cwd: sandbox.work, env, agentMode: 'plan' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_request' });
    const model = await post(app, '/v1/sessions/m2', { agent: 'amp', cwd: sandbox.work, env, model: 'gpt-9' });
    expect(model.statusCode).toBe(400);
    // What GET /v1/agents/amp/modes and …/models answer with (the driver's static lists).
    const driver = createRegistry({ maxLineChars: 1 << 20, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 20, stderrTailLines: 50 }).amp!;
    expect(driver.modes.map((m) => m.id)).toEqual(['medium', 'low', 'high', 'ultra']);
    expect(driver.models).toMatchObject({ models: [{ id: 'default' }], defaultModel: 'default' });
    expect(driver.permissionModes).toEqual(['default', 'bypass', 'acceptEdits']);
  });
});
