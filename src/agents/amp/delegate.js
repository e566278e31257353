// The program Amp's `delegate` permission rule runs (agentwire ships it; see docs/amp.md). Amp
// spawns it with no arguments, the tool input as JSON on stdin and AGENT_TOOL_NAME / AMP_THREAD_ID
// in its environment, and reads only its exit code: 0 allow, 1 ask, anything else reject (stderr is
// the reason). It asks the session's agentwire listener (a unix socket in a 0700 directory, named,
// with a per-session secret, by the wrapper script the driver writes) and blocks until the user
// has answered through the daemon's permission endpoints. Plain JavaScript: it runs from src/ and
// dist/ alike, with no build step.
import { connect } from 'node:net';

const MAX_INPUT = 8 << 20; // Amp caps a prompt at 1 MiB; a file a tool writes can be larger
const socketPath = process.env.AGENTWIRE_AMP_SOCKET;
const secret = process.env.AGENTWIRE_AMP_SECRET;

/** @param {string} reason */
function reject(reason) {
  process.stderr.write(`${reason}\n`);
  process.exit(2);
}

if (!socketPath || !secret) reject('agentwire delegate: no listener configured');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (input.length > MAX_INPUT) reject('agentwire delegate: tool input too large');
});
process.stdin.on('end', () => {
  /** @type {unknown} */
  let parsed = null;
  try {
    parsed = input.trim() === '' ? {} : JSON.parse(input);
  } catch {
    parsed = { text: input };
  }
  const request = { secret, tool: process.env.AGENT_TOOL_NAME ?? '', thread_id: process.env.AMP_THREAD_ID ?? null, input: parsed };
  const socket = connect(String(socketPath));
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
  socket.on('data', (chunk) => {
    answer += chunk;
    const nl = answer.indexOf('\n');
    if (nl < 0) {
      if (answer.length > 65536) reject('agentwire delegate: answer too long');
      return;
    }
    /** @type {{ allow?: unknown, message?: unknown }} */
    let reply = {};
    try {
      reply = JSON.parse(answer.slice(0, nl));
    } catch {
      reject('agentwire delegate: unreadable answer');
    }
    if (reply.allow === true) process.exit(0);
    reject(typeof reply.message === 'string' ? reply.message : 'Rejected through agentwire.');
  });
  // The session ended, or the daemon went away: never leave Amp waiting, and never allow by default.
  socket.on('error', (err) => reject(`agentwire delegate: ${err.message}`));
  socket.on('close', () => reject('agentwire delegate: the session closed before the user answered'));
});
