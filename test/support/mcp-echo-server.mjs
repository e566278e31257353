// A minimal MCP server over stdio (newline-delimited JSON-RPC 2.0) with one tool, `echo`, for the
// end-to-end test of MCP tool calls. It answers initialize, tools/list and tools/call only.
import { createInterface } from 'node:readline';

/** @param {Record<string, unknown>} message */
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  /** @type {{ id?: number | string, method?: string, params?: any }} */
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return; // notifications
  switch (msg.method) {
    case 'initialize':
      return send({ id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1.0.0' } } });
    case 'tools/list':
      return send({
        id: msg.id,
        result: { tools: [{ name: 'echo', description: 'Echoes its text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] },
      });
    case 'tools/call':
      return send({ id: msg.id, result: { content: [{ type: 'text', text: `echo: ${msg.params?.arguments?.text ?? ''}` }] } });
    default:
      return send({ id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
  }
});
