// The OpenCode converter: every golden fixture of test/agents/opencode/fixtures/ (made from the real
// recorded `opencode serve` transcripts by from-recorded.mjs) replayed through the converter
// directly, here and only here (test/agents/golden.test.ts checks that the registry's driver has
// this converter and leaves the replay to this file), plus structural checks of what the replays
// must show, and unit tests of the events the recordings do not cover (abort, session.error,
// questions, tool errors).
// UPDATE_GOLDEN=1 rewrites the expected <scenario>.events.json (review the diff!).
import { describe, expect, it } from 'vitest';
import { opencodeCapabilities } from '../../../src/agents/opencode/capabilities.js';
import { ALWAYS_KEPT, IGNORED, LOCATION, MCP_SERVERS, opencodeConverter, RESUMED, type OpencodeState } from '../../../src/agents/opencode/convert.js';
import { mcpConfig } from '../../../src/agents/opencode/config.js';
import { modelsOf, modesOf } from '../../../src/agents/opencode/offerings.js';
import type { Draft } from '../../../src/agents/types.js';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { goldenFixtures } from '../../support/golden-replay.js';
import { convertLines } from '../../support/convert-lines.js';

const driver = { id: 'opencode' as const, capabilities: opencodeCapabilities, converter: opencodeConverter };
const { replayCase, itReplaysEach } = goldenFixtures(driver, new URL('./fixtures/', import.meta.url).pathname);

type Completed = Extract<UniversalEvent, { type: 'item.completed' }>;
const completions = (events: UniversalEvent[]) => events.filter((e): e is Completed => e.type === 'item.completed');
const textOf = (e: Completed | undefined) => (e?.data.item.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

describe('opencode golden fixtures (converter + normalizer + log)', () => {
  itReplaysEach(checkShape);

  it('streamed-text: reasoning streams into its own item, the answer into the message', () => {
    const events = replayCase('streamed-text');
    const done = completions(events);
    const reasoning = done.find((e) => e.data.item.content.some((p) => p.type === 'reasoning'))!;
    expect(reasoning.data.item.content).toEqual([{ type: 'reasoning', text: 'A short answer will do.', visibility: 'public' }]);
    const message = done.find((e) => e.data.item.role === 'assistant' && textOf(e) !== '')!;
    expect(textOf(message)).toBe('Here is a longer answer that arrives in several pieces, so the stream has many deltas to show.');
    const deltas = events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === message.data.item.item_id ? [e.data.delta] : []));
    expect(deltas).toHaveLength(3);
    expect(deltas.join('')).toBe(textOf(message));
    expect(reasoning.data.item.parent_id).toBe(message.data.item.item_id);
  });

  it('shell: the command, its streamed output and exit code, parented to its message', () => {
    const events = replayCase('shell');
    const call = completions(events).find((e) => e.data.item.kind === 'tool_call')!;
    const result = completions(events).find((e) => e.data.item.kind === 'tool_result')!;
    expect(call.data.item.content[0]).toEqual({ type: 'tool_call', name: 'bash', arguments: JSON.stringify({ command: 'echo hello-from-shell' }), call_id: '<call-1>' });
    expect(result.data.item.content).toEqual([
      { type: 'tool_result', call_id: '<call-1>', output: 'hello-from-shell\n' },
      { type: 'status', label: 'completed', detail: 'exit code 0' },
    ]);
    expect(result.data.item.parent_id).toBe(call.data.item.parent_id);
    const streamed = events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === result.data.item.item_id ? [e.data.delta] : []));
    expect(streamed).toEqual(['hello-from-shell\n']);
  });

  it('write-file: a file_ref with the new file as a diff', () => {
    const done = completions(replayCase('write-file'));
    // The call completes when it runs, with the path as the model gave it; the result has OpenCode's absolute path.
    expect(done.find((e) => e.data.item.kind === 'tool_call')!.data.item.content[1]).toMatchObject({ type: 'file_ref', path: 'hello.txt', action: 'write' });
    const result = done.find((e) => e.data.item.kind === 'tool_result')!;
    expect(result.data.item.content[1]).toEqual({ type: 'file_ref', path: '<work>/hello.txt', action: 'write', diff: '--- /dev/null\n+++ b/<work>/hello.txt\n@@ -0,0 +1 @@\n+hello file\n' });
  });

  it('permission: asked and replied become requested and resolved (approved), from the agent', () => {
    const events = replayCase('permission');
    const requested = events.find((e) => e.type === 'permission.requested')!;
    const resolved = events.find((e) => e.type === 'permission.resolved')!;
    expect(requested).toMatchObject({ source: 'agent', data: { permission_id: '<per-1>', action: 'edit', status: 'requested' } });
    expect(resolved).toMatchObject({ source: 'agent', data: { permission_id: '<per-1>', action: 'edit', status: 'approved', metadata: { reply: 'once' } } });
  });

  it('model-error: the retry is a status item and the turn still answers', () => {
    const done = completions(replayCase('model-error'));
    expect(done.find((e) => e.data.item.kind === 'status')!.data.item.content).toEqual([{ type: 'status', label: 'retry', detail: 'attempt 1: fake upstream failure' }]);
    expect(textOf(done.find((e) => e.data.item.role === 'assistant' && textOf(e) !== ''))).toBe('Hello after a retry.');
  });
});

