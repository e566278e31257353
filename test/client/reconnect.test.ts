// session.events() over connections that break: a proxy cuts every connection after a random
// number of bytes while the mock floods events, and a daemon is SIGKILLed and restarted under a
// follower. Whatever happens, the iterator yields sequences 1..N exactly: no gap, no duplicate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ReconnectInfo, type UniversalEvent } from '../../client/src/index.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { CuttingProxy } from './cutting-proxy.js';
import { collect, expectDense, expectNoUnparsed, startClientDaemon } from './daemon.js';

beforeAll(setUpInstall, 400_000);
afterAll(removeInstall);
const proxies: CuttingProxy[] = [];
const dirs: string[] = [];
afterEach(() => {
  killDaemons();
  for (const p of proxies.splice(0)) p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function proxy(upstreamPort: number, budget: () => number): Promise<{ proxy: CuttingProxy; baseUrl: string }> {
  const p = new CuttingProxy(upstreamPort, budget);
  proxies.push(p);
  return { proxy: p, baseUrl: `http://127.0.0.1:${await p.listen()}` };
}

const FLOOD = 20_000;

describe('session.events() reconnects', () => {
  it('yields 1..N exactly while a proxy cuts every connection at random byte counts during a flood', async () => {
    const { port, token, client: direct } = await startClientDaemon();
    // From 200 bytes (inside the response head) to 200 kB (hundreds of frames).
    const { proxy: cutter, baseUrl } = await proxy(port, () => 200 + Math.floor(Math.random() * 200_000));
    const client = createClient({ baseUrl, token });
    const session = await direct.sessions.create({ agent: 'mock' });
    const reconnects: ReconnectInfo[] = [];
    const options = { reconnect: { initialDelayMs: 20 }, onReconnect: (r: ReconnectInfo) => void reconnects.push(r) };

    // One follower live from the start, one reading the whole backlog afterwards.
    const live = collect(client.sessions.handle(session.id).events(options), (e) => e.type === 'turn.ended');
    const turn = await direct.sessions.handle(session.id).turn(`flood ${FLOOD}`);
    expect(turn.reason).toBe('completed');
    const last = turn.ended!.sequence;
    expect(last).toBeGreaterThan(FLOOD);
    const backlog = await collect(client.sessions.handle(session.id).events(options), (e) => e.sequence === last);

    for (const events of [await live, backlog]) {
      expectDense(events);
      expect(events.length).toBe(last);
      expectNoUnparsed(events);
    }
    expect(new Set(backlog.map((e) => e.event_id)).size).toBe(last);
    // The test means something only if the streams were really cut, many times, at random places.
    expect(cutter.cuts).toBeGreaterThanOrEqual(10);
    expect(reconnects.length).toBeGreaterThanOrEqual(10);
    // Progress resets the attempt count: with this many cuts, a bound of 10 was never near.
    expect(Math.max(...reconnects.map((r) => r.attempt))).toBeLessThanOrEqual(3);
  }, 180_000);

  it('follows a session across a SIGKILLed and restarted daemon (persistence on), then ends at session.ended', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentwire-client-restart-'));
    dirs.push(dataDir);
    const args = ['--persist', 'on', '--data-dir', dataDir];
    const first = await startClientDaemon(args);
    const { proxy: front, baseUrl } = await proxy(first.port, () => Infinity);
    // The second daemon reads the token the first one made from the same data dir.
    const client = createClient({ baseUrl, token: first.token });
    const session = await client.sessions.create({ agent: 'mock' });
    const reconnects: ReconnectInfo[] = [];
    const seen: UniversalEvent[] = [];
    const following = (async () => {
      for await (const event of session.events({ reconnect: { initialDelayMs: 100 }, onReconnect: (r) => void reconnects.push(r) })) seen.push(event);
    })();

    await session.send('slow 100');
    await waitForDeltas(seen, 3);
    first.daemon.stop();
    await first.daemon.exited;
    front.dropAll();

    const second = await startClientDaemon(args);
    front.upstreamPort = second.port;
    // The restarted daemon closed the cut turn; the session takes a new one and then ends.
    const result = await session.turn('echo after the restart');
    expect(result.text).toBe('after the restart');
    await session.terminate();
    await following;

    expect(reconnects.length).toBeGreaterThanOrEqual(1);
    expect(seen.at(-1)!.type).toBe('session.ended');
    expectDense(seen);
    expectNoUnparsed(seen);
    const log = await collect(second.client.sessions.handle(session.id).events());
    expect(seen.map((e) => e.event_id)).toEqual(log.map((e) => e.event_id));
  }, 120_000);
});

async function waitForDeltas(seen: UniversalEvent[], count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (seen.filter((e) => e.type === 'item.delta').length < count) {
    if (Date.now() > deadline) throw new Error(`no ${count} deltas within 30 s; saw ${seen.map((e) => e.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
