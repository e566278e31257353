// @ts-nocheck -- a plain script standing in for a foreign binary; its shapes are the spec's, checked by the tests that read its output.
// A stand-in for the pinned Amp CLI (0.0.1790142911-g7618fb) in headless stream-json mode, written
// from what docs/amp.md ("Amp's headless format") says of the real one: the same argv handling, stdout lines (key order
// included), stderr texts, exit codes, thread ids, `threads continue`, stdin rule, signal handling
// and permission rules (the `delegate` program is run as the real binary runs it). The agent's
// behaviour is scripted by the prompt (the commands are listed in docs/amp.md). Threads live in $AMP_STANDIN_HOME.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

const VERSION = '0.0.1790142911-g7618fb (released 2026-09-23T05:55:11.000Z)';
const TOOLS = ['Bash', 'create_file', 'edit_file', 'finder', 'glob', 'Grep', 'oracle', 'Read', 'read_web_page', 'Task', 'undo_edit', 'web_search'];
const THREAD_ID = /^T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const STDIN_TIMEOUT_MS = Number(process.env.AMP_STANDIN_STDIN_TIMEOUT_MS ?? 30_000);

const out = (obj) => new Promise((r) => (process.stdout.write(JSON.stringify(obj) + '\n') ? r() : process.stdout.once('drain', r)));
function fail(message, suggestion) {
  process.stderr.write(`Error: ${message}${suggestion ? `\n\n${suggestion}` : ''}\n`);
  process.exit(1);
}

// ---- argv (commander semantics for the flags that matter headless) ----------------------------
const argv = process.argv.slice(2);
if (argv[0] === '--version' || argv[0] === '-V') {
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
}
const opts = { execute: false, message: undefined, streamJson: false, thinking: false, input: false, allowAll: false, mode: 'medium', settings: process.env.AMP_SETTINGS_FILE, continueIds: null };
const rest = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = argv[i + 1];
  if (i === 0 && (a === 'threads' || a === 't') && (next === 'continue' || next === 'c')) {
    opts.continueIds = [];
    i++;
  } else if (a === '-x' || a === '--execute') {
    opts.execute = true;
    if (next !== undefined && !next.startsWith('-')) opts.message = (i++, next);
  } else if (a === '--stream-json') opts.streamJson = true;
  else if (a === '--stream-json-thinking') opts.streamJson = opts.thinking = true;
  else if (a === '--stream-json-input') opts.input = true;
  else if (a === '--dangerously-allow-all') opts.allowAll = true;
  else if ((a === '-m' || a === '--mode') && next !== undefined) opts.mode = (i++, next);
  else if (a === '--settings-file' && next !== undefined) opts.settings = (i++, next);
  else if (a.startsWith('-')) fail(`error: unknown option '${a}'`);
  else if (opts.continueIds) opts.continueIds.push(a);
  else rest.push(a);
}
if (opts.streamJson && !opts.execute) fail('The --stream-json flag requires --execute mode', 'Use: amp --execute "your message" --stream-json');
if (opts.input && !opts.streamJson) fail('The --stream-json-input flag requires --stream-json', 'Use: amp --execute --stream-json --stream-json-input');
if (opts.input) fail('the stand-in does not implement --stream-json-input (agentwire runs one process per turn)');
if (!opts.execute || rest.length > 0) {
  fail('User message must be provided through stdin or as argument when using execute mode', 'Either pass a message as an argument: amp --execute "your message"\nOr pipe via stdin: echo "your message" | amp --execute');
}

// ---- credentials: without a key the real CLI starts a login flow on stdout and waits forever ----
if (!process.env.AMP_API_KEY) {
  process.stdout.write('No API key found. Starting login flow…\nOpen https://ampcode.com/auth/cli-login?authToken=standin to log in, then paste the code here: ');
  setInterval(() => {}, 1 << 30);
} else {
  await main();
}

async function readStdin() {
  if (process.stdin.isTTY) return '';
  return new Promise((resolveRead) => {
    let text = '';
    const timer = setTimeout(() => fail('Timeout while reading from stdin'), STDIN_TIMEOUT_MS);
    process.stdin.setEncoding('utf8').on('data', (c) => (text += c)).on('end', () => (clearTimeout(timer), resolveRead(text)));
  });
}

