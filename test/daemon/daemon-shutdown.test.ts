// The real daemon as a process (bin/agentwire.js over a fresh build), stopped the ways an operator
// or a supervisor stops it: SIGTERM and SIGINT must end every stream with a reason, end every agent
// process group and exit 0; SIGKILL cannot clean up, so the agents must notice on their own.
// These run with --persist off: what a durable daemon does instead is in daemon-restart.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { authHeaders, call, events, killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';
import { allGone, groupTree, killGroups } from '../support/procs.js';
import { abortAllStreams, openSse, type SseClient } from '../support/sse-client.js';

const groups = new Set<number>();

beforeAll(setUpInstall, 120_000);

afterEach(() => {
  abortAllStreams();
  killDaemons();
  killGroups(groups);
  groups.clear();
});

afterAll(removeInstall);

/** A mock session busy in `shell sleep 1000`; resolves with the mock's pid (= its process group). */
async function sleepingSession(port: number, id: string): Promise<number> {
  await call(port, 'POST', `/v1/sessions/${id}`, { agent: 'mock' });
  const started = (await events(port, id)).find((e) => e.type === 'session.started');
  const pgid = Number(started?.data.metadata?.pid);
  expect(pgid).toBeGreaterThan(0);
  groups.add(pgid);
  await call(port, 'POST', `/v1/sessions/${id}/messages`, { message: 'shell sleep 1000' });
  await waitFor(async () => (await events(port, id)).some((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_call'), 5000, 'the tool_call');
  await waitFor(() => groupTree(pgid).some((p) => p.comm === 'sleep'), 5000, 'the sleep process');
  return pgid;
}

/** Two sleeping sessions and an SSE stream on the first. */
async function busyDaemon() {
  // In memory: with a store, a graceful stop suspends sessions instead (daemon-restart.test.ts).
  const { daemon, port } = await startDaemon(['--persist', 'off']);
  const pgids = [await sleepingSession(port, 'one'), await sleepingSession(port, 'two')];
  const sse = await openSse({ port, path: '/v1/sessions/one/events/sse', headers: authHeaders(port) });
  await sse.until(() => sse.events().some((e) => e.type === 'item.completed' && e.data.item.kind === 'tool_call'), 5000, 'the tool_call frame');
  return { daemon, pgids, sse };
}

function expectEndedStream(sse: SseClient) {
  const last = sse.events().at(-1);
  expect(last).toMatchObject({ type: 'session.ended', data: { reason: 'terminated', terminated_by: 'daemon' } });
  expect(sse.entries.at(-1)).toEqual({ kind: 'comment', text: expect.stringMatching(/^closed: /) });
  expect(sse.completed).toBe(true);
}

describe('daemon shutdown (real process)', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal}: streams end with session.ended, every agent group is gone, exit 0`, async () => {
      const { daemon, pgids, sse } = await busyDaemon();
      const sent = Date.now();
      daemon.child.kill(signal);
      const exit = await Promise.race([daemon.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5000))]);
      expect(exit, daemon.stderr).toEqual({ code: 0, signal: null });
      expect(Date.now() - sent).toBeLessThan(5000);
      await sse.ended(2000);
      expectEndedStream(sse);
      // The daemon reaped its agents before it exited; anything left would be a live orphan.
      for (const pgid of pgids) await allGone(pgid, 2000, [process.pid, daemon.child.pid!]);
      expect(daemon.logs.some((l) => l.msg?.startsWith('shutting down'))).toBe(true);
    });
  }

  it('SIGKILL: no cleanup runs, but each agent sees stdin close, stops its tool and exits', async () => {
    const { daemon, pgids, sse } = await busyDaemon();
    daemon.child.kill('SIGKILL');
    expect(await daemon.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The connection just drops: no session.ended, no closing comment.
    await sse.ended(2000);
    expect(sse.events().some((e) => e.type === 'session.ended')).toBe(false);
    expect(sse.comments.some((c) => c.startsWith('closed:'))).toBe(false);
    // The agents are now init's children; only their own reaction to EOF on stdin ends them.
    for (const pgid of pgids) await allGone(pgid, 3000);
  });
});
