// The fake model's OpenAI Responses API, checked on the wire with requests shaped like Codex's:
// event sequences with sequence numbers, exec_command/shell/apply_patch mapping, errors, history.
import { describe, expect, it } from 'vitest';
import type { FakeModel } from './server.js';
import {
  codexApplyPatchFunction,
  codexExecCommand,
  codexHeaders,
  codexRequest,
  codexShell,
  codexShellCommand,
  codexUpdatePlan,
  codexUser,
} from './cli-requests.js';
import { post, sseJson, useFakeModel } from './helpers.js';

const start = useFakeModel();

const responses = (f: FakeModel, body: unknown) => post(`${f.url}/v1/responses`, body, codexHeaders);

async function stream(f: FakeModel, body: unknown) {
  const r = await responses(f, body);
  expect(r.status).toBe(200);
  const events = sseJson(r.text);
  // Framing: every frame has `event:` = data.type; sequence numbers count up from 0; no [DONE].
  events.forEach((e, i) => {
    expect(e.event).toBe(e.data.type);
    expect(e.data.sequence_number).toBe(i);
  });
  return events.map((e) => e.data);
}

/** The items of `response.output_item.done` events, in order. */
const doneItems = (events: any[]) => events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);

describe('OpenAI Responses: streaming', () => {
  it('streams a text turn with the real event sequence', async () => {
    const f = await start([[{ text: 'Hello from the fake model, streamed.' }]]);
    const events = await stream(f, codexRequest([codexUser('hi')]));
    const types = events.map((e) => e.type);
    const deltas = types.filter((t) => t === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas,
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const created = events[0].response;
    expect(created).toMatchObject({ object: 'response', status: 'in_progress', model: 'gpt-5.5', output: [], usage: null });
    expect(created.id).toMatch(/^resp_[0-9a-f]{48}$/);
    const added = events[2];
    expect(added.output_index).toBe(0);
    expect(added.item).toEqual({ id: expect.stringMatching(/^msg_[0-9a-f]{48}$/), type: 'message', status: 'in_progress', content: [], role: 'assistant' });
    const itemId = added.item.id;
    expect(events[3]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    expect(text).toBe('Hello from the fake model, streamed.');
    expect(events.find((e) => e.type === 'response.output_text.done')).toMatchObject({ item_id: itemId, text });
    const item = doneItems(events)[0];
    expect(item).toMatchObject({ id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text }] });
    const completed = events.at(-1).response;
    expect(completed).toMatchObject({ id: created.id, status: 'completed', output: [item] });
    expect(completed.usage).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: expect.any(Number),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: completed.usage.input_tokens + completed.usage.output_tokens,
    });
  });

  it('streams thinking as a reasoning item with summary deltas and encrypted content when asked', async () => {
    const f = await start([[{ thinking: 'Think about the answer first.' }, { text: 'Answer.' }]]);
    const events = await stream(f, codexRequest([codexUser('hi')]));
    const types = events.map((e) => e.type);
    expect(types.slice(2, 5)).toEqual(['response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta']);
    expect(events[2].item).toEqual({ id: expect.stringMatching(/^rs_[0-9a-f]{48}$/), type: 'reasoning', summary: [], encrypted_content: expect.any(String) });
    const summary = events.filter((e) => e.type === 'response.reasoning_summary_text.delta');
    expect(summary.every((e) => e.summary_index === 0 && e.item_id === events[2].item.id)).toBe(true);
    expect(summary.map((e) => e.delta).join('')).toBe('Think about the answer first.');
    expect(types).toContain('response.reasoning_summary_text.done');
    expect(types).toContain('response.reasoning_summary_part.done');
    const [reasoning, message] = doneItems(events);
    expect(reasoning).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think about the answer first.' }] });
    expect(message).toMatchObject({ type: 'message', content: [{ text: 'Answer.' }] });
    expect(events.at(-1).response.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    // Without `include: ['reasoning.encrypted_content']` there is none.
    const plain = await stream(f, codexRequest([codexUser('hi')], undefined, { include: [] }));
    expect(doneItems(plain)[0]).not.toHaveProperty('encrypted_content');
  });

  it('maps a shell step onto exec_command {cmd} with streamed arguments', async () => {
    const f = await start([[{ tool: 'shell', command: 'ls -la /tmp' }]]);
    const events = await stream(f, codexRequest([codexUser('list')]));
    const added = events.find((e) => e.type === 'response.output_item.added');
    expect(added.item).toEqual({
      id: expect.stringMatching(/^fc_[0-9a-f]{48}$/),
      type: 'function_call',
      status: 'in_progress',
      arguments: '',
      call_id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/),
      name: 'exec_command',
    });
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.item_id === added.item.id && d.output_index === 0)).toBe(true);
    const args = deltas.map((d) => d.delta).join('');
    expect(JSON.parse(args)).toEqual({ cmd: 'ls -la /tmp' });
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ item_id: added.item.id, arguments: args });
    expect(doneItems(events)).toEqual([{ ...added.item, status: 'completed', arguments: args }]);
  });

  it('maps a shell step onto the older shell {command: [...]} and shell_command {command}', async () => {
    const f = await start([[{ tool: 'shell', command: 'echo hi' }]]);
    const viaShell = doneItems(await stream(f, codexRequest([codexUser('x')], [codexShell])))[0];
    expect(viaShell.name).toBe('shell');
    expect(JSON.parse(viaShell.arguments)).toEqual({ command: ['bash', '-lc', 'echo hi'] });
    const viaShellCommand = doneItems(await stream(f, codexRequest([codexUser('x')], [codexShellCommand])))[0];
    expect(viaShellCommand.name).toBe('shell_command');
    expect(JSON.parse(viaShellCommand.arguments)).toEqual({ command: 'echo hi' });
  });

  it('maps a write step onto freeform apply_patch with custom tool input deltas', async () => {
    const f = await start([[{ tool: 'write', path: 'notes/hello.txt', content: 'hello\nworld\n' }]]);
    const events = await stream(f, codexRequest([codexUser('write')]));
    const patch = '*** Begin Patch\n*** Add File: notes/hello.txt\n+hello\n+world\n*** End Patch';
    const added = events.find((e) => e.type === 'response.output_item.added').item;
    expect(added).toEqual({
      id: expect.stringMatching(/^ctc_[0-9a-f]{48}$/),
      type: 'custom_tool_call',
      status: 'in_progress',
      call_id: expect.stringMatching(/^call_/),
      name: 'apply_patch',
      input: '',
    });
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.delta).join('')).toBe(patch);
    expect(events.find((e) => e.type === 'response.custom_tool_call_input.done')).toMatchObject({ item_id: added.id, output_index: 0, input: patch });
    expect(doneItems(events)).toEqual([{ ...added, status: 'completed', input: patch }]);
  });

  it('maps a write step onto a function apply_patch {input} when that is what is offered', async () => {
    const f = await start([[{ tool: 'write', path: 'a.txt', content: 'x' }]]);
    const item = doneItems(await stream(f, codexRequest([codexUser('w')], [codexExecCommand, codexApplyPatchFunction])))[0];
    expect(item).toMatchObject({ type: 'function_call', name: 'apply_patch' });
    expect(JSON.parse(item.arguments)).toEqual({ input: '*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch' });
  });

  it('counts turns from input items: a reasoning + call run and its output is one turn', async () => {
    const f = await start([[{ thinking: 'plan' }, { tool: 'shell', command: 'pwd' }], [{ text: 'You are in /tmp/work.' }], [{ text: 'Bye.' }]]);
    const first = codexRequest([codexUser('where am I?')]);
    const a = doneItems(await stream(f, first));
    const retry = doneItems(await stream(f, first));
    expect(retry.map((i) => i.type)).toEqual(['reasoning', 'function_call']);
    expect(JSON.parse(retry[1].arguments)).toEqual(JSON.parse(a[1].arguments));
    // Codex sends back the items (ids stripped) and the call's output.
    const replay = a.map(({ id: _id, status: _s, ...rest }) => rest);
    const output = { type: 'function_call_output', call_id: a[1].call_id, output: '/tmp/work' };
    const second = await stream(f, codexRequest([codexUser('where am I?'), ...replay, output]));
    expect(doneItems(second)[0].content[0].text).toBe('You are in /tmp/work.');
    const third = codexRequest([
      codexUser('where am I?'),
      ...replay,
      output,
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'You are in /tmp/work.' }] },
      codexUser('thanks'),
    ]);
    expect(doneItems(await stream(f, third))[0].content[0].text).toBe('Bye.');
    expect(f.requests.map((r) => r.turn)).toEqual([0, 0, 1, 2]);
  });

  it('continues from previous_response_id when a client chains responses', async () => {
    const f = await start([[{ tool: 'shell', command: 'pwd' }], [{ text: 'chained' }]]);
    const events = await stream(f, codexRequest([codexUser('x')]));
    const id = events.at(-1).response.id;
    const call = doneItems(events)[0];
    const next = await stream(f, { ...codexRequest([]), input: [{ type: 'function_call_output', call_id: call.call_id, output: '/' }], previous_response_id: id });
    expect(doneItems(next)[0].content[0].text).toBe('chained');
  });

  it('answers tool-less requests with fixed text without using a turn', async () => {
    const f = await start([[{ text: 'real' }]]);
    const events = await stream(f, codexRequest([codexUser('title please')], []));
    expect(doneItems(events)[0].content[0].text).toBe('Fake model session');
    expect(f.requests[0]!.toolless).toBe(true);
    expect(doneItems(await stream(f, codexRequest([codexUser('hi')])))[0].content[0].text).toBe('real');
  });
});