async function main() {
  const stdin = await readStdin();
  let message = opts.message;
  const content = [];
  if (message === undefined) {
    message = stdin.trimEnd();
    if (message === '') fail('User message must be provided through stdin or as argument when using execute mode', 'Either pass a message as an argument: amp --execute "your message"\nOr pipe via stdin: echo "your message" | amp --execute');
  } else if (stdin !== '') content.push({ type: 'text', text: `Input received on stdin:\n\`\`\`\n${stdin}\n\`\`\`` });
  content.push({ type: 'text', text: message });

  const store = process.env.AMP_STANDIN_HOME ?? join(process.env.HOME ?? '/tmp', '.amp-standin');
  mkdirSync(store, { recursive: true });
  let thread;
  if (opts.continueIds) {
    if (opts.continueIds.length !== 1) fail('Execute mode can only resume one thread.');
    const id = opts.continueIds[0].replace(/^https:\/\/ampcode\.com\/threads\//, '');
    if (!THREAD_ID.test(id)) {
      fail(`Invalid thread URL or ID: ${opts.continueIds[0]}`, 'Provide a valid thread URL (e.g., https://ampcode.com/threads/T-12345678-0000-0000-0000-000000000000) or ID (e.g., T-12345678-0000-0000-0000-000000000000)');
    }
    if (!existsSync(join(store, `${id}.json`))) {
      process.stderr.write(`Thread https://ampcode.com/threads/${id} does not exist.\n`);
      process.exit(1);
    }
    thread = id;
  } else thread = `T-${randomUUID()}`;
  // Authentication and the connection to Amp's servers take a moment; until the stream runs,
  // SIGINT/SIGTERM keep their default action (the process dies by the signal, no result).
  await new Promise((r) => setTimeout(r, Number(process.env.AMP_STANDIN_CONNECT_MS ?? 0)));
  const fatal = /^\/fatal (.*)$/m.exec(message);
  if (fatal) fail(fatal[1]); // as an authentication or connection failure: before any stdout line
  const record = existsSync(join(store, `${thread}.json`)) ? JSON.parse(readFileSync(join(store, `${thread}.json`), 'utf8')) : { messages: [] };
  record.messages.push(message);
  writeFileSync(join(store, `${thread}.json`), JSON.stringify(record));
  await run(thread, content, message, record.messages.length);
}

// ---- the turn ----------------------------------------------------------------------------------
async function run(thread, echo, message, turnNumber) {
  const started = Date.now();
  let assistantLines = 0;
  let lastEndTurn = '';
  let finished = false;
  const result = async (error) => {
    if (finished) return;
    finished = true;
    const base = { type: 'result', subtype: error === undefined ? 'success' : 'error_during_execution', duration_ms: Date.now() - started, is_error: error !== undefined, num_turns: assistantLines };
    await out(error === undefined ? { ...base, result: lastEndTurn, session_id: thread } : { ...base, error, session_id: thread });
    process.exit(0);
  };
  const cancel = () => void result('User cancelled (SIGINT/SIGTERM)');
  process.on('SIGINT', cancel);
  process.on('SIGTERM', cancel);

  await out({ type: 'system', subtype: 'init', cwd: process.cwd(), session_id: thread, tools: TOOLS, mcp_servers: [], agent_mode: opts.mode });
  await out({ type: 'user', message: { role: 'user', content: echo }, parent_tool_use_id: null, session_id: thread });
  const assistant = async (blocks) => {
    const content = blocks.filter((b) => opts.thinking || (b.type !== 'thinking' && b.type !== 'redacted_thinking'));
    const tool = content.some((b) => b.type === 'tool_use');
    assistantLines++;
    const usage = { input_tokens: 1200 + 100 * assistantLines, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 20, service_tier: 'standard' };
    await out({ type: 'assistant', message: { type: 'message', role: 'assistant', content, stop_reason: tool ? 'tool_use' : 'end_turn', usage }, parent_tool_use_id: null, session_id: thread });
    if (!tool) lastEndTurn = content.filter((b) => b.type === 'text').map((b) => b.text).join('\n\n');
  };
  const toolResult = (id, content, isError) =>
    out({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] }, parent_tool_use_id: null, session_id: thread });

  const steps = message.split('\n').filter((l) => l.startsWith('/')).map((l) => /^\/(\w+) ?(.*)$/.exec(l)).filter(Boolean);
  if (steps.length === 0) steps.push([null, 'text', `You said: ${message} (message ${turnNumber} in this thread)`]);
  let blocks = [];
  for (const [, verb, arg] of steps) {
    if (verb === 'think') blocks.push({ type: 'thinking', thinking: arg });
    else if (verb === 'text') blocks.push({ type: 'text', text: arg.replaceAll('\\n', '\n') });
    else if (verb === 'sleep') {
      // What was said before a pause is a message of its own (it ends before the pause).
      if (blocks.length) await assistant(blocks);
      blocks = [];
      await new Promise((r) => setTimeout(r, Number(arg)));
    }
    else if (verb === 'error') {
      if (blocks.length) await assistant(blocks);
      return result(arg); // an agent/server error during the run: exit code 0 all the same
    } else if (verb === 'crash') process.exit(Number(arg) || 3);
    else if (verb === 'bash' || verb === 'write' || verb === 'edit') {
      const [name, input] = verb === 'bash' ? ['Bash', { cmd: arg }] : [verb === 'write' ? 'create_file' : 'edit_file', JSON.parse(arg)];
      const id = `toolu_${randomUUID()}`;
      await assistant([...blocks, { type: 'tool_use', id, name, input }]);
      blocks = [];
      const decision = await permission(name, input, thread);
      if (decision.action === 'ask') {
        return result(`The following tools require user approval, which is not supported in stream JSON mode: ${name}`);
      }
      if (decision.action === 'reject') {
        await toolResult(id, `Tool execution rejected by user: ${decision.message || 'User declined permission'}`, true);
        continue;
      }
      const ran = runTool(name, input);
      await toolResult(id, ran.content, ran.error);
    } else blocks.push({ type: 'text', text: `(stand-in: unknown step /${verb})` });
  }
  if (blocks.length === 0) blocks.push({ type: 'text', text: 'Done.' });
  await assistant(blocks);
  await result(undefined);
}

