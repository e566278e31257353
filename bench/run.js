// `npm run bench`: the daemon measured where users feel it, as a separate process, with readers
// and load in their own processes. Prints `name: value` lines (see docs/performance.md). Loopback
// only; every loop is bounded in count and time. Takes about three minutes, plus the `start`
// section (real agent CLIs against the fake model: several minutes more, far more on a busy machine).
//
// Every daemon is started with `--persist off` or a fresh temp `--data-dir` (never the user's data
// dir). The sections before `persist` measure the in-memory daemon, as they always have
// (BENCH_PERSIST=on runs them on a temp data dir instead); `persist` compares the two. `mirror`
// also starts a throwaway PostgreSQL server (bench/mirror.js); `feed` measures the daemon-wide
// feed (bench/feed.js).
import http from 'node:http';
import module from 'node:module';
import { api, AUTH, removeDataDirs, rssMb, startDaemon, tempDataDir } from './daemon.js';
import { feedSection } from './feed.js';
import { mirrorSection } from './mirror.js';
import { persistence } from './persist.js';
import { requestsSection } from './requests.js';
import { sessionStart, sharingOnly } from './start.js';
import { child, lastSequence, pct, print, session, settledRss, sleep, untilIdle } from './util.js';

/** Flags for the general sections' daemons: memory only, unless BENCH_PERSIST=on. */
const store = () => (process.env.BENCH_PERSIST === 'on' ? ['--data-dir', tempDataDir('section')] : ['--persist', 'off']);

/** spawn → first 200 from /v1/health, and the RSS once idle; `bare` is bench/bare.js. */
async function startTimes(flags, options = {}, rounds = 7) {
  const times = [];
  let startup = NaN;
  let idle = NaN;
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    // `noCodeCache`: every start with an empty compile cache, as the very first start on a machine.
    const d = await startDaemon(flags, options.noCodeCache ? { ...options, env: { NODE_COMPILE_CACHE: tempDataDir('no-code-cache') } } : options);
    while (!(await fetch(`${d.url}/v1/health`).then((r) => r.ok, () => false))) await sleep(2);
    times.push(performance.now() - t);
    if (i === 0 && options.rss) {
      await sleep(1000);
      startup = rssMb(d.pid);
      idle = await settledRss(d.pid);
    }
    await d.stop();
  }
  return { ms: pct(times, 50), startup, idle };
}

async function coldStart() {
  // A bare Node HTTP server first, in the same run: the baseline the daemon is held to.
  const bare = await startTimes([], { bare: true, rss: true });
  print('bare_node_coldstart_ms', bare.ms);
  print('bare_node_idle_rss_mb', bare.idle);
  const memory = await startTimes(['--persist', 'off'], { rss: true });
  print('coldstart_ms', memory.ms);
  print('startup_rss_mb', memory.startup);
  print('idle_rss_mb', memory.idle);
  // The default configuration: persistence on, here in an empty data dir (its store is created on
  // the first start; the later starts open it).
  const persisted = await startTimes(['--data-dir', tempDataDir('cold')], { rss: true });
  print('coldstart_persist_ms', persisted.ms);
  print('idle_rss_persist_mb', persisted.idle);
  print('coldstart_persist_over_bare', persisted.ms / bare.ms);
  print('idle_rss_persist_over_bare_mb', persisted.idle - bare.idle);
  // Node >= 22.1 keeps V8's compiled code of the bundle (bin/agentwire.js); the figures above are
  // starts that find it. A start that does not (the first one after an install or a Node upgrade):
  if (typeof module.enableCompileCache === 'function') {
    const first = await startTimes(['--data-dir', tempDataDir('cold')], { noCodeCache: true });
    print('coldstart_persist_no_code_cache_ms', first.ms);
  }
}

async function healthLoad(d) {
  const load = child('load.js', [`${d.url}/v1/health`, 50, 10]);
  const { latencies, seconds } = await load.next();
  load.stop();
  print('health_rps', latencies.length / seconds);
  print('health_p50_ms', pct(latencies, 50));
  print('health_p99_ms', pct(latencies, 99));
}


/** A saturated flood: the fastest way to get the mock's and the reader's hot loops compiled. */
const WARM_UP = 'flood 100000 stamped';

