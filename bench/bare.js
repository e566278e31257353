// The baseline the daemon is measured against: a bare Node HTTP server (node:http, nothing loaded)
// that prints the same "listening at" line the daemon logs, so bench/daemon.js's startDaemon can
// start it. By default it answers every request with a small JSON body (cold start, idle RSS).
// Given a JSON file (argv[2]) of answers keyed by "METHOD /path" (the query left out), it answers
// each such request with exactly the bytes the daemon gave (status, content type, body), reading
// the request's body first: the `requests` section compares the two per route.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const DEFAULT = { status: 200, type: 'application/json', body: '{"status":"ok"}' };
const answers = new Map(Object.entries(process.argv[2] ? JSON.parse(readFileSync(process.argv[2], 'utf8')) : {}));

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const answer = answers.get(`${req.method} ${q < 0 ? req.url : req.url.slice(0, q)}`) ?? DEFAULT;
  req.resume();
  req.on('end', () => {
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
process.on('SIGTERM', () => server.close(() => process.exit(0)));
