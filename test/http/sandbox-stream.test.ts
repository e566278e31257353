// POST /stream with the mock agent, over a real socket, read by a consumer written as the chat
// backend described by the sandbox envelope reference reads a sandbox (test/support/envelope-consumer.ts):
// only log, step, result and error lines, steps correlated by id, exactly one terminal line; the
// permission policies, a crash, an abort mid-step (nothing left running), a flood, history and
// continuing a session, and the refusals that stay problem+json.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { SandboxLines } from '../../src/http/sandbox-lines.js';
import { dispatch, type Rendered } from '../support/envelope-consumer.js';
import { expectNoUnparsed, getEvents, makeApp, waitFor } from '../support/helpers.js';
import { allGone } from '../support/procs.js';
import { portOf } from '../support/sse-client.js';

let app: App;
let base: string;

beforeAll(async () => {
  app = await makeApp();
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${portOf(app.app)}`;
});
afterAll(async () => {
  await app.app.close();
});

const mock = (content: string, extra: Record<string, unknown> = {}) => ({ agent: 'mock', messages: [{ role: 'user', content }], ...extra });
const sessionOf = (r: Rendered) => r.headers.get('agentwire-session-id')!;

async function endedAndReaped(r: Rendered): Promise<void> {
  const id = sessionOf(r);
  const events = await getEvents(app, id);
  expectNoUnparsed(events);
  const started = events.find((e) => e.type === 'session.started');
  const pid = (started?.data as { metadata?: { pid?: number } }).metadata?.pid;
  expect(app.sessions.read(id).status).toBe('ended');
  await allGone(pid!);
}

describe('POST /stream (mock agent, real socket)', () => {
  it('renders a turn with a tool: a running and a succeeded step, then the result; the session is ended and reaped', async () => {
    const r = await dispatch(base, mock('tool'));
    expect(r.status).toBe(200);
    expect(r.steps).toEqual([
      expect.objectContaining({ name: 'write_file', args: { path: 'notes.txt', content: 'hello\n' }, status: 'succeeded', result: expect.stringContaining('wrote 6 bytes') }),
    ]);
    expect(r.steps[0]!.id).toMatch(/^itm_/);
    expect(r.result).toBe('Done.');
    expect(r.lines.at(-1)!.type).toBe('result');
    expect(r.logs[0]!.message).toContain(`agentwire session ${sessionOf(r)} (mock, created for this dispatch)`);
    expect(r.logs.map((l) => l.message)).toContain('assistant: I will write notes.txt.');
    await endedAndReaped(r);
  });

  it('serves the same at /v1/stream; a sub-agent\'s tool calls are steps too', async () => {
    const r = await dispatch(base, mock('subagent'), { path: '/v1/stream' });
    expect(r.steps.map((s) => [s.name, s.status])).toEqual([
      ['delegate', 'succeeded'],
      ['list_files', 'succeeded'],
    ]);
    expect(r.steps[1]!.result).toBe('notes.txt');
    expect(r.result).toBe('The sub-agent found notes.txt.');
    expect(r.logs.some((l) => /sub-agent sub_\w+ started/.test(l.message))).toBe(true);
  });

  it('answers permissions and questions by the dispatch\'s policy, each decision a log line', async () => {
    const allow = await dispatch(base, mock('permission', { permissions: 'allow' }));
    expect(allow.result).toBe('Permission granted; wrote notes.txt.');
    expect(allow.logs.map((l) => l.message)).toContain('permission write_file approved (by policy)');
    expect(allow.steps.map((s) => s.status)).toEqual(['succeeded']);
    const deny = await dispatch(base, mock('permission', { permissions: 'deny' }));
    expect(deny.result).toBe('Permission denied; did not write notes.txt.');
    expect(deny.logs.find((l) => l.message === 'permission write_file denied (by policy)')?.level).toBe('warn');
    // The test daemon's --permission-policy is `ask`: nobody on a stream can answer, so it denies.
    const daemon = await dispatch(base, mock('permission', { permissions: 'daemon' }));
    expect(daemon.result).toBe('Permission denied; did not write notes.txt.');
    const answered = await dispatch(base, mock('question', { permissions: 'allow' }));
    expect(answered.result).toBe('You answered: red');
    expect(answered.logs.map((l) => l.message)).toContain('question answered: red');
    const rejected = await dispatch(base, mock('question'));
    expect(rejected.result).toBe('Question rejected.');
  });

  it('a crash is one error line, agent_crashed, after the agent\'s stderr as log lines', async () => {
    const r = await dispatch(base, mock('crash'));
    expect(r.result).toBeUndefined();
    expect(r.error).toMatchObject({ code: 'agent_crashed', message: expect.stringContaining('code 3') });
    expect(r.logs.filter((l) => l.level === 'error').map((l) => l.message).join('\n')).toContain('mock: fatal line 5');
    expect(r.lines.at(-1)!.type).toBe('error');
  });

  it('an agent error that does not end the turn is a log line; the turn still has its result', async () => {
    const r = await dispatch(base, mock('error'));
    expect(r.logs.find((l) => l.message === 'mock_error: mock error requested')?.level).toBe('error');
    expect(r.result).toBeDefined();
  });

  it('an abort mid-step stops the turn and reaps the agent within a second; the next dispatch works', async () => {
    const r = await dispatch(base, mock('shell sleep 1000'), { abortWhen: (l) => l.type === 'step' && l.status === 'running' });
    expect(r.aborted).toBe(true);
    expect(r.steps).toEqual([expect.objectContaining({ name: 'shell', status: 'running', args: { command: 'sleep 1000' } })]);
    const abortedAt = Date.now();
    const session = app.sessions.read(sessionOf(r));
    await waitFor(() => session.status === 'ended', 1000, 'the aborted session to end');
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    await endedAndReaped(r);
    const next = await dispatch(base, mock('Reply with exactly the single word pong.'));
    expect(next.result).toBe('pong');
  });

  it('a session deleted under the stream ends it with one error line, terminated', async () => {
    const r = await dispatch(base, mock('slow 100'), {
      abortWhen: (l) => {
        if (l.type === 'log' && l.message.startsWith('agentwire session')) void app.app.inject({ method: 'DELETE', url: `/v1/sessions/${/session (\S+)/.exec(l.message)![1]}` });
        return false;
      },
    });
    expect(r.error).toMatchObject({ code: 'terminated' });
    expect(r.lines.at(-1)!.type).toBe('error');
  });

  it('a failure inside the daemon while mapping still ends the stream with one error line, and the session with it', async () => {
    const map = SandboxLines.prototype.map;
    const spy = vi.spyOn(SandboxLines.prototype, 'map').mockImplementation(function (this: SandboxLines, event) {
      if (event.type === 'item.completed' && event.data.item.kind === 'tool_call') throw new Error('injected');
      return map.call(this, event);
    });
    try {
      const r = await dispatch(base, mock('tool'));
      expect(r.error).toEqual({ code: 'internal_error', message: 'the daemon failed while streaming this turn' });
      await endedAndReaped(r);
    } finally {
      spy.mockRestore();
    }
  });

  it('a flood of deltas is still only the four line types, and one result', async () => {
    const r = await dispatch(base, mock('flood 20000'));
    expect(r.result).toHaveLength(20_000);
    expect(new Set(r.lines.map((l) => l.type))).toEqual(new Set(['log', 'result']));
  });

  it('seeds a fresh session with the earlier turns as a marked preamble', async () => {
    const r = await dispatch(base, {
      agent: 'mock',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'My name is Ada.' },
        { role: 'assistant', content: 'Hello Ada.' },
        { role: 'user', content: 'What is my name?' },
      ],
    });
    // The mock echoes what it was sent: the preamble, then the new message.
    expect(r.result).toBe(
      '[agentwire: the conversation so far, oldest first. It is context: do not answer it; answer the new message after it.]\n' +
        '<system>\nBe brief.\n</system>\n<user>\nMy name is Ada.\n</user>\n<assistant>\nHello Ada.\n</assistant>\n' +
        '[agentwire: end of the conversation so far. The new message follows.]\n\nWhat is my name?',
    );
  });

  it('keepSession keeps the session; a dispatch naming it continues natively without replaying', async () => {
    const first = await dispatch(base, mock('Reply with exactly the single word one.', { keepSession: true }));
    const id = sessionOf(first);
    expect(app.sessions.get(id).status).toBe('idle');
    const history = [
      { role: 'user', content: 'Reply with exactly the single word one.' },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: 'history' },
    ];
    const second = await dispatch(base, { sessionId: id, messages: history });
    expect(sessionOf(second)).toBe(id);
    expect(second.logs[0]!.message).toContain('continued');
    expect(second.result).toBe('Earlier prompts in this session (1):\n1. "Reply with exactly the single word one."');
    expect(app.sessions.get(id).status).toBe('idle'); // not the dispatch's to end
    await app.app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` });
  });

  it('a continued session: a dispatch while its turn runs is refused and leaves that turn alone; an abort interrupts its own turn and keeps the session', async () => {
    const first = await dispatch(base, mock('Reply with exactly the single word one.', { keepSession: true }));
    const id = sessionOf(first);
    const session = app.sessions.get(id);
    const running = dispatch(base, { sessionId: id, messages: [{ role: 'user', content: 'slow 20' }] });
    await waitFor(() => session.status === 'running', 2000, 'the continued turn to run');
    const refused = await dispatch(base, { sessionId: id, messages: [{ role: 'user', content: 'hi' }] });
    expect([refused.status, refused.error?.code]).toEqual([409, 'turn_in_progress']);
    const done = await running;
    expect(done.result).toBe(Array.from({ length: 20 }, (_, i) => `tick ${i + 1}\n`).join(''));

    const aborted = await dispatch(base, { sessionId: id, messages: [{ role: 'user', content: 'slow 100' }] }, { abortWhen: (l) => l.type === 'log' });
    expect(aborted.aborted).toBe(true);
    await waitFor(() => session.status === 'idle', 1000, 'the continued turn to be interrupted');
    const ends = (await getEvents(app, id)).filter((e) => e.type === 'turn.ended');
    expect(ends.at(-1)).toMatchObject({ data: { metadata: { reason: 'interrupted' } } });
    expect(session.status).toBe('idle');
    await app.app.inject({ method: 'DELETE', url: `/v1/sessions/${id}` });
  });

  it('refuses a bad dispatch with problem+json before streaming', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ agent: 'mock', messages: [{ role: 'assistant', content: 'hi' }] }, 400, 'invalid_request'],
      [{ messages: [{ role: 'user', content: 'hi' }] }, 400, 'invalid_request'],
      [{ agent: 'mock', messages: [{ role: 'user', content: 'hi' }], unknown: 1 }, 400, 'invalid_request'],
      [{ agent: 'mock', messages: [{ role: 'tool', content: 'hi' }] }, 400, 'invalid_request'],
      [{ sessionId: 'nope', messages: [{ role: 'user', content: 'hi' }] }, 404, 'session_not_found'],
    ];
    for (const [body, status, code] of cases) {
      const r = await dispatch(base, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.error?.code).toBe(code);
    }
  });
});
