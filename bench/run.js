// `npm run bench`: measures the daemon where users feel it and prints `name: value` lines.
// Run on an idle machine and compare ratios within one run; absolute numbers move between runs.
import http from 'node:http';
import { buildApp } from '../dist/app.js';
import { EventLog } from '../dist/sessions/event-log.js';
import { counterIds, systemClock } from '../dist/util/deps.js';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const print = (name, value, unit) => console.log(`${name}: ${typeof value === 'number' ? +value.toFixed(2) : value}${unit ? ` ${unit}` : ''}`);

function benchLogAppend() {
  const log = new EventLog('bench', { maxEvents: 100_000, maxBytes: 1 << 30 }, counterIds(), systemClock);
  const n = 200_000;
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    log.append({ type: 'item.delta', source: 'agent', synthetic: false, data: { item_id: 'itm_1', native_item_id: 'msg_1', delta: 'x' } }, { type: 'text', id: 'msg_1', chunk: 'x' });
  }
  print('log_append_events_per_s', n / ((performance.now() - started) / 1000));
}

async function main() {
  benchLogAppend();
  const { app, sessions } = await buildApp({ logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address();
  const post = (path, body) =>
    app.inject({ method: 'POST', url: path, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  // Session start: spawning the mock process until it reports ready.
  const starts = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    const res = await post(`/v1/sessions/start-${i}`, { agent: 'mock' });
    if (res.statusCode !== 200) throw new Error(res.body);
    starts.push(performance.now() - t);
    await sessions.delete(`start-${i}`);
  }
  print('session_create_median_ms', median(starts));

  // Time to first delta of a short turn, and the whole turn, on a warm session.
  await post('/v1/sessions/latency', { agent: 'mock' });
  const session = sessions.get('latency');
  const firsts = [];
  const turns = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    const times = await new Promise((resolve) => {
      let first;
      const stop = session.log.listen((e) => {
        if (e.type === 'item.delta' && e.source === 'agent' && first === undefined) first = performance.now() - t;
        if (e.type === 'turn.ended') {
          stop();
          resolve([first, performance.now() - t]);
        }
      });
      post('/v1/sessions/latency/messages', { message: 'Reply with exactly the single word OK.' });
    });
    firsts.push(times[0]);
    turns.push(times[1]);
  }
  print('turn_first_delta_median_ms', median(firsts));
  print('turn_total_median_ms', median(turns));

  // Throughput: native lines → universal events, with one SSE subscriber reading over a socket.
  await post('/v1/sessions/flood', { agent: 'mock' });
  const flood = sessions.get('flood');
  const n = 50_000;
  let frames = 0;
  const sseDone = new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/v1/sessions/flood/events/sse' }, (res) => {
      let tail = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const text = tail + chunk;
        const parts = text.split('\n\n');
        tail = parts.pop();
        for (const p of parts) if (p.startsWith('id: ')) frames++;
        if (text.includes('"type":"turn.ended"')) {
          res.destroy();
          resolve(performance.now());
        }
      });
    });
  });
  await new Promise((r) => setTimeout(r, 100));
  const t0 = performance.now();
  const logged = new Promise((resolve) => {
    const stop = flood.log.listen((e) => {
      if (e.type === 'turn.ended') {
        stop();
        resolve(performance.now());
      }
    });
  });
  await post('/v1/sessions/flood/messages', { message: `flood ${n}` });
  const tLogged = await logged;
  const tSse = await sseDone;
  print('flood_events', flood.log.lastSequence);
  print('flood_logged_events_per_s', flood.log.lastSequence / ((tLogged - t0) / 1000));
  print('flood_sse_delivered_events_per_s', frames / ((tSse - t0) / 1000));
  print('rss_mb_after_flood', process.memoryUsage().rss / 1024 / 1024);

  await app.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
