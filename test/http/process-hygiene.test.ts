// The Owned processes rule, end to end: whichever way a session ends, its agent's whole process group goes
// and is reaped, the agent's own children included (here a `sleep` the mock's shell tool started,
// which sits in the mock's process group as a real agent's tool would).
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';
import { alive, allGone, groupTree, killGroups, leftovers, processes } from '../support/procs.js';

/** Live node processes this test worker started: mock agents (the tests here start nothing else). */
function mockProcesses() {
  return processes().filter((p) => p.state !== 'Z' && p.comm === 'node' && p.ppid === process.pid);
}

let app: App | undefined;
const groups = new Set<number>();

afterEach(async () => {
  await app?.app.close();
  app = undefined;
  killGroups(groups);
  groups.clear();
});

function completed(events: UniversalEvent[], kind: string) {
  return events.flatMap((e) => (e.type === 'item.completed' && e.data.item.kind === kind ? [e.data.item] : []));
}

/** A mock session whose shell tool is busy in `sleep 1000`; resolves with both pids. */
async function sleepingSession(id: string, command = 'sleep 1000') {
  app ??= await makeApp();
  await createMock(app, id);
  const started = (await getEvents(app, id)).find((e) => e.type === 'session.started');
  const mockPid = Number(started?.data.metadata?.pid);
  expect(mockPid).toBeGreaterThan(0);
  groups.add(mockPid);
  const res = await post(app, `/v1/sessions/${id}/messages`, { message: `shell ${command}` });
  expect(res.statusCode, res.body).toBe(204);
  await waitFor(async () => completed(await getEvents(app!, id), 'tool_call').length > 0, 5000, 'the tool_call');
  const sleep = await waitFor(() => groupTree(mockPid).find((p) => p.comm === 'sleep'), 5000, 'the sleep process');
  // The agent runs detached (its own group); the tool stays in it.
  expect(sleep.pgid).toBe(mockPid);
  return { mockPid, sleepPid: sleep.pid };
}

async function ended(id: string): Promise<Extract<UniversalEvent, { type: 'session.ended' }>> {
  const events = await waitFor(async () => {
    const all = await getEvents(app!, id);
    return all.some((e) => e.type === 'session.ended') ? all : undefined;
  }, 5000, 'session.ended');
  expectNoUnparsed(events);
  return events.find((e): e is Extract<UniversalEvent, { type: 'session.ended' }> => e.type === 'session.ended')!;
}

describe('process hygiene: nothing outlives a session', () => {
  it('POST /terminate ends the agent and its tool', async () => {
    const { mockPid, sleepPid } = await sleepingSession('term');
    const res = await post(app!, '/v1/sessions/term/terminate');
    expect(res.statusCode, res.body).toBe(204);
    // terminate resolves once the agent is reaped; its tool goes with the group.
    expect(alive(mockPid)).toBe(false);
    await allGone(mockPid, 2000);
    expect(alive(sleepPid)).toBe(false);
    expect((await ended('term')).data).toMatchObject({ reason: 'terminated', terminated_by: 'daemon' });
  });

  it('DELETE ends the agent and its tool', async () => {
    const { mockPid } = await sleepingSession('del');
    const res = await app!.app.inject({ method: 'DELETE', url: '/v1/sessions/del' });
    expect(res.statusCode, res.body).toBe(204);
    await allGone(mockPid, 2000);
  });

  it('an agent that dies (SIGKILL) takes its tool along, and the session ends with an error', async () => {
    const { mockPid, sleepPid } = await sleepingSession('crash');
    // `crash` cannot run while the shell is busy (one turn at a time); kill the agent from outside.
    process.kill(mockPid, 'SIGKILL');
    await allGone(mockPid, 2000);
    expect(alive(sleepPid)).toBe(false);
    const end = await ended('crash');
    expect(end.data).toMatchObject({ reason: 'error', terminated_by: 'agent' });
    const events = await getEvents(app!, 'crash');
    expect(events.find((e) => e.type === 'error')?.data).toMatchObject({ code: 'agent_exited', details: { signal: 'SIGKILL' } });
    expect(events.filter((e) => e.type === 'turn.ended').at(-1)?.data.metadata).toMatchObject({ reason: 'error' });
  });

  it('daemon shutdown (app.close) ends every agent and tool', async () => {
    const one = await sleepingSession('close-1');
    const two = await sleepingSession('close-2');
    const closing = app!;
    app = undefined;
    await closing.app.close();
    await allGone(one.mockPid, 2000);
    await allGone(two.mockPid, 2000);
    for (const id of ['close-1', 'close-2']) {
      const events = closing.sessions.get(id).log.read(0);
      expect(events.find((e) => e.type === 'session.ended')?.data).toMatchObject({ reason: 'terminated' });
    }
  });

  it('a session still starting when shutdown begins is ended too, and its create is refused', async () => {
    const a = await makeApp();
    const creating = post(a, '/v1/sessions/late', { agent: 'mock' });
    // Let the spawn begin, then close while the mock is still coming up.
    await new Promise((r) => setTimeout(r, 5));
    await a.app.close();
    const res = await creating;
    expect([503, 200]).toContain(res.statusCode);
    if (res.statusCode === 503) expect(res.json()).toMatchObject({ code: 'shutting_down' });
    // Whatever the race, no mock process may remain.
    await waitFor(() => mockProcesses().length === 0, 3000, 'no mock process left');
  });

  it('a process the tool left behind (reparented away from the agent) still goes with the group', async () => {
    app = await makeApp();
    await createMock(app, 'bg');
    const mockPid = Number((await getEvents(app, 'bg')).find((e) => e.type === 'session.started')?.data.metadata?.pid);
    groups.add(mockPid);
    // The shell exits at once; its background sleep is no longer the mock's descendant.
    const turn = await runTurn(app, 'bg', 'shell sleep 1000 >/dev/null 2>&1 & echo started');
    expect(completed(turn, 'tool_result')[0]?.status).toBe('completed');
    const orphan = await waitFor(() => groupTree(mockPid).find((p) => p.comm === 'sleep'), 2000, 'the orphaned sleep');
    expect(orphan.ppid).not.toBe(mockPid);
    expect(alive(orphan.pid)).toBe(true);
    await post(app, '/v1/sessions/bg/terminate');
    await allGone(mockPid, 2000);
  });

  it('interrupt ends the tool but not the agent, and the session goes on', async () => {
    const { mockPid, sleepPid } = await sleepingSession('intr');
    const res = await post(app!, '/v1/sessions/intr/interrupt');
    expect(res.statusCode, res.body).toBe(202);
    await waitFor(() => !alive(sleepPid), 2000, 'the sleep to die');
    // Only the agent is left in its group, and it reaped its shell (no zombie children).
    await waitFor(() => leftovers(mockPid).every((p) => p.pid === mockPid), 2000, 'the shell to be reaped');
    expect(alive(mockPid)).toBe(true);
    const events = await waitFor(async () => {
      const all = await getEvents(app!, 'intr');
      return all.some((e) => e.type === 'turn.ended') ? all : undefined;
    }, 2000, 'turn.ended');
    expect(events.filter((e) => e.type === 'turn.ended').at(-1)?.data.metadata).toMatchObject({ reason: 'interrupted' });
    expect(completed(events, 'tool_result')).toMatchObject([{ status: 'failed' }]);
    const next = await runTurn(app!, 'intr', 'shell echo again');
    expect(completed(next, 'tool_result')[0]?.content).toMatchObject([{ type: 'tool_result', output: 'again\n' }]);
    expectNoUnparsed(await getEvents(app!, 'intr'));
  });
});
