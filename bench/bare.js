// The baseline the daemon's cold start and idle RSS are measured against: a bare Node HTTP server
// (node:http, nothing loaded) that answers every request with a small JSON body and prints the
// same "listening at" line the daemon logs, so bench/daemon.js's startDaemon can start it.
import http from 'node:http';

const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"status":"ok"}');
});
server.listen(0, '127.0.0.1', () => console.log(`listening at http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
