// A reader process for the bench: opens SSE connections to one session and reports, over IPC,
// when every connection is ready and what each one measured. Runs apart from the daemon so the
// readers do not share its event loop. Connections are raw sockets scanned for the stamped delta
// (no HTTP parser, no string building): what the bench should measure is the daemon, not us.
//   argv: <url> <connections> <mode: fanout|throughput|replay> [events]
// fanout: each connection reports the first stamped delta it gets. throughput: one report per turn.
// replay: one connection counts frames and reports once it has `events` of them (a stored history
// read from offset 0, many turns long).
import net from 'node:net';

const [url, countArg, mode, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg ?? Infinity);
const count = Number(countArg);
const { hostname, port, pathname, search } = new URL(url);
const request = `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n${process.env.BENCH_TOKEN ? `Authorization: Bearer ${process.env.BENCH_TOKEN}\r\n` : ''}\r\n`;
const STAMP = Buffer.from('"delta":"@');
const FRAME = Buffer.from('\nid: ');
const END = Buffer.from('"type":"turn.ended"');
const latencies = [];
let ready = 0;
let done = 0;
let events = 0;
let firstAt = 0;
let lastAt = 0;

const now = () => performance.timeOrigin + performance.now();

/** The number `<digits>[.<digits>]` in `chunk` from `start` up to `end`, read without making a string. */
function numberAt(chunk, start, end) {
  let value = 0;
  let scale = 0;
  for (let i = start; i < end; i++) {
    const c = chunk[i];
    if (c === 46 /* . */) scale = 1;
    else {
      value = value * 10 + (c - 48);
      if (scale) scale *= 10;
    }
  }
  return scale ? value / scale : value;
}

/** Every stamp in a chunk (throughput mode); a stamp split across chunks is skipped, not misread. */
function stampsIn(chunk, at, into) {
  for (let i = chunk.indexOf(STAMP); i >= 0; i = chunk.indexOf(STAMP, i + 1)) {
    const end = chunk.indexOf(59 /* ; */, i);
    if (end > 0) into.push(at - numberAt(chunk, i + STAMP.length, end));
  }
}

/** Matches of `pattern` in a chunk, counting one split across the previous chunk's end too. */
function countAcross(pattern, previous, chunk) {
  let n = 0;
  for (let i = chunk.indexOf(pattern); i >= 0; i = chunk.indexOf(pattern, i + 1)) n++;
  if (previous) {
    // Only the seam, a few bytes each side: no copy of the whole chunk per read.
    const k = pattern.length - 1;
    const seam = Buffer.concat([previous.subarray(Math.max(0, previous.length - k)), chunk.subarray(0, k)]);
    if (seam.includes(pattern)) n++;
  }
  return n;
}

function open() {
  const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write(request));
  let headers = true;
  let finished = false;
  let previous = Buffer.alloc(1, 10); // a newline, so the first frame ("id: …") is counted too
  socket.on('data', (chunk) => {
    const at = now();
    if (headers) {
      const end = chunk.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!chunk.toString('latin1', 0, 12).includes(' 200')) {
        process.send({ error: `reader got ${chunk.toString('latin1', 0, 40)}` });
        return;
      }
      headers = false;
      if (++ready === count) process.send({ ready: true });
      chunk = chunk.subarray(end + 4);
      if (chunk.length === 0) return;
    }
    if (finished) return;
    if (mode === 'fanout') {
      const i = chunk.indexOf(STAMP);
      if (i < 0) return;
      const end = chunk.indexOf(59, i);
      latencies.push(at - numberAt(chunk, i + STAMP.length, end));
      finished = true;
      if (++done === count) report();
      return;
    }
    events += countAcross(FRAME, previous, chunk);
    if (mode === 'replay') {
      previous = chunk;
      if (!firstAt) firstAt = at;
      lastAt = at;
      if (events >= expected) {
        finished = true;
        report();
      }
      return;
    }
    const ended = countAcross(END, previous, chunk) > 0;
    previous = chunk;
    if (!firstAt) firstAt = at;
    lastAt = at;
    stampsIn(chunk, at, latencies);
    if (ended) {
      // One report per turn; the reader stays connected for the next (a warm-up turn comes first).
      report();
      latencies.length = 0;
      events = 0;
      firstAt = 0;
    }
  });
  socket.on('error', (err) => process.send({ error: String(err) }));
}

function report() {
  process.send({ latencies, events, seconds: (lastAt - firstAt) / 1000 });
}

for (let i = 0; i < count; i++) open();
process.on('message', (m) => m === 'exit' && process.exit(0));