describe('OpenAI Responses: errors and non-streaming', () => {
  it('answers an HTTP error with OpenAI error JSON and retry headers, then the turn on retry', async () => {
    const f = await start([[{ error: 500, retryAfterMs: 250, times: 2 }, { text: 'ok now' }]]);
    const body = codexRequest([codexUser('hi')]);
    for (let i = 0; i < 2; i++) {
      const r = await responses(f, body);
      expect(r.status).toBe(500);
      expect(r.headers.get('retry-after-ms')).toBe('250');
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.json()).toEqual({
        error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
      });
    }
    expect(doneItems(await stream(f, body))[0].content[0].text).toBe('ok now');
  });

  it('fails in-stream with response.failed', async () => {
    const f = await start([[{ error: 429, inStream: true, retryAfterMs: 100 }]]);
    const events = await stream(f, codexRequest([codexUser('hi')]));
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.failed']);
    expect(events[2].response).toMatchObject({
      status: 'failed',
      error: { code: 'rate_limit_exceeded', message: 'Rate limit reached for requests. Please try again in 100ms.' },
    });
  });

  it('answers `stream: false` with a completed response object', async () => {
    const f = await start([[{ text: 'Patching.' }, { tool: 'write', path: 'b.txt', content: 'b\n' }]]);
    const r = await responses(f, codexRequest([codexUser('w')], [codexExecCommand, codexUpdatePlan], { stream: false }));
    expect(r.status).toBe(200);
    const resp = r.json();
    expect(resp).toMatchObject({ object: 'response', status: 'completed' });
    // No apply_patch offered: the write step falls back to a text message of its own.
    expect(resp.output.map((i: any) => i.content[0].text)).toEqual([
      'Patching.',
      expect.stringMatching(/^\[fake model\] no write tool is offered \(tools: exec_command, update_plan\)/),
    ]);
  });
});

