// The durable daemon as a real process on a real data dir, killed the hard way and started again:
// every event any reader saw is stored with identical bytes, readers resume with Last-Event-ID
// across the restart with no gap and no duplicate, what was open when the daemon died is closed
// (error daemon_restarted, turn ended, HITL cancelled), sequences continue, and the next message
// resumes the agent's own session. Also: a graceful stop suspends instead of ending, and a data dir
// with 1,000 stored sessions comes back listed; a queue and a fork survive SIGKILL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessionInfo } from '../../src/schema/api.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { authHeaders, call, events, killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { expectNoUnparsed, waitFor } from '../support/helpers.js';
import { allGone } from '../support/procs.js';
import { abortAllStreams, openSse, type SseClient } from '../support/sse-client.js';

let dataDir: string;
let mockHome: string;

beforeAll(setUpInstall, 120_000);
afterAll(removeInstall);

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'aw-restart-'));
  mockHome = mkdtempSync(join(tmpdir(), 'aw-restart-mock-'));
});

afterEach(() => {
  abortAllStreams();
  killDaemons();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(mockHome, { recursive: true, force: true });
});

/** The daemon on this test's data dir; the mock keeps its own sessions in `mockHome`. */
const start = () => startDaemon(['--data-dir', dataDir], { MOCK_AGENT_HOME: mockHome });

async function sessionInfo(port: number, id: string): Promise<SessionInfo> {
  return (await call(port, 'GET', `/v1/sessions/${id}`)) as SessionInfo;
}

function expectContiguous(sequences: number[], from = 1): void {
  expect(sequences).toEqual(sequences.map((_, i) => from + i));
}

