// A tiny JSON-RPC peer for test/unit/agents/json-rpc.test.ts, shaped like `codex app-server`: one JSON
// object per line, no "jsonrpc" field, its own request ids starting at 0 like ours.
//   echo {…}   answers with the params        fail      answers with an error
//   silent     never answers                  ask       sends a notification, a malformed line and
//                                                        a server request (id 0); answers `ask` with
//                                                        what the client replied to that request
//   exit       exits with code 3
import { createInterface } from 'node:readline';

/** @param {Record<string, unknown>} m */
const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
let serverId = 0;
const asks = new Map(); // our server-request id -> the client's `ask` request id

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === undefined) {
    // A response to one of our requests.
    const askId = asks.get(m.id);
    asks.delete(m.id);
    send({ id: askId, result: { replied: m.result } });
    return;
  }
  if (m.id === undefined) {
    send({ method: 'seen/notification', params: { method: m.method, params: m.params ?? null } });
    return;
  }
  switch (m.method) {
    case 'echo':
      send({ id: m.id, result: m.params ?? null });
      break;
    case 'fail':
      send({ id: m.id, error: { code: -32600, message: 'it failed on purpose' } });
      break;
    case 'silent':
      break;
    case 'ask': {
      const id = serverId++;
      asks.set(id, m.id);
      send({ method: 'note/added', params: { n: 1 } });
      process.stdout.write('this is {not json\n');
      send({ id, method: 'item/thing/requestApproval', params: { itemId: 'it-1' } });
      break;
    }
    case 'exit':
      process.exit(3);
  }
});
