// Load generator process: N keep-alive connections each sending GET requests back to back for
// D seconds; reports requests/s and latency percentiles over IPC.
//   argv: <url> <connections> <seconds>
import http from 'node:http';

const [url, connArg, secArg] = process.argv.slice(2);
const connections = Number(connArg);
const until = performance.now() + Number(secArg) * 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let active = connections;

function loop() {
  if (performance.now() >= until) {
    if (--active === 0) process.send({ latencies, seconds: Number(secArg) });
    return;
  }
  const t = performance.now();
  http
    .get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - t);
        loop();
      });
    })
    .on('error', () => loop());
}

for (let i = 0; i < connections; i++) loop();
process.on('message', (m) => m === 'exit' && process.exit(0));
