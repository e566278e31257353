// The baseline the daemon is measured against: a bare Node HTTP server (node:http, nothing loaded)
// that prints the same "listening at" line the daemon logs, so bench/daemon.js's startDaemon can
// start it. By default it answers every request with a small JSON body (cold start, idle RSS).
// Given a JSON file (argv[2]) of answers keyed by "METHOD /path" (the query left out), it answers
// each such request with exactly the bytes the daemon gave (status, content type, body), reading
// the request's body first: the `requests` section compares the two per route.
// An answer with `turn: {started, reply}` is a bare turn, the least I/O a daemon's turn can make:
// the turn's opening frames written to the session's event stream (`GET <session>/events/sse`),
// the message written as one line to the session's child process (`cat`, which hands it straight
// back), the 204, and the reply's frames written to the stream once the child's line is read.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';

const DEFAULT = { status: 200, type: 'application/json', body: '{"status":"ok"}' };
const answers = new Map(Object.entries(process.argv[2] ? JSON.parse(readFileSync(process.argv[2], 'utf8')) : {}));
/** Session path → its event stream and its child. */
const sessions = new Map();

function sessionOf(path) {
  let s = sessions.get(path);
  if (!s) sessions.set(path, (s = { stream: undefined, child: undefined }));
  return s;
}

function turn(path, body, frames) {
  const s = sessionOf(path);
  if (!s.child) {
    s.child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    s.child.stdout.on('data', () => s.stream?.write(frames.reply));
  }
  s.stream?.write(frames.started);
  s.child.stdin.write(`${body}\n`);
}

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (req.method === 'GET' && path.endsWith('/events/sse')) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write('retry: 1000\n\n');
    sessionOf(path.slice(0, -'/events/sse'.length)).stream = res;
    return;
  }
  const answer = answers.get(`${req.method} ${path}`) ?? DEFAULT;
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (answer.turn) turn(path.slice(0, -'/messages'.length), Buffer.concat(chunks).toString(), answer.turn);
    if (answer.status === 204) {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': answer.type });
    res.end(answer.body);
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening at http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => {
  for (const s of sessions.values()) s.child?.kill();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
