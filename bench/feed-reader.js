// A reader process for the bench's feed section: opens one SSE connection per URL (the daemon-wide
// feed, or every session's own stream) and reports over IPC once every connection is ready, then
// once it has seen `turns` turn.ended frames in all: the frames it counted, the time from the
// first to the last, and the latency of the stamped deltas (`@<ms>;`, the wall-clock time the
// mock wrote them) it sampled. Byte scanning with a small carry between reads, no JSON parsing:
// what the bench should measure is the daemon, not us.
//   argv: <turns> <url>…
import http from 'node:http';

const [turnsArg, ...urls] = process.argv.slice(2);
const turns = Number(turnsArg);
const FRAME = Buffer.from('\nid: ');
const STAMP = Buffer.from('"delta":"@');
const END = Buffer.from('"type":"turn.ended"');
const CARRY = 64;
const latencies = [];
let frames = 0;
let ended = 0;
let firstAt = 0;
let lastAt = 0;
let ready = 0;
let sample = 0;

const now = () => performance.timeOrigin + performance.now();

function count(buf, pattern, from) {
  let n = 0;
  for (let at = buf.indexOf(pattern, from); at >= 0; at = buf.indexOf(pattern, at + pattern.length)) n++;
  return n;
}

for (const url of urls) {
  http.get(url, { headers: { accept: 'text/event-stream', ...(process.env.BENCH_TOKEN ? { authorization: `Bearer ${process.env.BENCH_TOKEN}` } : {}) }, agent: false }, (res) => {
    if (++ready === urls.length) process.send({ ready: true });
    let carry = Buffer.alloc(0);
    res.on('data', (chunk) => {
      const t = now();
      const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      const skip = Math.max(0, carry.length - FRAME.length + 1);
      const n = count(buf, FRAME, skip);
      if (n > 0) {
        if (!firstAt) firstAt = t;
        lastAt = t;
        frames += n;
      }
      ended += count(buf, END, Math.max(0, carry.length - END.length + 1));
      // One stamped delta in 50 is enough for the percentiles.
      for (let at = buf.indexOf(STAMP, skip); at >= 0; at = buf.indexOf(STAMP, at + 1)) {
        if (sample++ % 50 !== 0) continue;
        const end = buf.indexOf(0x3b, at);
        if (end > 0) latencies.push(t - Number(buf.toString('latin1', at + STAMP.length, end)));
      }
      carry = buf.subarray(Math.max(0, buf.length - CARRY));
      if (ended >= turns) {
        process.send({ frames, seconds: (lastAt - firstAt) / 1000, latencies });
        process.exit(0);
      }
    });
  }).on('error', (err) => process.send({ error: err.message }));
}
