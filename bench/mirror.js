// The mirror section of `npm run bench` (`node bench/run.js mirror`): events per second the
// transcript mirror (agentwire-client/mirror, built into client/dist) writes into a real
// PostgreSQL server (the throwaway one the tests use, test/support/postgres.js) from three durable
// daemons.
//
//  1. catch-up: each daemon first holds BENCH_MIRROR_EVENTS events (default 100,000) in 4 sessions,
//     written before the mirror starts; the mirror is started on an empty database and timed until
//     every event is stored: the mirror's own rate, the daemons only replaying their stores.
//  2. live: the mirror running and caught up, each daemon's 4 sessions flood as many events again;
//     timed from the first message to the last event stored. Here the daemons, their mock agents,
//     PostgreSQL and the mirror share the two cores.
//
// Besides the rates: the load average when each ended, and the CPU the mirror (this process) and
// PostgreSQL (all its processes) spent per event during the catch-up, which other work on a
// shared machine changes much less than it changes the rates.
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startPostgres } from '../test/support/postgres.js';
import { api, BENCH_TOKEN, startDaemon, tempDataDir } from './daemon.js';
import { print, session, sleep, untilIdle } from './util.js';

const SESSIONS = 4;

/** CPU seconds (user + system) a process has used, from /proc; 0 once it is gone. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The CPU seconds of PostgreSQL's processes: the postmaster and its children (the backends). */
function postgresSeconds(postmaster) {
  let total = cpuSeconds(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(postmaster)) total += cpuSeconds(entry);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Resolves once the mirror has stored `total` events; the seconds it took from `since`. */
async function stored(m, total, since, timeoutMs = 600_000) {
  while (m.stats().eventsWritten < total) {
    if (performance.now() - since > timeoutMs) throw new Error(`the mirror stored ${m.stats().eventsWritten} of ${total} events in ${timeoutMs / 1000} s`);
    await sleep(20);
  }
  return (performance.now() - since) / 1000;
}

/** Floods every session of every daemon with `perSession` events; resolves when all are idle. */
async function flood(daemons, perSession) {
  await Promise.all(
    daemons.map(async (d) => {
      for (let i = 1; i <= SESSIONS; i++) await api(d.url, 'POST', `/v1/sessions/s${i}/messages`, { message: `flood ${perSession}` });
      for (let i = 1; i <= SESSIONS; i++) await untilIdle(d, `s${i}`);
    }),
  );
}

const eventCount = async (daemons) => {
  let n = 0;
  for (const d of daemons) for (const s of (await api(d.url, 'GET', '/v1/sessions')).sessions) n += s.eventCount;
  return n;
};

export async function mirrorSection() {
  const { mirror } = await import('../client/dist/mirror/index.js');
  const perSession = Math.round(Number(process.env.BENCH_MIRROR_EVENTS ?? 100_000) / SESSIONS);
  const pg = await startPostgres();
  const daemons = [];
  let m;
  try {
    for (const id of ['a', 'b', 'c']) daemons.push(Object.assign(await startDaemon(['--data-dir', tempDataDir(`mirror-${id}`)]), { id }));
    for (const d of daemons) for (let i = 1; i <= SESSIONS; i++) await session(d, `s${i}`);
    await flood(daemons, perSession);
    const history = await eventCount(daemons);

    const url = await pg.createDatabase('bench');
    const targets = daemons.map((d) => ({ id: d.id, baseUrl: d.url, token: BENCH_TOKEN }));
    // The machine is shared: the rate depends on what else runs, the CPU each part used much less.
    // Backends live as long as their connections (the mirror's pool), so they are read before stop.
    const cpuBefore = { mirror: process.cpuUsage(), postgres: postgresSeconds(pg.pid) };
    const started = performance.now();
    m = await mirror({ connectionString: url, daemons: targets });
    const catchUp = await stored(m, history, started);
    const mirrorCpu = process.cpuUsage(cpuBefore.mirror);
    print('mirror_catchup_events', history);
    print('mirror_catchup_events_per_s', history / catchUp);
    print('mirror_catchup_loadavg_1m', loadavg()[0]);
    print('mirror_catchup_mirror_cpu_us_per_event', (mirrorCpu.user + mirrorCpu.system) / history);
    print('mirror_catchup_postgres_cpu_us_per_event', ((postgresSeconds(pg.pid) - cpuBefore.postgres) * 1e6) / history);

    const before = m.stats().eventsWritten;
    const t = performance.now();
    await flood(daemons, perSession);
    const live = (await eventCount(daemons)) - history;
    const liveSeconds = await stored(m, before + live, t);
    print('mirror_live_events', live);
    print('mirror_live_events_per_s', live / liveSeconds);
    print('mirror_live_loadavg_1m', loadavg()[0]);
    print('mirror_batches', m.stats().batches);
  } finally {
    await m?.stop();
    await Promise.all(daemons.map((d) => d.stop()));
    await pg.stop();
  }
}