describe('OpenAI Responses: namespace tools (Codex MCP servers)', () => {
  const namespace = {
    type: 'namespace',
    name: 'mcp__probe',
    description: 'Tools in the mcp__probe namespace.',
    tools: [{ type: 'function', name: 'echo', strict: false, parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }],
  };

  it('a call of `<namespace>__<tool>` is a function_call with the tool name and its namespace', async () => {
    const f = await start([[{ call: 'mcp__probe__echo', input: { text: 'ping' } }]]);
    const events = await stream(f, codexRequest([codexUser('go')], [codexExecCommand, namespace]));
    const [call] = doneItems(events);
    expect(call).toMatchObject({ type: 'function_call', name: 'echo', namespace: 'mcp__probe', arguments: JSON.stringify({ text: 'ping' }) });
  });

  it('an unknown namespaced tool is reported as not offered, listing the flattened names', async () => {
    const f = await start([[{ call: 'mcp__probe__nope', input: {} }]]);
    const events = await stream(f, codexRequest([codexUser('go')], [codexExecCommand, namespace]));
    expect(doneItems(events)[0].content[0].text).toMatch(/^\[fake model\] no mcp__probe__nope tool is offered \(tools: exec_command, mcp__probe__echo\)/);
  });
});

describe('OpenAI Responses: tool_search (Codex deferred MCP tools)', () => {
  const toolSearch = { type: 'tool_search', execution: 'client', description: 'Search deferred tools.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };
  const namespace = { type: 'namespace', name: 'mcp__probe', tools: [{ type: 'function', name: 'echo', parameters: { type: 'object', properties: {} } }] };

  it('a call of `tool_search` is a client-executed tool_search_call', async () => {
    const f = await start([[{ call: 'tool_search', input: { query: 'echo' } }]]);
    const events = await stream(f, codexRequest([codexUser('go')], [codexExecCommand, toolSearch]));
    expect(events.map((e) => e.type).filter((t) => t.startsWith('response.output_item'))).toEqual(['response.output_item.added', 'response.output_item.done']);
    expect(doneItems(events)[0]).toMatchObject({ type: 'tool_search_call', status: 'completed', execution: 'client', arguments: { query: 'echo' }, call_id: expect.any(String) });
  });

  it('the tools a tool_search_output brought are callable in the next turn', async () => {
    const f = await start([[{ call: 'tool_search', input: { query: 'echo' } }], [{ call: 'mcp__probe__echo', input: {} }]]);
    const input = [
      codexUser('go'),
      { type: 'tool_search_call', call_id: 'c1', status: 'completed', execution: 'client', arguments: { query: 'echo' } },
      { type: 'tool_search_output', call_id: 'c1', status: 'completed', execution: 'client', tools: [namespace] },
    ];
    const events = await stream(f, codexRequest(input, [codexExecCommand, toolSearch]));
    expect(doneItems(events)[0]).toMatchObject({ type: 'function_call', name: 'echo', namespace: 'mcp__probe' });
  });
});
