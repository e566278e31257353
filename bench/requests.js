// The `requests` section: what one API request costs the daemon, per route, beside a bare node:http
// server (bench/bare.js) answering the same bytes in the same run. CPU per request is the
// daemon's own process (every thread: user + system time from /proc/<pid>/stat) over a fixed
// number of requests at a fixed concurrency, the load generator (bench/request-load.js) in its
// own process; the bare server is measured the same way. Daemon and bare server take turns, round
// after round, and the figures are medians: a busy machine slows both in the same round, so the
// ratios hold better than the absolute numbers.
//   requests_<route>_cpu_us    the daemon's CPU per request (µs)
//   requests_<route>_rps       requests per second at that concurrency (load generator included)
//   requests_<route>_bare_cpu_us, requests_<route>_over_bare (median of the rounds' ratios)
//   requests_<route>_over_health  CPU per request over health's, the same rounds
// BENCH_BEFORE=<another checkout>/bin/agentwire.js (built) measures that daemon too, in the same
// rounds, set up the same way: `requests_<route>_before_cpu_us` and `…_before_over_bare`.
// `messages` is POST /v1/sessions/{id}/messages to the mock, one session per connection, each
// waiting for its turn to end (on an SSE stream opened before the run): its CPU includes the
// turn (the mock's lines read, converted, normalized, stamped) and the stream's frames. Its bare
// server makes a bare turn (bench/bare.js): the same frames, a line to a child process and back.
//   requests_<route>_bare_over_bare_health  the bare server's answer over its health answer: the
//                                           floor of requests_<route>_over_health
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, AUTH, startDaemon, tempDataDir } from './daemon.js';
import { child, lastSequence, print, session, untilIdle } from './util.js';

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const ROUNDS = Number(process.env.BENCH_REQUEST_ROUNDS ?? 5);
/** Scales every route's request count (BENCH_REQUEST_SCALE=0.2 for a quick look). */
const SCALE = Number(process.env.BENCH_REQUEST_SCALE ?? 1);
const SESSIONS = 10;
const MESSAGE = { message: 'Reply with exactly the single word OK.' };

/** utime + stime of a process, all its threads, in µs (clock-tick resolution). */
function cpuUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One run of `count` requests against `server`; CPU µs per request and requests/s. */
async function measure(server, spec) {
  const load = child('request-load.js', [JSON.stringify(spec)]);
  await load.next();
  const before = cpuUs(server.pid);
  const done = load.next();
  load.proc.send('go');
  const { seconds, count, statuses } = await done;
  const cpu = cpuUs(server.pid) - before;
  load.stop();
  const unexpected = Object.keys(statuses).filter((s) => s !== String(spec.status));
  if (unexpected.length) throw new Error(`${spec.method} ${spec.targets[0].url}: answers ${JSON.stringify(statuses)}, expected only ${spec.status}`);
  return { cpu: cpu / count, rps: count / seconds };
}