async function throughput(d) {
  const id = await session(d, 'throughput');
  const after = await lastSequence(d, id);
  const reader = child('readers.js', [`${d.url}/v1/sessions/${id}/events/sse?offset=${after}`, 1, 'throughput']);
  await reader.next();
  await api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: 'flood 200000 stamped' });
  const { latencies, events, seconds } = await reader.next();
  reader.stop();
  print('throughput_events_per_s', events / seconds);
  // At saturation the agent outruns the daemon, so lines queue in the pipe: this is queueing, not
  // what the daemon adds to a line it is ready to take.
  print('saturated_latency_p50_ms', pct(latencies, 50));
  print('saturated_latency_p99_ms', pct(latencies, 99));
  await api(d.url, 'DELETE', `/v1/sessions/${id}`);

  // The same flood paced at 50,000 events/s: the latency the daemon adds under that load. A
  // warm-up turn first: the session's mock and the reader are new processes, and until V8 has
  // compiled their hot loops (on the same two cores) their slowness is theirs, not the daemon's.
  // The warm-up's own tail is printed too; the paced turn after it is the figure.
  const paced = await session(d, 'paced');
  const from = await lastSequence(d, paced);
  const reader2 = child('readers.js', [`${d.url}/v1/sessions/${paced}/events/sse?offset=${from}`, 1, 'throughput']);
  await reader2.next();
  await api(d.url, 'POST', `/v1/sessions/${paced}/messages`, { message: WARM_UP });
  const warm = await reader2.next();
  await untilIdle(d, paced);
  await api(d.url, 'POST', `/v1/sessions/${paced}/messages`, { message: 'flood 100000 stamped 50000' });
  const r2 = await reader2.next();
  reader2.stop();
  print('warmup_latency_p99_ms', pct(warm.latencies, 99));
  print('paced_events_per_s', r2.events / r2.seconds);
  print('added_latency_p50_ms', pct(r2.latencies, 50));
  print('added_latency_p99_ms', pct(r2.latencies, 99));
  await api(d.url, 'DELETE', `/v1/sessions/${paced}`);
  await relayFloor();
}

/** The same paced measurement through bench/relay.js, a relay doing next to nothing: the floor. */
async function relayFloor() {
  const relay = child('relay.js', []);
  const { port } = await relay.next();
  const reader = child('readers.js', [`http://127.0.0.1:${port}/`, 1, 'throughput']);
  await reader.next();
  relay.proc.send({ prompt: WARM_UP });
  await reader.next();
  relay.proc.send({ prompt: 'flood 100000 stamped 50000' });
  const r = await reader.next();
  reader.stop();
  relay.proc.send('exit');
  print('relay_floor_latency_p50_ms', pct(r.latencies, 50));
  print('relay_floor_latency_p99_ms', pct(r.latencies, 99));
}

/**
 * `n` readers on `url` (in processes of BENCH_PER_READER connections), all connected before `send`
 * makes the one stamped delta: each reader's latency to it. `ready` runs once all are connected.
 */
async function fanToReaders(url, n, send, ready = () => undefined) {
  const per = Number(process.env.BENCH_PER_READER ?? 1250);
  const readers = [];
  for (let left = n; left > 0; left -= per) readers.push(child('readers.js', [url, Math.min(per, left), 'fanout']));
  await Promise.all(readers.map((r) => r.next()));
  await sleep(300);
  ready();
  const results = readers.map((r) => r.next());
  await send();
  const latencies = (await Promise.all(results)).flatMap((r) => r.latencies);
  readers.forEach((r) => r.stop());
  return latencies;
}

async function fanout(d, n) {
  const id = await session(d, `fanout-${n}`);
  const after = await lastSequence(d, id);
  const latencies = await fanToReaders(
    `${d.url}/v1/sessions/${id}/events/sse?offset=${after}`,
    n,
    () => api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: 'flood 1 stamped 2' }),
    () => print(`rss_mb_${n}`, rssMb(d.pid)),
  );
  print(`fanout_${n}_p50_ms`, pct(latencies, 50));
  print(`fanout_${n}_p99_ms`, pct(latencies, 99));
  await api(d.url, 'DELETE', `/v1/sessions/${id}`);
  await sleep(300);
}

/** The same readers and the same one stamped delta, fanned out by bench/relay.js: the machine's floor. */
async function fanoutFloor(n) {
  const relay = child('relay.js', []);
  const { port } = await relay.next();
  const latencies = await fanToReaders(`http://127.0.0.1:${port}/`, n, () => relay.proc.send({ prompt: 'flood 1 stamped 2' }));
  relay.proc.send('exit');
  print(`fanout_floor_${n}_p50_ms`, pct(latencies, 50));
  print(`fanout_floor_${n}_p99_ms`, pct(latencies, 99));
  await sleep(300);
}

async function idleConnections(d) {
  await sleep(500);
  const before = rssMb(d.pid);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  await Promise.all(
    Array.from({ length: 1000 }, () => new Promise((resolve, reject) => http.get(`${d.url}/v1/health`, { agent }, (res) => res.resume().on('end', resolve)).on('error', reject))),
  );
  await sleep(500);
  print('rss_per_idle_conn_kb', ((rssMb(d.pid) - before) * 1024) / 1000);
  agent.destroy();
}

