#!/usr/bin/env node
// A small ACP agent for the tests (JSON-RPC 2.0, one object per line on stdio), written from the
// protocol's schema: not the mock, not a real model. The prompt's text picks the script (the
// first matching word): see SCRIPTS below. Sessions are kept in $ACP_TEST_STORE (when set) so
// that session/load can replay them in a later process. With $ACP_TEST_FORK set it announces
// sessionCapabilities.fork and answers ACP's session/fork (unstable) with a copy of the session.
//
//   hello (default)  two message chunks echoing the prompt
//   think            thought chunks, then a message
//   permission       an execute tool call that asks (allow_once/allow_always/reject_once/
//                    reject_always); runs `echo hi` when allowed, fails when rejected
//   plan             a plan, then its update
//   diff             an edit tool call with a diff, writing hello.txt in the cwd
//   terminal         an execute tool call streaming output through _meta.terminal_output
//   slow             one chunk, then waits for session/cancel (stopReason cancelled)
//   commands         available_commands_update; future: an update kind from the future
//   garbage          a line that is not JSON, then a normal reply
//   askclient        a fs/read_text_file request; reports the answer it got
//   exit             one chunk, a line on stderr, then exits with code 3 mid-turn
//   fail             the prompt answers a JSON-RPC error
//   blocks           reports the types of the prompt's content blocks
//   mcp              reports the MCP servers session/new was given
//   history          names the earlier prompts of the session (after a session/load too)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const store = process.env.ACP_TEST_STORE;
if (store) mkdirSync(store, { recursive: true });
/** @type {Map<string, {cwd: string, turns: {user: string, agent: string}[], mcp?: unknown}>} */
const sessions = new Map();
let nextRequest = 1000;
/** @type {Map<number, (message: any) => void>} */
const waiting = new Map(); // our request id -> resolve
/** @type {(() => void) | null} */
let cancel = null; // resolves the running prompt's wait on session/cancel

/** @param {Record<string, unknown>} message */
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
/** @param {unknown} id @param {unknown} result */
const answer = (id, result) => send({ id, result });
/** @param {string} sessionId @param {Record<string, unknown>} u */
const update = (sessionId, u) => send({ method: 'session/update', params: { sessionId, update: u } });
/** @param {string} sessionId @param {string} kind @param {string} t */
const text = (sessionId, kind, t) => update(sessionId, { sessionUpdate: kind, content: { type: 'text', text: t } });
/** @param {string} method @param {unknown} params @returns {Promise<any>} */
const ask = (method, params) => new Promise((resolve) => {
  const id = nextRequest++;
  waiting.set(id, resolve);
  send({ id, method, params });
});
const tick = () => new Promise((r) => setTimeout(r, 5));

const MODES = { currentModeId: 'ask', availableModes: [{ id: 'ask', name: 'Ask', description: 'Asks before it acts' }, { id: 'code', name: 'Code' }] };
const MODEL = { id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: 'test-small', options: [{ value: 'test-small', name: 'Small' }, { value: 'test-large', name: 'Large' }] };

/** @param {string} id */
function save(id) {
  if (store) writeFileSync(join(store, `${id}.json`), JSON.stringify(sessions.get(id)));
}
/** @param {string} id */
function load(id) {
  if (sessions.has(id)) return sessions.get(id);
  if (!store) return undefined;
  try {
    const s = JSON.parse(readFileSync(join(store, `${id}.json`), 'utf8'));
    sessions.set(id, s);
    return s;
  } catch {
    return undefined;
  }
}

