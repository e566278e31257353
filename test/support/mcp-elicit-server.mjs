// A minimal MCP server over stdio (newline-delimited JSON-RPC 2.0) whose one tool, `pick`, asks the
// user through the client with `elicitation/create` (a form with one enum field, `color`) and
// answers with what came back: `picked: <color>`, or `no answer (<action>)`.
import { createInterface } from 'node:readline';

/** @param {Record<string, unknown>} message */
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
/** Tool calls waiting for the client's answer to our elicitation, by our request id. */
const waiting = new Map();
let nextId = 1000;

createInterface({ input: process.stdin }).on('line', (line) => {
  /** @type {{ id?: number | string, method?: string, params?: any, result?: any, error?: any }} */
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.method === undefined && msg.id !== undefined) {
    // The client's answer to our elicitation/create.
    const callId = waiting.get(msg.id);
    waiting.delete(msg.id);
    const r = msg.result ?? {};
    const text = r.action === 'accept' ? `picked: ${r.content?.color}` : `no answer (${r.action ?? msg.error?.message})`;
    return send({ id: callId, result: { content: [{ type: 'text', text }] } });
  }
  if (msg.id === undefined) return; // notifications
  switch (msg.method) {
    case 'initialize':
      return send({ id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'asker', version: '1.0.0' } } });
    case 'tools/list':
      return send({ id: msg.id, result: { tools: [{ name: 'pick', description: 'Asks the user to pick a color.', inputSchema: { type: 'object', properties: {} } }] } });
    case 'tools/call': {
      const id = nextId++;
      waiting.set(id, msg.id);
      return send({
        id,
        method: 'elicitation/create',
        params: {
          message: 'Which color?',
          requestedSchema: { type: 'object', properties: { color: { type: 'string', title: 'Color', enum: ['red', 'blue'] } }, required: ['color'] },
        },
      });
    }
    default:
      return send({ id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