function checkShape(name: string, events: UniversalEvent[]): void {
  expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  expect(events.filter((e) => e.type === 'session.started')).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'session.started', source: 'agent', native_session_id: '<ses-1>' });
  const turns = events.filter((e) => e.type === 'turn.started').length;
  expect(turns).toBeGreaterThan(0);
  expect(events.filter((e) => e.type === 'turn.ended')).toHaveLength(turns);
  // One user message per turn (the daemon's), and nothing happens outside a turn (summaries after it).
  expect(completions(events).filter((e) => e.data.item.role === 'user')).toHaveLength(turns);
  let open = false;
  const started = new Set<string>();
  const done = new Set<string>();
  for (const e of events) {
    if (e.type === 'turn.started') open = true;
    if (e.type === 'turn.ended') open = false;
    if (e.type.startsWith('item.')) expect(open, `${e.type} outside a turn in ${name}`).toBe(true);
    if (e.type === 'item.started') started.add(e.data.item.item_id);
    if (e.type === 'item.delta') {
      expect(started.has(e.data.item_id), `delta before start in ${name}`).toBe(true);
      expect(done.has(e.data.item_id), `delta after completion in ${name}`).toBe(false);
    }
    if (e.type === 'item.completed') {
      expect(started.has(e.data.item.item_id), `completion without start in ${name}`).toBe(true);
      expect(e.data.item.status, `${name}: ${JSON.stringify(e.data.item)}`).toBe('completed');
      done.add(e.data.item.item_id);
    }
  }
  expect([...started].filter((id) => !done.has(id)), `items left open in ${name}`).toEqual([]);
}

// ---- unit tests: exact drafts for what the recordings do not show ---------------------------------

function run(natives: unknown[], state?: OpencodeState): { state: OpencodeState; events: Draft[] } {
  return convertLines(opencodeConverter, natives, state);
}
const ev = (type: string, properties: Record<string, unknown>) => ({ id: 'evt_1', type, properties });
const S = 'ses_1';
const assistant = (id: string, extra: Record<string, unknown> = {}) => ev('message.updated', { sessionID: S, info: { id, role: 'assistant', sessionID: S, time: { created: 1 }, ...extra } });
const part = (p: Record<string, unknown>) => ev('message.part.updated', { sessionID: S, part: { sessionID: S, messageID: 'msg_a', ...p }, time: 1 });