/** @param {string} sid @param {string} id */
async function toolWithPermission(sid, id) {
  update(sid, { sessionUpdate: 'tool_call', toolCallId: id, title: 'Run `echo hi`', kind: 'execute', status: 'pending', rawInput: { command: 'echo hi' } });
  const options = [
    { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
    { optionId: 'yes-all', name: 'Always allow', kind: 'allow_always' },
    { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    { optionId: 'no-all', name: 'Always reject', kind: 'reject_always' },
  ];
  const { result } = await ask('session/request_permission', { sessionId: sid, toolCall: { toolCallId: id, title: 'Run `echo hi`', kind: 'execute', rawInput: { command: 'echo hi' } }, options });
  const outcome = result?.outcome;
  if (outcome?.outcome === 'cancelled') {
    update(sid, { sessionUpdate: 'tool_call_update', toolCallId: id, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'cancelled' } }] });
    return 'cancelled';
  }
  if (outcome?.optionId === 'yes' || outcome?.optionId === 'yes-all') {
    update(sid, { sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress' });
    update(sid, { sessionUpdate: 'tool_call_update', toolCallId: id, status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'hi' } }], rawOutput: { exitCode: 0 } });
    text(sid, 'agent_message_chunk', `Ran it (${outcome.optionId}).`);
  } else {
    update(sid, { sessionUpdate: 'tool_call_update', toolCallId: id, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: `denied (${outcome?.optionId})` } }] });
    text(sid, 'agent_message_chunk', 'Did not run it.');
  }
  return 'end_turn';
}