describe('durable daemon (real process, SIGKILL and restart)', () => {
  it('SIGKILL during a flood: what readers saw is stored byte for byte; they resume across the restart with no gap and no duplicate', async () => {
    const first = await start();
    await call(first.port, 'POST', '/v1/sessions/flood', { agent: 'mock' });
    const readers = [
      await openSse({ port: first.port, path: '/v1/sessions/flood/events/sse', headers: authHeaders(first.port) }),
      await openSse({ port: first.port, path: '/v1/sessions/flood/events/sse', headers: authHeaders(first.port) }),
    ];
    await call(first.port, 'POST', '/v1/sessions/flood/messages', { message: 'flood 300000' });
    await readers[0]!.until(() => readers[0]!.frames.length > 3000, 10_000, '3000 frames');
    first.daemon.child.kill('SIGKILL');
    await first.daemon.exited;
    await Promise.all(readers.map((r) => r.closed));
    const seen = readers.map((r) => r.frames.map((f) => ({ id: Number(f.id), data: f.data })));
    const maxSeen = Math.max(...seen.map((s) => s.at(-1)!.id));
    for (const s of seen) expectContiguous(s.map((f) => f.id));

    const second = await start();
    // Replayed from the store: the same bytes each reader received (event ids, times and all).
    const replay = await openSse({ port: second.port, path: '/v1/sessions/flood/events/sse', headers: authHeaders(second.port) });
    await replay.until(() => replay.lastId >= maxSeen, 20_000, 'the replay to reach what readers saw');
    const stored = new Map(replay.frames.map((f) => [Number(f.id), f.data]));
    for (const s of seen) for (const f of s) expect(stored.get(f.id)).toBe(f.data);

    // Each reader resumes where it was cut off.
    const resumed = await Promise.all(
      seen.map((s) => openSse({ port: second.port, path: '/v1/sessions/flood/events/sse', headers: { ...authHeaders(second.port), 'last-event-id': String(s.at(-1)!.id) } })),
    );
    const info = await sessionInfo(second.port, 'flood');
    expect(info).toMatchObject({ restored: true, status: 'idle', ended: false });
    for (const [i, r] of resumed.entries()) {
      await r.until(() => r.lastId >= info.eventCount, 20_000, 'the resumed stream to catch up');
      const all = [...seen[i]!.map((f) => f.id), ...r.frames.map((f) => Number(f.id))];
      expectContiguous(all);
    }
    // What the dead daemon left open is closed by the new one, right after the last stored event.
    const tail = await events(second.port, 'flood', info.eventCount - 4);
    expect(tail.map((e) => e.type)).toEqual(['item.delta', 'item.completed', 'error', 'turn.ended']);
    expect(tail[1]!.data).toMatchObject({ item: { kind: 'message', status: 'failed' } });
    expect(tail[2]!.data).toMatchObject({ code: 'daemon_restarted' });
    expect(tail[3]!.data).toMatchObject({ metadata: { reason: 'error' } });

    // New events continue the sequence, and the mock resumes its own session.
    await call(second.port, 'POST', '/v1/sessions/flood/messages', { message: 'history' });
    const after = await waitFor(async () => {
      const evs = await events(second.port, 'flood', info.eventCount);
      return evs.some((e) => e.type === 'turn.ended') ? evs : undefined;
    }, 10_000, 'the next turn');
    expectContiguous(after.map((e) => e.sequence), info.eventCount + 1);
    const text = after.filter((e) => e.type === 'item.delta' && e.source === 'agent').map((e) => (e.data as { delta: string }).delta).join('');
    expect(text).toContain('"flood 300000"');
    expectNoUnparsed(after);
  });

  it('SIGKILL while a permission waits: the restart cancels it, ends the turn with daemon_restarted, and the session goes on', async () => {
    const first = await start();
    await call(first.port, 'POST', '/v1/sessions/ask', { agent: 'mock' });
    await call(first.port, 'POST', '/v1/sessions/ask/messages', { message: 'permission' });
    const requested = await waitFor(async () => (await events(first.port, 'ask')).find((e) => e.type === 'permission.requested'), 5000, 'the permission');
    const pid = Number((await events(first.port, 'ask')).find((e) => e.type === 'session.started')?.data.metadata?.pid);
    first.daemon.child.kill('SIGKILL');
    await first.daemon.exited;
    await allGone(pid, 3000); // the agent saw its stdin close and left

    const second = await start();
    expect(await sessionInfo(second.port, 'ask')).toMatchObject({ restored: true, status: 'idle', ended: false });
    const after = await events(second.port, 'ask', requested.sequence);
    expect(after.map((e) => e.type).filter((t) => t !== 'item.completed')).toEqual(['error', 'permission.resolved', 'turn.ended']);
    expect(after.find((e) => e.type === 'permission.resolved')?.data).toMatchObject({ status: 'denied', metadata: { reason: 'daemon_restarted' } });
    expect(after.find((e) => e.type === 'error')?.data).toMatchObject({ code: 'daemon_restarted' });
    expect(after.find((e) => e.type === 'turn.ended')?.data).toMatchObject({ metadata: { reason: 'error' } });
    const permissionId = (requested.data as { permission_id: string }).permission_id;
    const reply = await fetch(`http://127.0.0.1:${second.port}/v1/sessions/ask/permissions/${permissionId}/reply`, {
      method: 'POST',
      headers: { ...authHeaders(second.port), 'content-type': 'application/json' },
      body: JSON.stringify({ reply: 'once' }),
    });
    expect(reply.status).toBe(409);
    await call(second.port, 'POST', '/v1/sessions/ask/messages', { message: 'echo again' });
    await waitFor(async () => (await events(second.port, 'ask')).filter((e) => e.type === 'turn.ended').length === 2, 10_000, 'the next turn');
    expectNoUnparsed(await events(second.port, 'ask'));
  });

  it('SIGKILL with messages queued and a fork: the queue comes back and runs in order; the fork resumes with its own history', async () => {
    const first = await start();
    const textOf = (list: UniversalEvent[]) =>
      list.flatMap((e) => (e.type === 'item.completed' && e.data.item.role === 'assistant' ? [e.data.item.content.map((p) => (p.type === 'text' ? p.text : '')).join('')] : []));
    await call(first.port, 'POST', '/v1/sessions/q', { agent: 'mock' });
    await call(first.port, 'POST', '/v1/sessions/q/messages', { message: 'echo one' });
    await waitFor(async () => (await events(first.port, 'q')).some((e) => e.type === 'turn.ended'), 5000, 'the first turn');
    const fork = (await call(first.port, 'POST', '/v1/sessions/q/fork', { id: 'qf' })) as SessionInfo;
    await call(first.port, 'POST', '/v1/sessions/q/messages', { message: 'slow 100' });
    const a = (await call(first.port, 'POST', '/v1/sessions/q/messages', { message: 'echo queued-1', delivery: 'queue' })) as { messageId: string };
    const b = (await call(first.port, 'POST', '/v1/sessions/q/messages', { message: 'echo queued-2', delivery: 'queue' })) as { messageId: string };
    expect((await sessionInfo(first.port, 'q')).queued).toBe(2);
    first.daemon.child.kill('SIGKILL');
    await first.daemon.exited;

    const second = await start();
    // The running turn ends with the restart; the queue then starts, on the agent resumed natively.
    const after = await waitFor(async () => {
      const list = await events(second.port, 'q');
      return list.filter((e) => e.type === 'turn.ended').length === 4 ? list : undefined;
    }, 15_000, 'both queued messages to run');
    expect(after.filter((e) => e.type === 'turn.started').map((e) => (e.data as { message_id?: string }).message_id)).toEqual([undefined, undefined, a.messageId, b.messageId]);
    expect(after.filter((e) => e.type === 'turn.ended').map((e) => (e.data as { metadata: { reason: string } }).metadata.reason)).toEqual(['completed', 'error', 'completed', 'completed']);
    expect(textOf(after).slice(-2)).toEqual(['queued-1', 'queued-2']);
    expect(await sessionInfo(second.port, 'q')).toMatchObject({ restored: true, queued: 0 });

    // The fork, restarted before its agent named a session of its own, forks the parent's again.
    expect(await sessionInfo(second.port, 'qf')).toMatchObject({ restored: true, forkedFrom: fork.forkedFrom, status: 'idle' });
    await call(second.port, 'POST', '/v1/sessions/qf/messages', { message: 'history' });
    const forked = await waitFor(async () => {
      const list = await events(second.port, 'qf');
      return list.filter((e) => e.type === 'turn.ended').length === 2 ? list : undefined;
    }, 10_000, "the fork's turn");
    const history = textOf(forked).at(-1)!;
    expect(history).toContain('"echo one"');
    expect(history).not.toContain('slow');
    expectNoUnparsed([...after, ...forked]);
  });

  it('SIGTERM with a store: agents stop, the running turn ends as interrupted, the session lives on for the next daemon', async () => {
    const first = await start();
    await call(first.port, 'POST', '/v1/sessions/calm', { agent: 'mock' });
    const pid = Number((await events(first.port, 'calm')).find((e) => e.type === 'session.started')?.data.metadata?.pid);
    const sse: SseClient = await openSse({ port: first.port, path: '/v1/sessions/calm/events/sse', headers: authHeaders(first.port) });
    await call(first.port, 'POST', '/v1/sessions/calm/messages', { message: 'slow 100' });
    await sse.until(() => sse.events().some((e) => e.type === 'item.delta' && e.source === 'agent'), 5000, 'a tick');
    first.daemon.child.kill('SIGTERM');
    expect(await first.daemon.exited).toEqual({ code: 0, signal: null });
    await sse.closed;
    expect(sse.events().at(-1)).toMatchObject({ type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } });
    expect(sse.events().some((e) => e.type === 'session.ended')).toBe(false);
    await allGone(pid, 2000);

    const second = await start();
    expect(await sessionInfo(second.port, 'calm')).toMatchObject({ restored: true, status: 'idle', ended: false, eventCount: sse.lastId });
  });

  it('starts on a data dir holding 1,000 sessions and lists them all, restored, without reading their events', async () => {
    const store = new SqliteStore(join(dataDir, 'agentwire.db'));
    const snapshot = { turnId: null, turnCount: 1, permissions: [], questions: [], openItems: [] };
    for (let i = 0; i < 1000; i++) {
      const id = `s${String(i).padStart(4, '0')}`;
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString();
      store.createSession({ id, agent: 'mock', request: { agent: 'mock', cwd: dataDir, agentMode: 'default', permissionMode: 'default' }, createdAt: at, nativeSessionId: `mock-${i}`, status: 'idle', snapshot, updatedAt: at, endedAt: null, lastSequence: 10 });
      for (let n = 1; n <= 10; n++) store.appendEvent(id, { sequence: n, json: `{"sequence":${n},"session_id":"${id}","raw":null}`, raw: null });
    }
    store.close();

    const { port } = await start();
    const { sessions } = (await call(port, 'GET', '/v1/sessions')) as { sessions: SessionInfo[] };
    expect(sessions).toHaveLength(1000);
    expect(sessions[0]).toMatchObject({ sessionId: 's0999', restored: true, status: 'idle', eventCount: 10 });
    expect(sessions.every((s) => s.restored && s.status === 'idle')).toBe(true);
    expect((await events(port, 's0500')).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});
