// Load generator for the `requests` section: a fixed number of requests over a fixed number of
// keep-alive connections, each connection sending its next request as soon as the last answer
// ended. Told what to send (argv[2], JSON):
//   { method, headers, body?, count, targets: [{ url, sse? }] }   one target per connection
// With `sse` (an event stream of that connection's session, opened before the run), a connection
// waits after each answer until its session's turn has ended (`turn.ended` on the stream), so a
// POST …/messages never meets the turn before it (409 turn_in_progress).
// Protocol over IPC: {ready} once the streams are open; 'go' starts the run; then
// { seconds, count, statuses } (count of answers by status code).
import http from 'node:http';

const spec = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.targets.length });
const body = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
const headers = { ...spec.headers, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) };
const statuses = {};
let left = spec.count;
let answered = 0;
let started = 0;

const END = '"type":"turn.ended"';

/** A connection's event stream: resolves `ended(n)` once n turns have ended on it. */
function turnWatcher(url) {
  let ended = 0;
  let tail = '';
  let waiting;
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { ...spec.headers, accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${url} → ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          const text = tail + chunk;
          for (let i = text.indexOf(END); i >= 0; i = text.indexOf(END, i + 1)) ended++;
          tail = text.slice(-END.length + 1);
          if (waiting && ended >= waiting.n) {
            const w = waiting;
            waiting = undefined;
            w.resolve();
          }
        });
        resolve({ ended: (n) => (ended >= n ? Promise.resolve() : new Promise((r) => (waiting = { n, resolve: r }))) });
      })
      .on('error', reject);
  });
}

function send(url) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: spec.method, headers, agent }, (res) => {
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function connection(target, watcher) {
  let turns = 0;
  while (left > 0) {
    left--;
    await send(target.url);
    answered++;
    if (watcher) await watcher.ended(++turns);
  }
}

const watchers = await Promise.all(spec.targets.map((t) => (t.sse ? turnWatcher(t.sse) : undefined)));
process.send({ ready: true });
process.on('message', async (m) => {
  if (m === 'exit') process.exit(0);
  if (m !== 'go') return;
  started = performance.now();
  try {
    await Promise.all(spec.targets.map((t, i) => connection(t, watchers[i])));
    process.send({ seconds: (performance.now() - started) / 1000, count: answered, statuses });
  } catch (err) {
    process.send({ error: String(err) });
  }
});