/** What the daemon answers, so the bare server can give the same bytes. */
async function recorded(d, path) {
  const res = await fetch(d.url + path, { headers: AUTH });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

/**
 * One turn's SSE frames as the daemon writes them: the turn's opening events (written at the POST)
 * and the reply's (written when the mock answers), for the bare server's turn.
 */
async function turnFrames(d, id) {
  const res = await fetch(`${d.url}/v1/sessions/${id}/events/sse?offset=${await lastSequence(d, id)}`, { headers: AUTH });
  const reader = res.body.getReader();
  await api(d.url, 'POST', `/v1/sessions/${id}/messages`, MESSAGE);
  let text = '';
  while (!/"type":"turn\.ended"[^\n]*\n\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const frames = text.replace(/^retry: \d+\n\n/, '').split(/(?<=\n\n)/);
  // The POST appends turn.started and the user's message (started, completed); the rest is the reply.
  const opening = frames.findIndex((f) => f.includes('"role":"assistant"') || f.includes('"type":"turn.ended"'));
  return { started: frames.slice(0, opening).join(''), reply: frames.slice(opening).join('') };
}

/** The daemon's sessions: 10 mock sessions, the first holding more than a page of events. */
async function prepare(d, ids) {
  for (const id of ids) await session(d, id);
  await api(d.url, 'POST', `/v1/sessions/${ids[0]}/messages`, { message: 'flood 150' });
  await untilIdle(d, ids[0]);
}

export async function requestsSection() {
  const d = await startDaemon(['--persist', 'off']);
  const before = process.env.BENCH_BEFORE ? await startDaemon(['--persist', 'off'], { bin: process.env.BENCH_BEFORE }) : undefined;
  let bare;
  try {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `req-${i + 1}`);
    await prepare(d, ids);
    if (before) await prepare(before, ids);
    const page = `/v1/sessions/${ids[0]}/events`;
    const routes = [
      { name: 'health', method: 'GET', path: '/v1/health', status: 200, count: 20_000, connections: 50 },
      { name: 'sessions', method: 'GET', path: '/v1/sessions', status: 200, count: 10_000, connections: 50 },
      { name: 'events', method: 'GET', path: page, query: '?offset=0&limit=100', status: 200, count: 5_000, connections: 50 },
      { name: 'messages', method: 'POST', paths: ids.map((id) => `/v1/sessions/${id}/messages`), status: 204, count: 2_000, connections: SESSIONS, turns: true },
    ];
    const answers = {};
    for (const r of routes) {
      if (r.method === 'GET') answers[`GET ${r.path}`] = await recorded(d, r.path + (r.query ?? ''));
      else {
        const turn = r.turns ? await turnFrames(d, ids[1]) : undefined;
        for (const p of r.paths) answers[`POST ${p}`] = { status: r.status, turn };
      }
    }
    const file = join(tempDataDir('bare-answers'), 'answers.json');
    writeFileSync(file, JSON.stringify(answers));
    bare = await startDaemon([], { bare: true, answers: file });

    const specFor = async (server, r, count) => {
      const paths = r.paths ?? Array(r.connections).fill(r.path + (r.query ?? ''));
      const targets = [];
      for (let i = 0; i < r.connections; i++) {
        const target = { url: server.url + paths[i % paths.length] };
        // The daemon's turns end on its streams, and so do the bare server's (bench/bare.js).
        if (r.turns) target.sse = `${server.url}/v1/sessions/${ids[i]}/events/sse${server === bare ? '' : `?offset=${await lastSequence(server, ids[i])}`}`;
        targets.push(target);
      }
      return { method: r.method, headers: AUTH, ...(r.method === 'POST' ? { body: MESSAGE } : {}), count, targets, status: r.status };
    };
    const results = {};
    // BENCH_REQUEST_ROUTES=health,events: only those (health always runs: the others' ratios need it).
    const only = process.env.BENCH_REQUEST_ROUTES?.split(',');
    for (const r of routes.filter((x) => !only || x.name === 'health' || only.includes(x.name))) {
      const count = Math.max(100, Math.round(r.count * SCALE));
      // A warm-up for both, so that V8 has compiled the hot paths before anything counts.
      await measure(d, await specFor(d, r, Math.round(count / 4)));
      await measure(bare, await specFor(bare, r, Math.round(count / 4)));
      if (before) await measure(before, await specFor(before, r, Math.round(count / 4)));
      const rounds = [];
      for (let i = 0; i < ROUNDS; i++) {
        const daemon = await measure(d, await specFor(d, r, count));
        const base = await measure(bare, await specFor(bare, r, count));
        const old = before ? await measure(before, await specFor(before, r, count)) : undefined;
        rounds.push({ daemon, base, old });
      }
      results[r.name] = rounds;
      print(`requests_${r.name}_cpu_us`, median(rounds.map((x) => x.daemon.cpu)));
      print(`requests_${r.name}_rps`, median(rounds.map((x) => x.daemon.rps)));
      print(`requests_${r.name}_bare_cpu_us`, median(rounds.map((x) => x.base.cpu)));
      print(`requests_${r.name}_bare_rps`, median(rounds.map((x) => x.base.rps)));
      print(`requests_${r.name}_over_bare`, median(rounds.map((x) => x.daemon.cpu / x.base.cpu)));
      if (before) {
        print(`requests_${r.name}_before_cpu_us`, median(rounds.map((x) => x.old.cpu)));
        print(`requests_${r.name}_before_over_bare`, median(rounds.map((x) => x.old.cpu / x.base.cpu)));
      }
    }
    // Every route against health: the rounds' medians, all from this run.
    const health = median(results.health.map((x) => x.daemon.cpu));
    const bareHealth = median(results.health.map((x) => x.base.cpu));
    for (const r of routes.slice(1).filter((x) => results[x.name])) {
      print(`requests_${r.name}_over_health`, median(results[r.name].map((x) => x.daemon.cpu)) / health);
      // The same ratio between the bare server's answers: the least the route can cost over health.
      print(`requests_${r.name}_bare_over_bare_health`, median(results[r.name].map((x) => x.base.cpu)) / bareHealth);
    }
  } finally {
    await bare?.stop();
    await before?.stop();
    await d.stop();
  }
}
