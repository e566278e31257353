// The persistence section of `npm run bench` (`node bench/run.js persist`): what the SQLite event
// store costs and what it holds up to.
//
//  1. Throughput and added latency to one SSE reader with persistence off, on (fsync normal) and
//     on with --fsync always, each on a fresh daemon, interleaved off/on/always for
//     BENCH_PERSIST_ROUNDS rounds (default 2) so machine noise hits all three alike; the ratios
//     are taken within a round.
//  2. A store of 1,000 sessions × 1,000 events (1,000,000 events), generated (store-gen.js):
//     cold start to the first /v1/health 200 and to GET /v1/sessions listing all of them.
//  3. The same store plus one session of 1,000,000 events: cold start again, then the daemon's
//     RSS idle, during and after a full SSE replay of that session from offset 0, and after a poll
//     walk through all of it (1,000 events per request).
import { api, removeDataDir, rssMb, startDaemon, tempDataDir } from './daemon.js';
import { addBigSession, generateStore, templateStore } from './store-gen.js';
import { child, lastSequence, pct, print, session, settledRss, sleep, untilIdle } from './util.js';

const BIG = 1_000_000;
const SESSIONS = 1_000;

/** The flood and the paced flood of the throughput section, on one daemon; returns the figures. */
export async function flows(d) {
  const id = await session(d, 'throughput');
  const after = await lastSequence(d, id);
  const reader = child('readers.js', [`${d.url}/v1/sessions/${id}/events/sse?offset=${after}`, 1, 'throughput']);
  await reader.next();
  await api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: 'flood 200000 stamped' });
  const flood = await reader.next();
  reader.stop();
  await api(d.url, 'DELETE', `/v1/sessions/${id}`);

  const paced = await session(d, 'paced');
  const from = await lastSequence(d, paced);
  const reader2 = child('readers.js', [`${d.url}/v1/sessions/${paced}/events/sse?offset=${from}`, 1, 'throughput']);
  await reader2.next();
  await api(d.url, 'POST', `/v1/sessions/${paced}/messages`, { message: 'flood 100000 stamped' });
  const warm = await reader2.next();
  await untilIdle(d, paced);
  await api(d.url, 'POST', `/v1/sessions/${paced}/messages`, { message: 'flood 100000 stamped 50000' });
  const r2 = await reader2.next();
  // Light load: 10,000 events/s, well under what either configuration sustains here, so the
  // figure is the per-tick commit's own latency, not queueing in front of a saturated daemon.
  await untilIdle(d, paced);
  await api(d.url, 'POST', `/v1/sessions/${paced}/messages`, { message: 'flood 20000 stamped 10000' });
  const r3 = await reader2.next();
  reader2.stop();
  await api(d.url, 'DELETE', `/v1/sessions/${paced}`);
  return {
    throughput: flood.events / flood.seconds,
    saturatedP50: pct(flood.latencies, 50),
    saturatedP99: pct(flood.latencies, 99),
    warmupP99: pct(warm.latencies, 99),
    paced: r2.events / r2.seconds,
    p50: pct(r2.latencies, 50),
    p99: pct(r2.latencies, 99),
    lightP50: pct(r3.latencies, 50),
    lightP99: pct(r3.latencies, 99),
  };
}

const CONFIGS = {
  off: () => ({ flags: ['--persist', 'off'] }),
  on: () => {
    const dir = tempDataDir('on');
    return { flags: ['--data-dir', dir], dir };
  },
  fsync_always: () => {
    const dir = tempDataDir('fsync');
    return { flags: ['--data-dir', dir, '--fsync', 'always'], dir };
  },
};

async function onOff() {
  const rounds = Number(process.env.BENCH_PERSIST_ROUNDS ?? 2);
  const results = { off: [], on: [], fsync_always: [] };
  for (let r = 0; r < rounds; r++) {
    for (const [name, make] of Object.entries(CONFIGS)) {
      const { flags, dir } = make();
      const d = await startDaemon(flags);
      try {
        results[name].push(await flows(d));
      } finally {
        await d.stop();
        if (dir) removeDataDir(dir);
      }
    }
  }
  const med = (name, key) => pct(results[name].map((x) => x[key]), 50);
  const range = (xs) => (xs.length > 1 ? `${+Math.min(...xs).toFixed(2)}..${+Math.max(...xs).toFixed(2)}` : +xs[0].toFixed(2));
  for (const name of Object.keys(CONFIGS)) {
    print(`persist_${name}_throughput_events_per_s`, med(name, 'throughput'));
    print(`persist_${name}_saturated_latency_p50_ms`, med(name, 'saturatedP50'));
    print(`persist_${name}_paced_events_per_s`, med(name, 'paced'));
    print(`persist_${name}_added_latency_p50_ms`, med(name, 'p50'));
    print(`persist_${name}_added_latency_p99_ms`, med(name, 'p99'));
    print(`persist_${name}_light_latency_p50_ms`, med(name, 'lightP50'));
    print(`persist_${name}_light_latency_p99_ms`, med(name, 'lightP99'));
  }
  // Within each round: the same machine state for all three daemons.
  const per = (name, key, f) => results[name].map((x, i) => f(x[key], results.off[i][key]));
  print('persist_on_off_throughput_ratio', range(per('on', 'throughput', (a, b) => a / b)));
  print('persist_on_off_added_latency_p50_delta_ms', range(per('on', 'p50', (a, b) => a - b)));
  print('persist_on_off_added_latency_p99_delta_ms', range(per('on', 'p99', (a, b) => a - b)));
  print('persist_on_off_light_latency_p50_delta_ms', range(per('on', 'lightP50', (a, b) => a - b)));
  print('persist_on_off_light_latency_p99_delta_ms', range(per('on', 'lightP99', (a, b) => a - b)));
  print('persist_fsync_always_on_throughput_ratio', range(results.fsync_always.map((x, i) => x.throughput / results.on[i].throughput)));
  print('persist_fsync_always_on_added_latency_p50_delta_ms', range(results.fsync_always.map((x, i) => x.p50 - results.on[i].p50)));
  print('persist_fsync_always_on_light_latency_p50_delta_ms', range(results.fsync_always.map((x, i) => x.lightP50 - results.on[i].lightP50)));
}

