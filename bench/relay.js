// The machine's floor for added latency: the same mock agent and the same reader as the daemon's
// paced measurement, with the daemon replaced by a relay that does next to nothing (no parsing,
// no log, no schema): each stamped chunk line becomes one small SSE frame, the mock's `done`
// becomes a frame the reader takes for turn.ended, and each stdout read leaves in one write.
// What the daemon adds beyond this is its own cost; this part is three processes on two cores.
// Every connected reader gets every frame (one Buffer written to each socket), so the same relay
// is the fan-out's floor too (`fanout_floor_<N>_p99_ms`): 5,000 sockets written by a process that
// does nothing else.
// Runs as a forked child: reports {port} over IPC, then takes {prompt} messages.
import net from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MOCK = fileURLToPath(new URL('../dist/agents/mock/program.js', import.meta.url));
const mock = spawn(process.execPath, [MOCK, '--model', 'mock-1', '--mode', 'default'], { stdio: ['pipe', 'pipe', 'inherit'] });
const STAMP = /"chunk":"(@[\d.]+;)"/;
/** The readers that sent their request, in the order they did. */
const sockets = new Set();
let pending = '';
let sequence = 0;

mock.stdout.setEncoding('utf8').on('data', (chunk) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop();
  if (sockets.size === 0) return;
  let out = '';
  for (const line of lines) {
    const stamp = STAMP.exec(line);
    if (stamp && line.startsWith('{"type":"text"')) out += `id: ${++sequence}\ndata: {"delta":"${stamp[1]}"}\n\n`;
    else if (line.startsWith('{"type":"done"')) out += `id: ${++sequence}\ndata: {"type":"turn.ended"}\n\n`;
  }
  if (!out) return;
  const frame = Buffer.from(out);
  for (const s of sockets) s.write(frame);
});

const server = net.createServer((s) => {
  s.setNoDelay(true);
  s.on('close', () => sockets.delete(s));
  s.on('error', () => sockets.delete(s));
  s.once('data', () => {
    sockets.add(s);
    s.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n');
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
const exit = () => {
  mock.kill();
  process.exit(0);
};
process.on('message', (m) => {
  if (m.prompt) mock.stdin.write(`${JSON.stringify({ type: 'prompt', text: m.prompt, attachments: [] })}\n`);
  if (m === 'exit') exit();
});
process.on('disconnect', exit); // the bench is gone: leave nothing running
