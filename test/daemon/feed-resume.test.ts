// A feed reader (client.events(), GET /v1/events/sse) against a real daemon process: a proxy cuts
// its connections at random byte counts while sessions flood, are created and deleted, and the
// daemon is SIGKILLed mid-flood and restarted on the same data dir. Whatever happens, the reader
// gets every committed entry exactly once and in cursor order: what it read equals the store's
// feed after the restart, entry for entry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentwireClient, type FeedEntry, type ReconnectInfo } from '../../client/src/index.js';
import { CuttingProxy } from '../client/cutting-proxy.js';
import { startClientDaemon } from '../client/daemon.js';
import { killDaemons, removeInstall, setUpInstall } from '../support/daemon-process.js';

beforeAll(setUpInstall, 400_000);
afterAll(removeInstall);
const proxies: CuttingProxy[] = [];
const dirs: string[] = [];
afterEach(() => {
  killDaemons();
  for (const p of proxies.splice(0)) p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The whole feed, read page by page with the poll. */
async function pollAll(client: AgentwireClient, baseUrl: string, token: string | undefined): Promise<FeedEntry[]> {
  const out: FeedEntry[] = [];
  let after = 0;
  for (;;) {
    const res = await fetch(`${baseUrl}/v1/events?after=${after}&limit=5000`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const page = (await res.json()) as { entries: FeedEntry[]; cursor: number; hasMore: boolean };
    out.push(...page.entries);
    after = page.cursor;
    if (!page.hasMore) return out;
  }
}

const key = (e: FeedEntry) => ('event' in e ? `${e.cursor}:${e.event.event_id}` : `${e.cursor}:deleted:${e.session_deleted.session_id}`);

describe('the feed across cut connections and a SIGKILLed daemon', () => {
  it('a reader cut at random points and across kill -9 receives every committed entry exactly once, in order', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agentwire-feed-kill-'));
    dirs.push(dataDir);
    const args = ['--persist', 'on', '--data-dir', dataDir];
    const first = await startClientDaemon(args);
    const cutter = new CuttingProxy(first.port, () => 200 + Math.floor(Math.random() * 100_000));
    proxies.push(cutter);
    const baseUrl = `http://127.0.0.1:${await cutter.listen()}`;
    const reader = createClient({ baseUrl, token: first.token });
    const seen: FeedEntry[] = [];
    const reconnects: ReconnectInfo[] = [];
    const stop = new AbortController();
    const following = (async () => {
      const options = { signal: stop.signal, reconnect: { initialDelayMs: 20, maxAttempts: 1000 }, onReconnect: (r: ReconnectInfo) => void reconnects.push(r) };
      for await (const entry of reader.events(options)) seen.push(entry);
    })();

    // Short sessions created and deleted, and floods, one of them cut by the kill.
    const d1 = first.client;
    for (let i = 0; i < 5; i++) {
      const s = await d1.sessions.create({ agent: 'mock' });
      await s.turn(`echo short ${i}`);
      if (i % 2 === 0) await s.delete();
    }
    const flooded = await d1.sessions.create('flooded', { agent: 'mock' });
    await flooded.turn('flood 5000');
    await flooded.send('flood 200000');
    await new Promise((r) => setTimeout(r, 300));
    first.daemon.stop(); // SIGKILL, mid-flood
    await first.daemon.exited;
    cutter.dropAll();

    const second = await startClientDaemon(args);
    cutter.upstreamPort = second.port;
    const after = await second.client.sessions.create({ agent: 'mock' });
    await after.turn('echo after the restart');
    await after.delete();
    const flood = second.client.sessions.handle('flooded');
    await flood.turn('flood 3000');

    const truth = await pollAll(second.client, second.baseUrl, first.token);
    const last = truth.at(-1)!.cursor;
    const deadline = Date.now() + 60_000;
    while ((seen.at(-1)?.cursor ?? 0) < last && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    await following;

    expect(seen.length).toBe(truth.length);
    const firstWrong = seen.findIndex((e, i) => key(e) !== key(truth[i]!));
    expect(firstWrong, `first differing entry at ${firstWrong}`).toBe(-1);
    const cursors = seen.map((e) => e.cursor);
    expect(cursors.every((c, i) => i === 0 || c > cursors[i - 1]!)).toBe(true);
    // Each session's events are 1..n in the feed, none twice, none missing.
    const bySession = new Map<string, number[]>();
    for (const e of seen) if ('event' in e) bySession.set(e.event.session_id, [...(bySession.get(e.event.session_id) ?? []), e.event.sequence]);
    for (const [id, sequences] of bySession) expect(sequences, id).toEqual(sequences.map((_, i) => i + 1));
    expect(seen.filter((e) => 'event' in e && e.event.type === 'agent.unparsed')).toEqual([]);
    expect(seen.filter((e) => 'session_deleted' in e)).toHaveLength(4);
    // It means something only if the reader was really cut, many times.
    expect(cutter.cuts).toBeGreaterThanOrEqual(10);
    expect(reconnects.length).toBeGreaterThanOrEqual(10);
  }, 240_000);
});
