// Every call of agentwire-client against a real daemon process running the mock agent: agents,
// sessions, messages, events, HITL replies, interrupt, terminate, delete; and how failures come
// back: problem+json fields, 401, 404, network errors, timeouts and aborts.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentwireError, createClient, type UniversalEvent } from '../../client/src/index.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

beforeAll(setUpInstall, 400_000);
afterAll(removeInstall);
afterEach(killDaemons);

async function rejection(promise: Promise<unknown>): Promise<AgentwireError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(AgentwireError.is(error), String(error)).toBe(true);
  return error as AgentwireError;
}

describe('agentwire-client calls against a real daemon', () => {
  it('health, agents.list, models and modes', async () => {
    const { client } = await startClientDaemon();
    expect((await client.health()).status).toBe('ok');
    const agents = await client.agents.list();
    expect(agents.find((a) => a.id === 'mock')?.installed).toBe(true);
    const models = await client.agents.models('mock');
    expect(models.models.length).toBeGreaterThan(0);
    const modes = await client.agents.modes('mock');
    expect(modes.modes.length).toBeGreaterThan(0);
  });

  it('agents.install of the mock is the daemon’s 400, as an AgentwireError', async () => {
    const { client } = await startClientDaemon();
    const error = await rejection(client.agents.install('mock'));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
  });

  it('sessions: create (both forms), get, list, send, events, delete', async () => {
    const { client } = await startClientDaemon();
    const generated = await client.sessions.create({ agent: 'mock' });
    expect(generated.id).toMatch(/^sess_/);
    const named = await client.sessions.create('named-1', { agent: 'mock', title: 'named' });
    expect(named.id).toBe('named-1');
    expect((await named.info()).title).toBe('named');
    expect((await client.sessions.get('named-1')).id).toBe('named-1');
    expect((await client.sessions.list()).map((s) => s.sessionId).sort()).toEqual([generated.id, 'named-1'].sort());

    await named.send('Reply with exactly the single word OK.');
    const events = await collect(named.events(), (e) => e.type === 'turn.ended');
    expectDense(events);
    expectNoUnparsed(events);
    const done = events.at(-1)!;
    expect(done.type === 'turn.ended' && done.data.metadata?.reason).toBe('completed');

    // A full MessageRequest works as well as a string; `after` skips what was already seen.
    await named.send({ message: 'echo second' });
    const second = await collect(named.events({ after: done.sequence }), (e) => e.type === 'turn.ended');
    expectDense(second, done.sequence + 1);

    await client.sessions.delete('named-1');
    const gone = await rejection(client.sessions.get('named-1'));
    expect(gone.status).toBe(404);
    expect(gone.code).toBe('session_not_found');
    expect(gone.fields.sessionId).toBe('named-1');
    await generated.delete();
    expect(await client.sessions.list()).toEqual([]);
  });

  it('replyPermission, replyQuestion, rejectQuestion through send + events', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const seen: UniversalEvent[] = [];
    let after = 0;
    const until = async (type: string) => {
      const got = await collect(session.events({ after }), (e) => e.type === type);
      after = got.at(-1)!.sequence;
      seen.push(...got);
      return got.at(-1)!;
    };

    await session.send('permission');
    const asked = await until('permission.requested');
    if (asked.type !== 'permission.requested') throw new Error('expected a permission');
    await session.replyPermission(asked.data.permission_id, 'once');
    await until('turn.ended');
    const again = await rejection(session.replyPermission(asked.data.permission_id, 'once'));
    expect(again.status).toBe(409);

    await session.send('question');
    const question = await until('question.requested');
    if (question.type !== 'question.requested') throw new Error('expected a question');
    await session.replyQuestion(question.data.question_id, [['green']]);
    await until('turn.ended');

    await session.send('question');
    const second = await until('question.requested');
    if (second.type !== 'question.requested') throw new Error('expected a question');
    await session.rejectQuestion(second.data.question_id);
    await until('turn.ended');

    const resolved = seen.filter((e) => e.type === 'permission.resolved' || e.type === 'question.resolved').map((e) => (e.data as { status: string }).status);
    expect(resolved).toEqual(['approved', 'answered', 'rejected']);
    expectDense(seen);
    expectNoUnparsed(seen);
  });

  it('session.update({budget}) and the usage totals: a budget request answered with replyPermission (docs/budgets.md)', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock', budget: { max_turns: 5 } });
    const updated = await session.update({ budget: { max_tokens: 100 } });
    expect(updated.budget).toEqual({ max_tokens: 100 });
    const bad = await rejection(session.update({ budget: { max_tokens: -1 } }));
    expect([bad.status, bad.code]).toEqual([400, 'invalid_request']);

    await session.send('spend 2');
    const events = await collect(session.events(), (e) => e.type === 'permission.requested');
    const asked = events.at(-1)!;
    if (asked.type !== 'permission.requested') throw new Error('expected a budget request');
    expect(asked.data).toMatchObject({ action: 'budget', metadata: { limit: 'max_tokens', limit_value: 100, spent: 120 } });
    await session.replyPermission(asked.data.permission_id, 'reject');
    const rest = await collect(session.events({ after: asked.sequence }), (e) => e.type === 'turn.ended');
    const ended = rest.at(-1)!;
    expect(ended.type === 'turn.ended' && ended.data.metadata.reason).toBe('budget_exceeded');
    const info = await session.info();
    expect(info.usage).toMatchObject({ input_tokens: 100, output_tokens: 20, cost_source: 'price_table' });
    expect((await session.update({ budget: null })).budget).toEqual({});
    expectNoUnparsed([...events, ...rest]);
  });
});

