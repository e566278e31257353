// A custom ACP agent given on the real daemon's command line (--acp-agent): listed, runs a turn,
// and, after the daemon is killed and started again on the same data dir, resumes its own session
// through session/load on the next message (the agent's replay is not repeated in the stream).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_AGENTS } from '../../../src/schema/agents.js';
import type { AgentInfo } from '../../../src/schema/api.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { call, events, killDaemons, removeInstall, setUpInstall, startDaemon } from '../../support/daemon-process.js';
import { waitFor } from '../../support/helpers.js';

const AGENT = new URL('../../support/acp-test-agent.mjs', import.meta.url).pathname;
let dataDir: string;
let store: string;

// Building the install (tsc + bundle) is slow on a busy machine.
beforeAll(setUpInstall, 300_000);
afterAll(removeInstall);
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'aw-acp-daemon-'));
  store = mkdtempSync(join(tmpdir(), 'aw-acp-store-'));
});
afterEach(() => {
  killDaemons();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(store, { recursive: true, force: true });
});

const start = () => startDaemon(['--data-dir', dataDir, '--acp-agent', `tester='${process.execPath}' '${AGENT}'`], { ACP_TEST_STORE: store });

async function turn(port: number, id: string, message: string): Promise<UniversalEvent[]> {
  const from = (await events(port, id)).length;
  await call(port, 'POST', `/v1/sessions/${id}/messages`, { message });
  return waitFor(async () => {
    const all = (await events(port, id)).slice(from);
    return all.some((e) => e.type === 'turn.ended' || e.type === 'session.ended') ? all : undefined;
  }, 15_000, `turn '${message}'`);
}
const said = (events: UniversalEvent[]) =>
  events.flatMap((e) => (e.type === 'item.completed' && e.data.item.role === 'assistant' ? e.data.item.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : []));

describe('--acp-agent on the real daemon', () => {
  it('lists the agent, runs turns, and resumes its session with session/load after a restart', async () => {
    const first = await start();
    const list = (await call(first.port, 'GET', '/v1/agents')) as { agents: AgentInfo[] };
    // The built-in agents first, then the configured one.
    expect(list.agents.map((a) => a.id)).toEqual([...BUILTIN_AGENTS, 'tester']);
    expect(list.agents.at(-1)).toMatchObject({ installed: true, adapterAvailable: true, source: 'flag' });

    await call(first.port, 'POST', '/v1/sessions/kept', { agent: 'tester', cwd: store });
    const one = await turn(first.port, 'kept', 'hello one');
    expect(said(one)).toEqual(['You said: hello one']);
    const nativeId = (await events(first.port, 'kept'))[0]!.native_session_id;
    expect(nativeId).toMatch(/^acp-/);
    first.daemon.child.kill('SIGKILL');
    await first.daemon.exited;

    const second = await start();
    const two = await turn(second.port, 'kept', 'history');
    expect(said(two)).toEqual(['I remember: hello one']);
    // The replay of the first turn (user and agent chunks) is not in the stream again.
    expect(two.filter((e) => e.type === 'item.completed' && e.data.item.role === 'user')).toHaveLength(1);
    expect(two.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
    const all = await events(second.port, 'kept');
    expect(all.filter((e) => e.type === 'session.started')).toHaveLength(1);
    expect(all.at(-1)!.native_session_id).toBe(nativeId);
  }, 60_000);
});