/** Spawn → first /v1/health 200, and → GET /v1/sessions listing `expect` sessions. */
async function coldStart(dir, expect) {
  const t = performance.now();
  const d = await startDaemon(dir ? ['--data-dir', dir] : ['--persist', 'off']);
  for (;;) {
    if (await fetch(`${d.url}/v1/health`).then((r) => r.ok, () => false)) break;
    await sleep(2);
  }
  const health = performance.now() - t;
  const { sessions } = await api(d.url, 'GET', '/v1/sessions');
  const listed = performance.now() - t;
  if (sessions.length !== expect) throw new Error(`cold start listed ${sessions.length} sessions, expected ${expect}`);
  return { d, health, listed };
}

/** Peak RSS of `pid` while `work` runs (read every 50 ms). */
async function peakRss(pid, work) {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  try {
    const value = await work();
    return { value, peak: Math.max(peak, rssMb(pid)) };
  } finally {
    clearInterval(timer);
  }
}

async function stored() {
  let t = performance.now();
  const template = await templateStore();
  const dir = tempDataDir('stored');
  const events = generateStore(template, dir, { sessions: SESSIONS });
  print('persist_generate_1m_events_s', (performance.now() - t) / 1000);

  // The first start restores the sessions a "crash" left mid-turn (a write); the rest only read.
  // Interleaved with an in-memory daemon's start, the same run's baseline.
  const starts = [];
  const baseline = [];
  for (let i = 0; i < 5; i++) {
    const s = await coldStart(dir, SESSIONS);
    starts.push(s);
    await s.d.stop();
    const b = await coldStart(null, 0);
    baseline.push(b);
    await b.d.stop();
  }
  print('persist_coldstart_off_health_ms', pct(baseline.map((s) => s.health), 50));
  if (events !== SESSIONS * 1000) throw new Error(`generated ${events} events`);
  print('persist_coldstart_1k_sessions_health_ms', pct(starts.map((s) => s.health), 50));
  print('persist_coldstart_1k_sessions_list_ms', pct(starts.map((s) => s.listed), 50));
  print('persist_coldstart_1k_sessions_first_start_ms', starts[0].listed);

  t = performance.now();
  addBigSession(template, dir, 'big', BIG);
  print('persist_generate_big_session_s', (performance.now() - t) / 1000);
  const { d, health, listed } = await coldStart(dir, SESSIONS + 1);
  print('persist_coldstart_2m_events_health_ms', health);
  print('persist_coldstart_2m_events_list_ms', listed);
  try {
    const idle = await settledRss(d.pid);
    print('persist_idle_rss_mb', idle);

    // SSE from offset 0: every event comes from the store, 256 per keyset page.
    const reader = child('readers.js', [`${d.url}/v1/sessions/big/events/sse?offset=0`, 1, 'replay', BIG]);
    await reader.next();
    const sse = await peakRss(d.pid, () => reader.next());
    const afterSse = rssMb(d.pid);
    reader.stop();
    print('persist_replay_sse_events_per_s', sse.value.events / sse.value.seconds);
    print('persist_replay_sse_peak_rss_mb', sse.peak);
    print('persist_replay_sse_after_rss_mb', afterSse);

    // A poll walk: offset 0 to the end, the default page.
    const walk = await peakRss(d.pid, async () => {
      const started = performance.now();
      let offset = 0;
      for (;;) {
        const page = await api(d.url, 'GET', `/v1/sessions/big/events?offset=${offset}`);
        offset += page.events.length;
        if (!page.hasMore) break;
      }
      if (offset !== BIG) throw new Error(`poll walk ended at ${offset}`);
      return (performance.now() - started) / 1000;
    });
    print('persist_replay_poll_walk_s', walk.value);
    print('persist_replay_poll_peak_rss_mb', walk.peak);
    print('persist_replay_poll_after_rss_mb', rssMb(d.pid));
    print('persist_replay_over_idle_mb', Math.max(sse.peak, walk.peak) - idle);
  } finally {
    await d.stop();
    removeDataDir(dir);
    removeDataDir(template);
  }
}

export async function persistence() {
  await onOff();
  await stored();
}