/** A local server that accepts connections and never answers, or answers what `reply` writes. */
async function rawServer(reply?: (socket: Socket) => void): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', () => reply?.(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('agentwire-client failures', () => {
  it('401 without a token or with a wrong one; the right token works for calls and streams', async () => {
    const { baseUrl, client: anonymous } = await startClientDaemon(['--token', 'sekrit-token-0123456789']);
    const missing = await rejection(anonymous.sessions.list());
    expect([missing.status, missing.code]).toEqual([401, 'unauthorized']);
    expect(missing.detail).toMatch(/Bearer/);
    const wrong = await rejection(createClient({ baseUrl, token: 'nope' }).sessions.list());
    expect([wrong.status, wrong.code]).toEqual([401, 'unauthorized']);

    const client = createClient({ baseUrl, token: 'sekrit-token-0123456789' });
    const session = await client.sessions.create({ agent: 'mock' });
    const result = await session.turn('echo with a token');
    expect(result.text).toBe('with a token');
    const events = await collect(session.events(), (e) => e.sequence === result.events.at(-1)!.sequence);
    expectDense(events);
    expectNoUnparsed(events);
    const stream = await rejection(collect(anonymous.sessions.handle(session.id).events()));
    expect(stream.code).toBe('unauthorized');
  });

  it('a problem keeps its status, code, detail and context fields', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create('busy', { agent: 'mock' });
    await session.send('slow 50');
    const busy = await rejection(session.send('echo no'));
    expect(busy.status).toBe(409);
    expect(busy.code).toBe('turn_in_progress');
    expect(busy.title).toBe('A turn is already running');
    expect(busy.detail).toContain("'busy'");
    expect(busy.fields).toMatchObject({ sessionId: 'busy', sessionStatus: 'running' });
    expect(busy.problem?.code).toBe('turn_in_progress');
    expect(busy.requestId).toBeTruthy();
    await session.interrupt();
    const idle = await collect(session.events(), (e) => e.type === 'turn.ended');
    expectNoUnparsed(idle);
    const nothing = await rejection(session.interrupt());
    expect(nothing.code).toBe('no_turn_running');
    const exists = await rejection(client.sessions.create('busy', { agent: 'mock' }));
    expect([exists.status, exists.code]).toEqual([409, 'session_exists']);
    const invalid = await rejection(client.sessions.create({ agent: 'mock', permissionMode: 'nonsense' as never }));
    expect(invalid.code).toBe('invalid_request');
    expect(Array.isArray(invalid.fields.errors)).toBe(true);
  });

  it('network errors, timeouts, aborts and non-problem answers are typed', async () => {
    const hanging = await rawServer();
    const html = await rawServer((socket) => socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 11\r\nconnection: close\r\n\r\n<h1>bad</h1'));
    try {
      const refused = createClient({ baseUrl: 'http://127.0.0.1:1' });
      const network = await rejection(refused.sessions.list());
      expect([network.code, network.status]).toEqual(['network_error', undefined]);

      const slow = createClient({ baseUrl: hanging.url, timeoutMs: 300 });
      const timeout = await rejection(slow.sessions.list());
      expect([timeout.code, timeout.status]).toEqual(['timeout', undefined]);
      const perCall = await rejection(createClient({ baseUrl: hanging.url }).sessions.list({ timeoutMs: 300 }));
      expect(perCall.code).toBe('timeout');

      const controller = new AbortController();
      const pending = rejection(createClient({ baseUrl: hanging.url }).agents.list({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 100);
      expect((await pending).code).toBe('aborted');
      const already = await rejection(createClient({ baseUrl: hanging.url }).agents.list({ signal: AbortSignal.abort() }));
      expect(already.code).toBe('aborted');

      const proxyPage = await rejection(createClient({ baseUrl: html.url }).sessions.list());
      expect([proxyPage.code, proxyPage.status]).toEqual(['invalid_response', 502]);
    } finally {
      hanging.close();
      html.close();
    }
  });

  it('events(): a stream that never connects gives up after maxAttempts with stream_failed; an abort ends it cleanly', async () => {
    const refused = createClient({ baseUrl: 'http://127.0.0.1:1' }).sessions.handle('x');
    const attempts: number[] = [];
    const failed = await rejection(collect(refused.events({ reconnect: { maxAttempts: 3, initialDelayMs: 10 }, onReconnect: (r) => attempts.push(r.attempt) })));
    expect(failed.code).toBe('stream_failed');
    expect((failed.cause as AgentwireError).code).toBe('network_error');
    expect(attempts).toEqual([1, 2, 3]);

    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    const controller = new AbortController();
    const events = await collect(session.events({ signal: controller.signal }), (e) => {
      if (e.type === 'session.started') controller.abort();
      return false;
    });
    expect(events.map((e) => e.type)).toEqual(['session.started']);
    expectNoUnparsed(events);
  });

  it('events(): ends after session.ended (untilEnded), at once when the cursor is past it, and stays open when asked', async () => {
    const { client } = await startClientDaemon();
    const session = await client.sessions.create({ agent: 'mock' });
    await session.turn('echo hi');
    await session.terminate();
    const all = await collect(session.events({ includeRaw: true }));
    expectDense(all);
    expectNoUnparsed(all);
    expect(all.at(-1)!.type).toBe('session.ended');
    expect(all.some((e) => e.raw !== null)).toBe(true);
    expect(await collect(session.events({ after: all.at(-1)!.sequence }))).toEqual([]);

    const controller = new AbortController();
    const open = collect(session.events({ untilEnded: false, signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 500));
    controller.abort();
    expect((await open).length).toBe(all.length);
  });

  it('events(): a deleted session ends the stream with session_not_found, an evicted cursor with events_evicted', async () => {
    const { client } = await startClientDaemon(['--max-events-per-session', '20']);
    const session = await client.sessions.create({ agent: 'mock' });
    // Delete ends a live session first: untilEnded would stop cleanly at its session.ended.
    const following = rejection(collect(session.events({ untilEnded: false })));
    expectNoUnparsed((await session.turn('echo one')).events);
    await session.delete();
    const deleted = await following;
    expect([deleted.status, deleted.code]).toEqual([404, 'session_not_found']);

    const small = await client.sessions.create({ agent: 'mock' });
    expectNoUnparsed((await small.turn('slow 30')).events);
    const evicted = await rejection(collect(small.events({ after: 1 })));
    expect([evicted.status, evicted.code]).toEqual([410, 'events_evicted']);
    expect(evicted.fields.oldestAvailable).toBeGreaterThan(2);
    const held = await collect(small.events({ after: Number(evicted.fields.oldestAvailable) - 1 }), (e) => e.type === 'turn.ended');
    expectDense(held, Number(evicted.fields.oldestAvailable));
    expectNoUnparsed(held);
  });
});
