// A reader process for the bench: opens SSE connections to one session and reports, over IPC,
// when every connection is ready and what each one measured. Runs apart from the daemon so the
// readers do not share its event loop.
//   argv: <url> <connections> <mode: fanout|throughput> [expectEvents]
import http from 'node:http';

const [url, countArg, mode, expectArg] = process.argv.slice(2);
const count = Number(countArg);
const expected = Number(expectArg ?? 0);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const latencies = [];
let ready = 0;
let done = 0;
let events = 0;
let firstAt = 0;
let lastAt = 0;

const stampOf = (data) => {
  const at = data.indexOf('"delta":"@');
  return at < 0 ? undefined : Number(data.slice(at + 10, data.indexOf(';', at)));
};

function open() {
  const req = http.get(url, { agent }, (res) => {
    if (res.statusCode !== 200) {
      process.send({ error: `reader got HTTP ${res.statusCode}` });
      return;
    }
    res.setEncoding('utf8');
    let tail = '';
    let finished = false;
    ready++;
    if (ready === count) process.send({ ready: true });
    res.on('data', (chunk) => {
      const now = performance.timeOrigin + performance.now();
      const frames = (tail + chunk).split('\n\n');
      tail = frames.pop();
      for (const frame of frames) {
        const data = frame.slice(frame.indexOf('data: ') + 6);
        if (!frame.startsWith('id: ')) continue;
        const stamp = stampOf(data);
        if (mode === 'fanout') {
          if (stamp !== undefined && !finished) {
            finished = true;
            latencies.push(now - stamp);
            if (++done === count) report();
          }
          continue;
        }
        events++;
        if (!firstAt) firstAt = now;
        lastAt = now;
        if (stamp !== undefined) latencies.push(now - stamp);
        if (events >= expected) {
          finished = true;
          report();
        }
      }
    });
  });
  req.on('error', (err) => process.send({ error: String(err) }));
}

function report() {
  process.send({ latencies, events, seconds: (lastAt - firstAt) / 1000 });
}

for (let i = 0; i < count; i++) open();
process.on('message', (m) => m === 'exit' && process.exit(0));
