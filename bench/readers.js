// A reader process for the bench: opens SSE connections to one session and reports, over IPC,
// when every connection is ready and what each one measured. Runs apart from the daemon so the
// readers do not share its event loop. Connections are raw sockets scanned for the stamped delta
// (no HTTP parser, no string building): what the bench should measure is the daemon, not us.
//   argv: <url> <connections> <mode: fanout|throughput> [expectEvents]
import net from 'node:net';

const [url, countArg, mode, expectArg] = process.argv.slice(2);
const count = Number(countArg);
const expected = Number(expectArg ?? 0);
const { hostname, port, pathname, search } = new URL(url);
const request = `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`;
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

/** Every stamp in a chunk (throughput mode); a stamp split across chunks is skipped, not misread. */
function stampsIn(chunk, at, into) {
  for (let i = chunk.indexOf(STAMP); i >= 0; i = chunk.indexOf(STAMP, i + 1)) {
    const end = chunk.indexOf(59 /* ; */, i);
    if (end > 0) into.push(at - Number(chunk.toString('latin1', i + STAMP.length, end)));
  }
}

/**
 * Frames in a chunk, counting one split across the previous chunk's end too: the scan covers the
 * previous chunk's last bytes (`carry`), and only matches that end in the new bytes count.
 */
function countFrames(carry, chunk) {
  const text = carry.length ? Buffer.concat([carry, chunk]) : chunk;
  let n = 0;
  for (let i = text.indexOf(FRAME); i >= 0; i = text.indexOf(FRAME, i + 1)) if (i + FRAME.length > carry.length) n++;
  return n;
}

function open() {
  const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write(request));
  let headers = true;
  let finished = false;
  let carry = Buffer.alloc(1, 10); // a newline, so the first frame ("id: …") is counted too
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
      latencies.push(at - Number(chunk.toString('latin1', i + STAMP.length, end)));
      finished = true;
      if (++done === count) report();
      return;
    }
    events += countFrames(carry, chunk);
    const ended = Buffer.concat([carry, chunk]).includes(END);
    carry = chunk.subarray(Math.max(0, chunk.length - END.length));
    if (!firstAt) firstAt = at;
    lastAt = at;
    stampsIn(chunk, at, latencies);
    if (events >= expected || ended) {
      finished = true;
      report();
    }
  });
  socket.on('error', (err) => process.send({ error: String(err) }));
}

function report() {
  process.send({ latencies, events, seconds: (lastAt - firstAt) / 1000 });
}

for (let i = 0; i < count; i++) open();
process.on('message', (m) => m === 'exit' && process.exit(0));