describe('opencode converter units', () => {
  it('abort: MessageAbortedError is no error; the open message fails and the turn ends interrupted', () => {
    const { events } = run([
      assistant('msg_a'),
      part({ id: 'prt_t', type: 'text', text: '', time: { start: 1 } }),
      ev('message.part.delta', { sessionID: S, messageID: 'msg_a', partID: 'prt_t', field: 'text', delta: 'Half' }),
      ev('session.error', { sessionID: S, error: { name: 'MessageAbortedError', data: { message: 'Aborted' } } }),
      ev('session.idle', { sessionID: S }),
    ]);
    expect(events.slice(-2)).toEqual([
      { type: 'item.completed', item: { key: 'msg_a', native_item_id: 'msg_a', kind: 'message', role: 'assistant', content: [{ type: 'text', text: 'Half' }], status: 'failed' } },
      { type: 'turn.ended', data: { metadata: { reason: 'interrupted' } } },
    ]);
  });

  it('session.error: an error event with the name as code', () => {
    const busy = ev('session.status', { sessionID: S, status: { type: 'busy' } });
    const { events } = run([busy, ev('session.error', { sessionID: S, error: { name: 'APIError', data: { message: 'bad request', statusCode: 400, isRetryable: false } } })]);
    expect(events).toEqual([{ type: 'error', data: { message: 'bad request', code: 'opencode_APIError', details: { name: 'APIError', message: 'bad request', statusCode: 400, isRetryable: false } } }]);
  });

  it('session.error before the server went busy (a refused prompt) also ends the turn; after busy, idle does', () => {
    const refused = run([ev('session.error', { sessionID: S, error: { name: 'UnknownError', data: { message: 'Agent not found' } } })]).events;
    expect(refused.map((d) => d.type)).toEqual(['error', 'turn.ended']);
    expect(refused[1]).toEqual({ type: 'turn.ended', data: { metadata: { reason: 'error' } } });
    const running = run([ev('session.status', { sessionID: S, status: { type: 'busy' } }), ev('session.error', { sessionID: S, error: { name: 'APIError', data: { message: 'x' } } })]).events;
    expect(running.map((d) => d.type)).toEqual(['error']);
  });

  it('a session.error during a running turn: the open message fails and the turn ends with reason error', () => {
    const { events } = run([
      ev('session.status', { sessionID: S, status: { type: 'busy' } }),
      assistant('msg_a'),
      ev('session.error', { sessionID: S, error: { name: 'APIError', data: { message: 'gave up' } } }),
      ev('session.idle', { sessionID: S }),
    ]);
    expect(events.slice(-2)).toEqual([
      { type: 'item.completed', item: { key: 'msg_a', native_item_id: 'msg_a', kind: 'message', role: 'assistant', content: [], status: 'failed' } },
      { type: 'turn.ended', data: { metadata: { reason: 'error' } } },
    ]);
  });

  it('a resumed session starts from the GET /session answer the driver hands on', () => {
    const { events } = run([ev(RESUMED, { sessionID: S, info: { id: S, directory: '/w', version: '1.18.33', title: 'Old' } })]);
    expect(events).toEqual([{ type: 'session.started', native_session_id: S, data: { metadata: { directory: '/w', version: '1.18.33', title: 'Old', resumed: true } } }]);
  });

  it('a part before its message opens the message first (the ordering rule)', () => {
    const { events } = run([ev('message.part.delta', { sessionID: S, messageID: 'msg_a', partID: 'prt_t', field: 'text', delta: 'Hi' })]);
    expect(events).toEqual([{ type: 'item.delta', key: 'msg_a', native_item_id: 'msg_a', delta: 'Hi', stub: { kind: 'message', role: 'assistant' } }]);
    const started = run([part({ id: 'prt_t', type: 'text', text: '' })]).events;
    expect(started[0]).toMatchObject({ type: 'item.started', item: { key: 'msg_a', kind: 'message', role: 'assistant' } });
  });

  it('a tool that fails: its result item fails with the error text', () => {
    const { events } = run([
      assistant('msg_a'),
      part({ id: 'prt_w', type: 'tool', tool: 'write', callID: 'call_1', state: { status: 'error', input: { filePath: 'x' }, error: 'The user rejected permission', time: { start: 1, end: 2 } } }),
    ]);
    expect(events.at(-1)).toEqual({
      type: 'item.completed',
      item: { key: 'result:prt_w', native_item_id: null, parent_key: 'msg_a', kind: 'tool_result', role: 'tool', content: [{ type: 'tool_result', call_id: 'call_1', output: 'The user rejected permission' }], status: 'failed' },
    });
  });

  it('images: a read of a picture (its attachments) and an image file part become image parts; other files file_ref', () => {
    const png = { mime: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=', filename: 'shot.png' };
    const { events } = run([
      assistant('msg_a'),
      part({ id: 'prt_r', type: 'tool', tool: 'read', callID: 'call_1', state: { status: 'completed', input: { filePath: '/w/shot.png' }, output: 'Image read successfully', title: 'shot.png', metadata: {}, time: { start: 1, end: 2 }, attachments: [{ id: 'prt_x', sessionID: S, messageID: 'msg_a', type: 'file', ...png }] } }),
      part({ id: 'prt_f', type: 'file', mime: 'image/jpeg', url: 'file:///w/out.jpg', source: { path: '/w/out.jpg' } }),
      part({ id: 'prt_g', type: 'file', mime: 'text/plain', url: 'file:///w/notes.txt', filename: 'notes.txt' }),
      part({ id: 'prt_end', type: 'step-finish' }),
    ]);
    const result = events.find((e) => e.type === 'item.completed' && e.item.kind === 'tool_result');
    expect(result).toEqual({
      type: 'item.completed',
      item: {
        key: 'result:prt_r', native_item_id: null, parent_key: 'msg_a', kind: 'tool_result', role: 'tool', status: 'completed',
        content: [
          { type: 'tool_result', call_id: 'call_1', output: 'Image read successfully' },
          { type: 'image', path: 'shot.png', mime: 'image/png' },
          { type: 'status', label: 'completed', detail: 'shot.png' },
        ],
      },
    });
    const message = events.filter((e) => e.type === 'item.completed' && e.item.kind === 'message').at(-1);
    expect(message?.type === 'item.completed' ? message.item.content : []).toEqual([
      { type: 'image', path: '/w/out.jpg', mime: 'image/jpeg' },
      { type: 'file_ref', path: 'notes.txt', action: 'read' },
    ]);
    expect(events.some((e) => e.type === 'agent.unparsed')).toBe(false);
  });

  it("MCP tools: named by the driver's server list, a call carries {mcp_server, tool}; other tools do not", () => {
    const { events } = run([
      ev(MCP_SERVERS, { servers: ['my.probe'] }),
      assistant('msg_a'),
      part({ id: 'prt_m', type: 'tool', tool: 'my_probe_echo', callID: 'call_1', state: { status: 'running', input: { text: 'ping' }, time: { start: 1 } } }),
      part({ id: 'prt_b', type: 'tool', tool: 'bash', callID: 'call_2', state: { status: 'running', input: { command: 'ls' }, time: { start: 1 } } }),
    ]);
    const calls = events.flatMap((e) => (e.type === 'item.completed' && e.item.kind === 'tool_call' ? [e.item.content] : []));
    expect(calls).toEqual([
      [{ type: 'tool_call', name: 'my_probe_echo', arguments: '{"text":"ping"}', call_id: 'call_1' }, { type: 'json', json: { mcp_server: 'my.probe', tool: 'echo' } }],
      [{ type: 'tool_call', name: 'bash', arguments: '{"command":"ls"}', call_id: 'call_2' }],
    ]);
    expect(run([ev(MCP_SERVERS, { servers: 'probe' })]).events[0]).toMatchObject({ type: 'agent.unparsed' });
  });

  it('MCP servers in the common shape become OpenCode local/remote servers; OpenCode-shaped ones pass as given', () => {
    expect(mcpConfig({
      a: { command: 'node', args: ['s.mjs'], env: { K: 'v' } },
      b: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'x' } },
      c: { type: 'local', command: ['x'], enabled: false },
    })).toEqual({
      a: { type: 'local', command: ['node', 's.mjs'], environment: { K: 'v' }, enabled: true },
      b: { type: 'remote', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'x' }, enabled: true },
      c: { type: 'local', command: ['x'], enabled: false },
    });
  });

  it('questions: asked, replied and rejected', () => {
    const asked = ev('question.asked', { id: 'que_1', sessionID: S, questions: [{ question: 'Which colour?', header: 'Colour', options: [{ label: 'red', description: '' }, { label: 'blue', description: '' }] }] });
    const replied = run([asked, ev('question.replied', { sessionID: S, requestID: 'que_1', answers: [['blue']] })]).events;
    expect(replied).toEqual([
      { type: 'question.requested', data: { question_id: 'que_1', prompt: 'Which colour?', options: ['red', 'blue'], status: 'requested' } },
      { type: 'question.resolved', data: { question_id: 'que_1', prompt: 'Which colour?', options: ['red', 'blue'], status: 'answered', response: 'blue' } },
    ]);
    const rejected = run([asked, ev('question.rejected', { sessionID: S, requestID: 'que_1' })]).events;
    expect(rejected[1]).toEqual({ type: 'question.resolved', data: { question_id: 'que_1', prompt: 'Which colour?', options: ['red', 'blue'], status: 'rejected' } });
  });

  it("an always the driver kept (shared server, OpenCode told once) still resolves as always; others as OpenCode says", () => {
    const asked = ev('permission.asked', { id: 'per_1', sessionID: S, permission: 'bash', patterns: ['echo one'], always: ['echo *'], metadata: {} });
    const once = ev('permission.replied', { sessionID: S, requestID: 'per_1', reply: 'once' });
    const kept = run([asked, { type: ALWAYS_KEPT, properties: { requestID: 'per_1' } }, once]).events;
    expect(kept).toHaveLength(2);
    expect(kept[1]).toMatchObject({ type: 'permission.resolved', data: { permission_id: 'per_1', status: 'approved', metadata: { reply: 'always', always_kept_by: 'agentwire' } } });
    const plain = run([asked, once]).events;
    expect(plain[1]).toMatchObject({ type: 'permission.resolved', data: { metadata: { reply: 'once' } } });
    expect(plain[1]!.type === 'permission.resolved' && plain[1]!.data.metadata).not.toHaveProperty('always_kept_by');
    // Kept for a request the converter never saw (or already settled): nothing, never unparsed.
    expect(run([{ type: ALWAYS_KEPT, properties: { requestID: 'per_9' } }]).events).toEqual([]);
  });

  it('ignored types produce nothing; unknown or malformed ones are agent.unparsed', () => {
    for (const type of Object.keys(IGNORED)) expect(run([ev(type, {})]).events).toEqual([]);
    expect(run([ev('session.next.text.delta', {})]).events).toEqual([]);
    for (const bad of ['not json', ev('brand.new', {}), ev('session.status', { sessionID: S }), { nothing: true }]) {
      const [draft] = run([bad]).events;
      expect(draft).toMatchObject({ type: 'agent.unparsed', source: 'daemon', synthetic: true, data: { location: LOCATION } });
    }
  });

  it('every event type of the pinned OpenAPI document (GET /doc, 1.18.33) is converted or ignored, never unparsed', () => {
    // The `Event` union's types, less the 32 experimental session.next.* ones (ignored by prefix).
    const documented = (
      'models-dev.refreshed integration.updated integration.connection.updated catalog.updated session.created session.updated ' +
      'session.deleted message.updated message.removed message.part.updated message.part.removed message.part.delta session.diff ' +
      'session.error installation.updated installation.update-available file.edited reference.updated permission.v2.asked ' +
      'permission.v2.replied plugin.added project.directories.updated file.watcher.updated pty.created pty.updated pty.exited ' +
      'pty.deleted question.v2.asked question.v2.replied question.v2.rejected todo.updated lsp.updated permission.asked ' +
      'permission.replied tui.prompt.append tui.command.execute tui.toast.show tui.session.select mcp.tools.changed ' +
      'mcp.browser.open.failed command.executed project.updated session.status session.idle question.asked question.replied ' +
      'question.rejected session.compacted vcs.branch.updated workspace.ready workspace.failed workspace.status worktree.ready ' +
      'worktree.failed server.connected global.disposed server.instance.disposed'
    ).split(' ');
    const converted = new Set(['session.created', 'session.deleted', 'message.updated', 'message.part.updated', 'message.part.delta', 'session.status', 'session.idle', 'session.error', 'permission.asked', 'permission.replied', 'question.asked', 'question.replied', 'question.rejected']);
    expect(documented.filter((t) => !converted.has(t) && !Object.hasOwn(IGNORED, t))).toEqual([]);
  });

  it('models and modes from the server answers', () => {
    const providers = { providers: [{ id: 'fake', models: { 'fake-model': { name: 'Fake model', variants: { high: {} } } } }], default: { fake: 'fake-model' } };
    expect(modelsOf(providers)).toEqual({ models: [{ id: 'fake/fake-model', name: 'Fake model', variants: ['high'] }], defaultModel: 'fake/fake-model' });
    const agents = [
      { name: 'build', mode: 'primary', description: 'Default.' },
      { name: 'general', mode: 'subagent' },
      { name: 'compaction', mode: 'primary', hidden: true },
      { name: 'mine', mode: 'all' },
    ];
    expect(modesOf(agents)).toEqual([
      { id: 'build', name: 'build', description: 'Default.' },
      { id: 'mine', name: 'mine', description: '' },
    ]);
  });
});