/** @param {unknown} id @param {any} params */
async function prompt(id, params) {
  const sid = params.sessionId;
  const session = load(sid);
  if (!session) return send({ id, error: { code: -32602, message: `unknown session ${sid}` } });
  const words = params.prompt.filter((/** @type {any} */ b) => b.type === 'text').map((/** @type {any} */ b) => b.text).join(' ');
  const script = ['think', 'permission', 'plan', 'diff', 'terminal', 'slow', 'commands', 'garbage', 'askclient', 'exit', 'fail', 'blocks', 'history', 'mcp'].find((w) => words.split(/\W+/).includes(w)) ?? 'hello';
  let stop = 'end_turn';
  let reply = `You said: ${words}`;
  switch (script) {
    case 'think':
      text(sid, 'agent_thought_chunk', 'Let me think. ');
      text(sid, 'agent_thought_chunk', 'Done thinking.');
      reply = 'Thought it through.';
      break;
    case 'permission':
      stop = await toolWithPermission(sid, `call-${session.turns.length + 1}`);
      reply = '';
      break;
    case 'plan': {
      const entries = [{ content: 'Read the code', priority: 'high', status: 'in_progress' }, { content: 'Write the fix', priority: 'medium', status: 'pending' }];
      update(sid, { sessionUpdate: 'plan', entries });
      update(sid, { sessionUpdate: 'plan', entries: entries.map((e) => ({ ...e, status: 'completed' })) });
      reply = 'Planned.';
      break;
    }
    case 'diff': {
      const path = join(params.cwd ?? session.cwd, 'hello.txt');
      update(sid, { sessionUpdate: 'tool_call', toolCallId: 'edit-1', title: 'Edit hello.txt', kind: 'edit', status: 'in_progress', locations: [{ path }], content: [{ type: 'diff', path, oldText: 'one\ntwo\n', newText: 'one\nthree\n' }] });
      writeFileSync(path, 'one\nthree\n');
      update(sid, { sessionUpdate: 'tool_call_update', toolCallId: 'edit-1', status: 'completed' });
      reply = 'Edited hello.txt.';
      break;
    }
    case 'terminal':
      update(sid, { sessionUpdate: 'tool_call', toolCallId: 'term-1', title: 'ls', kind: 'execute', status: 'in_progress', rawInput: { command: 'ls' } });
      update(sid, { sessionUpdate: 'tool_call_update', toolCallId: 'term-1', _meta: { terminal_output: { terminal_id: 't1', data: 'a.txt\n' } } });
      update(sid, { sessionUpdate: 'tool_call_update', toolCallId: 'term-1', _meta: { terminal_output: { terminal_id: 't1', data: 'b.txt\n' } } });
      update(sid, { sessionUpdate: 'tool_call_update', toolCallId: 'term-1', status: 'completed', _meta: { terminal_exit: { terminal_id: 't1', exit_code: 0, signal: null } } });
      reply = 'Listed.';
      break;
    case 'slow':
      text(sid, 'agent_message_chunk', 'Working');
      await new Promise((/** @type {(v?: unknown) => void} */ r) => (cancel = () => r()));
      cancel = null;
      session.turns.push({ user: words, agent: 'Working' });
      save(sid);
      return answer(id, { stopReason: 'cancelled' });
    case 'commands':
      update(sid, { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'review', description: 'Review the code' }] });
      update(sid, { sessionUpdate: 'future_thing', detail: 'from a newer protocol' });
      reply = 'Commands listed.';
      break;
    case 'garbage':
      process.stdout.write('this is not json {\n');
      reply = 'Still here.';
      break;
    case 'askclient': {
      const res = await ask('fs/read_text_file', { sessionId: sid, path: '/etc/hostname' });
      reply = res.error ? `fs/read_text_file answered error ${res.error.code}` : 'fs/read_text_file answered a result';
      break;
    }
    case 'exit':
      text(sid, 'agent_message_chunk', 'Going down');
      process.stderr.write('fatal: the test agent exits mid-turn\n');
      await tick();
      process.exit(3);
      break;
    case 'fail':
      return send({ id, error: { code: -32603, message: 'the model exploded' } });
    case 'mcp':
      reply = `mcp: ${JSON.stringify(session.mcp)}`;
      break;
    case 'history':
      reply = `I remember: ${session.turns.map((/** @type {{user: string}} */ t) => t.user).join(' | ')}`;
      break;
    case 'blocks':
      reply = `blocks: ${params.prompt.map((/** @type {any} */ b) => b.type).join(',')}`;
      break;
  }
  if (reply) {
    // Two chunks, so deltas are real.
    const half = Math.ceil(reply.length / 2);
    text(sid, 'agent_message_chunk', reply.slice(0, half));
    await tick();
    text(sid, 'agent_message_chunk', reply.slice(half));
  }
  session.turns.push({ user: words, agent: reply });
  save(sid);
  answer(id, { stopReason: stop });
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
      return answer(id, {
        protocolVersion: 1,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, embeddedContext: true },
          mcpCapabilities: { http: false, sse: false },
          ...(process.env.ACP_TEST_FORK ? { sessionCapabilities: { fork: {} } } : {}),
        },
        agentInfo: { name: 'acp-test-agent', version: '1.0.0' },
        authMethods: [],
      });
    case 'session/new': {
      const sid = `acp-${process.pid}-${sessions.size + 1}`;
      sessions.set(sid, { cwd: params.cwd, turns: [], mcp: params.mcpServers });
      save(sid);
      return answer(id, { sessionId: sid, modes: MODES, configOptions: [MODEL] });
    }
    case 'session/load': {
      const session = load(params.sessionId);
      if (!session) return send({ id, error: { code: -32002, message: `no session ${params.sessionId}` } });
      for (const t of session.turns) {
        text(params.sessionId, 'user_message_chunk', t.user);
        text(params.sessionId, 'agent_message_chunk', t.agent);
      }
      return answer(id, { modes: MODES, configOptions: [MODEL] });
    }
    case 'session/fork': {
      const parent = process.env.ACP_TEST_FORK ? load(params.sessionId) : undefined;
      if (!parent) return send({ id, error: { code: -32002, message: `no session ${params.sessionId}` } });
      const sid = `acp-${process.pid}-${sessions.size + 1}`;
      sessions.set(sid, { cwd: params.cwd, turns: [...parent.turns], mcp: params.mcpServers });
      save(sid);
      return answer(id, { sessionId: sid, modes: MODES, configOptions: [MODEL] });
    }
    case 'session/set_mode':
      update(params.sessionId, { sessionUpdate: 'current_mode_update', currentModeId: params.modeId });
      return answer(id, {});
    case 'session/set_config_option':
      return answer(id, { configOptions: [{ ...MODEL, currentValue: params.value }] });
    case 'session/prompt':
      return void prompt(id, params);
    case 'session/cancel':
      // Pending permission requests are answered `cancelled` by the client.
      return void cancel?.();
    default:
      if (id !== undefined) send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  handle(JSON.parse(line));
});