function runTool(name, input) {
  if (name === 'Bash') {
    const r = spawnSync('sh', ['-c', input.cmd], { cwd: input.cwd ?? process.cwd(), encoding: 'utf8' });
    return { content: JSON.stringify({ output: (r.stdout ?? '') + (r.stderr ?? ''), exitCode: r.status ?? 1 }), error: false };
  }
  const path = isAbsolute(input.path) ? input.path : resolve(process.cwd(), input.path);
  try {
    if (name === 'create_file') {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, input.content);
      return { content: `Successfully created file ${path}`, error: false };
    }
    const text = readFileSync(path, 'utf8');
    if (!text.includes(input.old_str)) return { content: `Could not find exact match for old_str in ${path}`, error: true };
    writeFileSync(path, text.replace(input.old_str, input.new_str));
    return { content: JSON.stringify({ diff: `--- ${path}\n+++ ${path}\n-${input.old_str}\n+${input.new_str}\n` }), error: false };
  } catch (err) {
    return { content: err.message, error: true };
  }
}

// ---- permissions: amp.permissions rules (first match wins), then a few built-in rules ------------
function permission(tool, input, thread) {
  if (opts.allowAll) return { action: 'allow' };
  let rules = [];
  if (opts.settings) rules = JSON.parse(readFileSync(opts.settings, 'utf8'))['amp.permissions'] ?? [];
  const rule = rules.find((r) => r.tool === '*' || r.tool.toLowerCase() === tool.toLowerCase());
  if (!rule) {
    const readOnly = tool === 'Bash' && /^(ls|cat|echo|pwd|grep|git (status|diff|log))\b/.test(input.cmd);
    return { action: tool === 'Bash' && !readOnly ? 'ask' : 'allow' };
  }
  if (rule.action !== 'delegate') return { action: rule.action, message: rule.message };
  // As the binary's delegate runner: no arguments, the daemon-side env plus AGENT, AMP_THREAD_ID and
  // AGENT_TOOL_NAME (AGENT_TOOL_USE_ID is not passed on this path), the input JSON on stdin, own group.
  return new Promise((done) => {
    const env = { ...process.env, AGENT: 'amp', AMP_THREAD_ID: thread, AGENT_TOOL_NAME: tool, TERM: 'dumb', NO_COLOR: '1' };
    const child = spawn(rule.to, [], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.stdout.resume();
    child.on('error', (err) => done({ action: 'reject', message: err.message }));
    child.on('close', (code) => done(code === 0 ? { action: 'allow' } : code === 1 ? { action: 'ask' } : { action: 'reject', message: stderr.trim() }));
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(input));
  });
}
