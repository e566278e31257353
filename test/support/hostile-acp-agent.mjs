#!/usr/bin/env node
// A hostile ACP agent for test/daemon/hostile-agent.test.ts (docs/security.md, "Planted files and
// hostile agents"): a well-formed ACP agent (JSON-RPC 2.0, one object per line on stdio) whose
// turns attack the daemon. The first word of the prompt picks the attack:
//
//   usage <tokens>     ends the turn with that many input tokens (`1e300`, `1e999` = Infinity)
//   collide            asks a permission under the JSON-RPC id "budget_1" (the daemon's own
//                      first budget id) and reports which option it was given
//   deep <levels>      a session/update whose _meta nests that deep, then a normal reply
//   huge <mb>          one line of that many MB without a newline inside (over --max-line-chars)
//   flood <n>          n message chunks as fast as stdout takes them
//   control            text full of control characters, lone surrogates and U+2028
//   outside            a tool call whose locations and diff name files outside the workspace
//   hello (default)    one message echoing the prompt
import { createInterface } from 'node:readline';

let nextRequest = 1;
/** @type {Map<string | number, (message: any) => void>} */
const waiting = new Map();
/** @param {Record<string, unknown>} message */
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
/** Written as is: for what JSON.stringify would never produce (Infinity, nesting past its stack). */
const sendRaw = (/** @type {string} */ line) => new Promise((r) => (process.stdout.write(line + '\n') ? r(undefined) : process.stdout.once('drain', r)));
/** @param {string} sid @param {string} t */
const say = (sid, t) => send({ method: 'session/update', params: { sessionId: sid, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: t } } } });
/** @param {string | number} id @param {string} method @param {unknown} params @returns {Promise<any>} */
const ask = (id, method, params) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ id, method, params });
  });

/** @param {string} sid @param {string[]} words @returns {Promise<string | undefined>} the raw usage JSON of the answer */
async function attack(sid, words) {
  const [what, arg] = words;
  switch (what) {
    case 'usage':
      say(sid, 'Spent a lot.');
      return `{"inputTokens":${arg ?? '1e300'},"outputTokens":1,"totalTokens":${arg ?? '1e300'}}`;
    case 'collide': {
      const toolCall = { toolCallId: `call-${nextRequest++}`, title: 'Run `true`', kind: 'execute', rawInput: { command: 'true' } };
      const options = [{ optionId: 'yes', name: 'Allow', kind: 'allow_once' }, { optionId: 'no', name: 'Reject', kind: 'reject_once' }];
      const { result } = await ask('budget_1', 'session/request_permission', { sessionId: sid, toolCall, options });
      say(sid, `Permission answered: ${result?.outcome?.optionId ?? result?.outcome?.outcome}.`);
      return undefined;
    }
    case 'deep': {
      const levels = Number(arg ?? 200000);
      const update = `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"deep"},"_meta":${'['.repeat(levels)}${']'.repeat(levels)}}`;
      await sendRaw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sid)},"update":${update}}}`);
      say(sid, 'Sent a deep frame.');
      return undefined;
    }
    case 'huge': {
      const mb = Number(arg ?? 4);
      for (let i = 0; i < mb; i++) await new Promise((r) => (process.stdout.write('x'.repeat(1024 * 1024)) ? r(undefined) : process.stdout.once('drain', r)));
      await sendRaw('');
      say(sid, 'Sent a huge line.');
      return undefined;
    }
    case 'flood': {
      const n = Number(arg ?? 20000);
      for (let i = 0; i < n; i++) {
        const line = JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: sid, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '.' } } } });
        if (!process.stdout.write(line + '\n')) await new Promise((r) => process.stdout.once('drain', r));
      }
      return undefined;
    }
    case 'control':
      say(sid, 'nul \u0000 bel \u0007 esc \u001b[31m red \u001b]0;title\u0007 bs \b cr \r lsep \u2028 psep \u2029 lone \ud800 end');
      return undefined;
    case 'outside': {
      const path = '/etc/passwd';
      const tool = { sessionUpdate: 'tool_call', toolCallId: 'out-1', title: 'Edit /etc/passwd', kind: 'edit', status: 'completed', locations: [{ path }, { path: '../../../../root/.ssh/id_rsa' }] };
      send({ method: 'session/update', params: { sessionId: sid, update: { ...tool, content: [{ type: 'diff', path, oldText: 'root:x:0:0', newText: 'root::0:0' }] } } });
      say(sid, 'Said I edited files outside the workspace.');
      return undefined;
    }
    default:
      say(sid, `You said: ${words.join(' ')}`);
      return undefined;
  }
}

/** @param {unknown} id @param {any} params */
async function prompt(id, params) {
  const sid = params.sessionId;
  const text = params.prompt.filter((/** @type {any} */ b) => b.type === 'text').map((/** @type {any} */ b) => b.text).join(' ');
  const usage = await attack(sid, text.trim().split(/\s+/));
  await sendRaw(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"stopReason":"end_turn"${usage ? `,"usage":${usage}` : ''}}}`);
}

/** @param {any} msg */
function handle(msg) {
  if (msg.id !== undefined && msg.method === undefined) {
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
    return;
  }
  const { id, method, params } = msg;
  switch (method) {
    case 'initialize':
      return send({ id, result: { protocolVersion: 1, agentCapabilities: { loadSession: false }, agentInfo: { name: 'hostile-acp-agent', version: '1.0.0' }, authMethods: [] } });
    case 'session/new':
      return send({ id, result: { sessionId: `hostile-${process.pid}` } });
    case 'session/prompt':
      return void prompt(id, params);
    case 'session/cancel':
      return;
    default:
      if (id !== undefined) send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (line.trim()) handle(JSON.parse(line));
});
