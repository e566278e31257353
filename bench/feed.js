// The feed section of `npm run bench` (`node bench/run.js feed`), persistence on:
//
//  1. flood: 100 mock sessions flood at once (`flood 2000 stamped` each) while one reader follows
//     the daemon-wide feed (GET /v1/events/sse) and, in another process, one reader follows each
//     session's own stream: events per second through the feed against the sum of the 100 session
//     streams in the same run, the latency each adds to a stamped delta, and the daemon's RSS
//     (idle before, peak during, after).
//  2. catch-up: a store of 1,000 sessions × 1,000 events (store-gen.js), a feed reader from cursor
//     0 to the last entry: entries per second, and the daemon's peak RSS meanwhile (the feed pages
//     from the store, 256 entries at a time; it must not hold the history in memory).
import { loadavg } from 'node:os';
import { api, removeDataDir, rssMb, startDaemon, tempDataDir } from './daemon.js';
import { generateStore, templateStore } from './store-gen.js';
import { child, pct, print, session, settledRss, sleep, untilIdle } from './util.js';

const SESSIONS = 100;
const PER_SESSION = 2000;

/** Runs `work` while sampling the daemon's RSS every 100 ms; its value and the peak. */
async function peakRss(pid, work) {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  try {
    return { value: await work(), peak: Math.max(peak, rssMb(pid)) };
  } finally {
    clearInterval(timer);
  }
}

async function flood() {
  const d = await startDaemon(['--data-dir', tempDataDir('feed'), '--max-sessions', String(SESSIONS + 10)]);
  try {
    const ids = [];
    for (let i = 0; i < SESSIONS; i++) ids.push(await session(d, `f${i}`));
    const idle = await settledRss(d.pid, { min: 3, max: 10 });
    const head = (await api(d.url, 'GET', '/v1/events?limit=1')).lastCursor;
    const feed = child('feed-reader.js', [SESSIONS, `${d.url}/v1/events/sse?after=${head}`]);
    const own = child('feed-reader.js', [SESSIONS, ...ids.map((id) => `${d.url}/v1/sessions/${id}/events/sse?offset=${0}`)]);
    await Promise.all([feed.next(), own.next()]);
    const { value, peak } = await peakRss(d.pid, async () => {
      const results = Promise.all([feed.next(), own.next()]);
      await Promise.all(ids.map((id) => api(d.url, 'POST', `/v1/sessions/${id}/messages`, { message: `flood ${PER_SESSION} stamped` })));
      return results;
    });
    const [f, s] = value;
    for (const id of ids) await untilIdle(d, id);
    print('feed_flood_sessions', SESSIONS);
    print('feed_flood_events', f.frames);
    print('feed_flood_events_per_s', f.frames / f.seconds);
    print('feed_flood_session_streams_events_per_s', s.frames / s.seconds);
    print('feed_flood_latency_p50_ms', pct(f.latencies, 50));
    print('feed_flood_latency_p99_ms', pct(f.latencies, 99));
    print('feed_flood_session_streams_latency_p50_ms', pct(s.latencies, 50));
    print('feed_flood_session_streams_latency_p99_ms', pct(s.latencies, 99));
    print('feed_flood_idle_rss_mb', idle);
    print('feed_flood_peak_rss_mb', peak);
    print('feed_flood_after_rss_mb', rssMb(d.pid));
    print('feed_flood_loadavg_1m', loadavg()[0]);
    feed.stop();
    own.stop();
  } finally {
    await d.stop();
  }
}

async function catchUp() {
  const template = await templateStore();
  const dir = tempDataDir('feed-store');
  const events = generateStore(template, dir, { sessions: 1000, running: 0 });
  const d = await startDaemon(['--data-dir', dir]);
  try {
    const idle = await settledRss(d.pid, { min: 3, max: 10 });
    const last = (await api(d.url, 'GET', '/v1/events?limit=1')).lastCursor;
    const reader = child('readers.js', [`${d.url}/v1/events/sse?after=0`, 1, 'replay', events]);
    await reader.next();
    const { value, peak } = await peakRss(d.pid, () => reader.next());
    reader.stop();
    print('feed_catchup_events', events);
    print('feed_catchup_last_cursor', last);
    print('feed_catchup_events_per_s', value.events / value.seconds);
    print('feed_catchup_idle_rss_mb', idle);
    print('feed_catchup_peak_rss_mb', peak);
    print('feed_catchup_loadavg_1m', loadavg()[0]);
  } finally {
    await d.stop();
    removeDataDir(dir);
    removeDataDir(template);
  }
}

export async function feedSection() {
  await flood();
  await sleep(500);
  await catchUp();
}