async function turnLatency(d) {
  const id = await session(d, 'turns');
  const times = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    await new Promise((resolve, reject) => {
      const req = http.request(`${d.url}/v1/sessions/${id}/messages/stream`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json', accept: 'application/x-ndjson' } }, (res) => {
        res.setEncoding('utf8');
        let seen = false;
        res.on('data', () => {
          if (!seen) times.push(performance.now() - t);
          seen = true;
        });
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ message: 'Reply with exactly the single word OK.' }));
    });
  }
  print('turn_first_event_p50_ms', pct(times, 50));
  print('turn_first_event_p99_ms', pct(times, 99));
}

async function memoryGrowth() {
  // A log cap well under 10k turns' worth of events, so the log stops growing early and what
  // remains is the daemon's own per-turn memory.
  const d = await startDaemon([...store(), '--max-events-per-session', '5000']);
  const id = await session(d, 'growth');
  let atStart = NaN;
  for (let i = 1; i <= 10_000; i++) {
    await api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: 'Reply with exactly the single word OK.' });
    await untilIdle(d, id);
    if (i === 4_000) atStart = rssMb(d.pid);
  }
  // From turn 4,000 on: by then the event log is at its cap and the JIT has settled.
  print('memory_growth_mb_10k_turns', rssMb(d.pid) - atStart);
  await d.stop();
}

async function poll(d) {
  const id = await session(d, 'poll');
  // session.started + 99,992 deltas + the turn's 7 other events = 100,000: the default cap, nothing evicted.
  await api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: 'flood 99992' });
  await untilIdle(d, id);
  const held = await lastSequence(d, id);
  if (held !== 100_000) throw new Error(`poll session holds ${held} events, expected 100000`);
  for (const [name, query] of [['poll_events_ms', ''], ['poll_events_raw_ms', '&include_raw=true'], ['poll_events_10k_ms', '&limit=10000'], ['poll_events_10k_raw_ms', '&limit=10000&include_raw=true']]) {
    const times = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      const res = await fetch(`${d.url}/v1/sessions/${id}/events?offset=0${query}`, { headers: AUTH });
      const body = await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`poll → ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
      times.push(performance.now() - t);
    }
    print(name, pct(times, 50));
  }
}

async function main() {
  const only = process.argv[2];
  const started = Date.now();
  if (!only || only === 'cold') await coldStart();
  if (!only || only === 'fanout') {
    // A fresh daemon, so rss_mb_<N> is the readers' cost and not what earlier floods left in the
    // heap. One session serves up to 5,000 readers here; the default subscriber cap is 64.
    // --max-connections: BENCH_FANOUT may ask for more readers than the default 10,000 sockets.
    const f = await startDaemon([...store(), '--max-subscribers', '10000', '--max-connections', '19000']);
    const sizes = process.env.BENCH_FANOUT ? process.env.BENCH_FANOUT.split(',').map(Number) : [100, 1000, 5000];
    try {
      for (const n of sizes) await fanout(f, n);
    } finally {
      await f.stop();
    }
    // The floor after the daemon's runs, with the daemon gone: the largest size only.
    await fanoutFloor(Math.max(...sizes));
  }
  const shared = ['health', 'throughput', 'idle', 'turns', 'poll'];
  const d = !only || shared.includes(only) ? await startDaemon(store()) : null;
  if (d) {
    try {
      if (!only || only === 'health') await healthLoad(d);
      if (!only || only === 'throughput') await throughput(d);
      if (!only || only === 'idle') await idleConnections(d);
      if (!only || only === 'turns') await turnLatency(d);
      if (!only || only === 'poll') await poll(d);
    } finally {
      await d.stop();
    }
  }
  if (!only || only === 'requests') await requestsSection();
  if (!only || only === 'growth') await memoryGrowth();
  if (!only || only === 'persist') await persistence();
  // `start <agent>…` measures only those agents.
  if (!only || only === 'start') await sessionStart(only === 'start' && process.argv.length > 3 ? process.argv.slice(3) : undefined);
  // `share`: only the OpenCode shared-server comparison (also part of `start opencode`).
  if (only === 'share') await sharingOnly();
  if (!only || only === 'mirror') await mirrorSection();
  if (!only || only === 'feed') await feedSection();
  print('bench_seconds', (Date.now() - started) / 1000);
}

main().then(
  () => removeDataDirs(),
  (err) => {
    console.error(err);
    removeDataDirs();
    process.exit(1);
  },
);
