// The fake model's Anthropic Messages API, checked on the wire with requests shaped like Claude
// Code's: event sequences, tool mapping onto Bash/Write, errors, turn index from history.
import { describe, expect, it } from 'vitest';
import type { FakeModel } from './server.js';
import { claudeHeaders, claudeRequest, userText } from './cli-requests.js';
import { post, sseJson, useFakeModel } from './helpers.js';

const start = useFakeModel();

const messages = (f: FakeModel, body: unknown, headers: Record<string, string> = {}) =>
  post(`${f.url}/v1/messages?beta=true`, body, { ...claudeHeaders, ...headers });

/** Rebuilds the content blocks of a stream the way a client does. */
function assemble(events: { data: any }[]) {
  const blocks: any[] = [];
  for (const { data } of events) {
    if (data.type === 'content_block_start') blocks[data.index] = { ...data.content_block, json: '' };
    if (data.type !== 'content_block_delta') continue;
    const b = blocks[data.index];
    const d = data.delta;
    if (d.type === 'text_delta') b.text += d.text;
    if (d.type === 'thinking_delta') b.thinking += d.thinking;
    if (d.type === 'signature_delta') b.signature += d.signature;
    if (d.type === 'input_json_delta') b.json += d.partial_json;
  }
  return blocks.map(({ json, ...b }) => (b.type === 'tool_use' ? { ...b, input: JSON.parse(json) } : b));
}

describe('Anthropic Messages: streaming', () => {
  it('streams a text turn with the real event sequence', async () => {
    const f = await start([[{ text: 'Hello there, this is the fake model.' }]]);
    const r = await messages(f, claudeRequest([userText('hi')]));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.headers.get('request-id')).toMatch(/^req_01/);
    const events = sseJson(r.text);
    // Every frame names its event, and the name is the data's type.
    for (const e of events) expect(e.event).toBe(e.data.type);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message_start');
    expect(names[1]).toBe('ping');
    expect(names.slice(2, 3)).toEqual(['content_block_start']);
    expect(names.slice(-4)).toEqual(['content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((n) => n === 'content_block_delta').length).toBeGreaterThan(1);

    const opened = events[0]!.data.message;
    expect(opened).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [] });
    expect(opened.id).toMatch(/^msg_01[A-Za-z0-9]{22}$/);
    expect(opened.stop_reason).toBeNull();
    expect(opened.usage.input_tokens).toBeGreaterThan(0);
    expect(events[2]!.data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(assemble(events)).toEqual([{ type: 'text', text: 'Hello there, this is the fake model.' }]);
    const delta = events.at(-2)!.data;
    expect(delta.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams thinking as thinking_delta then one signature_delta, before the text block', async () => {
    const f = await start([[{ thinking: 'The user wants a greeting.' }, { text: 'Hi!' }]]);
    const events = sseJson((await messages(f, claudeRequest([userText('hi')]))).text);
    const blocks = assemble(events);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatchObject({ type: 'thinking', thinking: 'The user wants a greeting.' });
    expect(blocks[0].signature.length).toBeGreaterThan(10);
    expect(blocks[1]).toEqual({ type: 'text', text: 'Hi!' });
    expect(events.find((e) => e.event === 'content_block_start')!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    const deltaTypes = events.filter((e) => e.data.index === 0 && e.event === 'content_block_delta').map((e) => e.data.delta.type);
    expect(deltaTypes.at(-1)).toBe('signature_delta');
    expect(deltaTypes.slice(0, -1).every((t) => t === 'thinking_delta')).toBe(true);
  });

  it('maps a shell step onto Bash and stops with tool_use', async () => {
    const f = await start([[{ text: 'Listing files.' }, { tool: 'shell', command: 'ls -la' }]]);
    const events = sseJson((await messages(f, claudeRequest([userText('list')]))).text);
    const blocks = assemble(events);
    expect(blocks[0]).toEqual({ type: 'text', text: 'Listing files.' });
    expect(blocks[1]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'ls -la', description: 'Run ls -la' } });
    expect(blocks[1].id).toMatch(/^toolu_01[A-Za-z0-9]{22}$/);
    const toolStart = events.find((e) => e.data.content_block?.type === 'tool_use')!.data;
    expect(toolStart).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: blocks[1].id, name: 'Bash', input: {} } });
    const jsonDeltas = events.filter((e) => e.data.delta?.type === 'input_json_delta');
    expect(jsonDeltas.length).toBeGreaterThan(2);
    expect(events.find((e) => e.event === 'message_delta')!.data.delta.stop_reason).toBe('tool_use');
  });

  it('maps a write step onto Write {file_path, content}', async () => {
    const f = await start([[{ tool: 'write', path: '/tmp/work/hello.txt', content: 'hello\n' }]]);
    const blocks = assemble(sseJson((await messages(f, claudeRequest([userText('write')]))).text));
    expect(blocks).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Write', input: { file_path: '/tmp/work/hello.txt', content: 'hello\n' } },
    ]);
  });

  it('falls back to text when the request offers no matching tool', async () => {
    const f = await start([[{ tool: 'shell', command: 'ls' }]]);
    const body = claudeRequest([userText('x')], { tools: [{ name: 'Read', input_schema: { type: 'object', properties: {} } }] });
    const blocks = assemble(sseJson((await messages(f, body)).text));
    expect(blocks).toEqual([{ type: 'text', text: expect.stringContaining('no shell tool is offered (tools: Read)') }]);
  });

  it('takes the turn from the history, so a retry gets the same turn and a resume the next', async () => {
    const f = await start([[{ tool: 'shell', command: 'echo hi' }], [{ text: 'It printed hi.' }], [{ text: 'Second prompt answered.' }]]);
    const first = claudeRequest([userText('run it')]);
    const a = assemble(sseJson((await messages(f, first)).text));
    const again = assemble(sseJson((await messages(f, first)).text));
    expect(again[0].name).toBe('Bash');
    expect(again[0].input).toEqual(a[0].input);

    const history = [
      userText('run it'),
      { role: 'assistant', content: a },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: a[0].id, content: 'hi' }] },
    ];
    expect(assemble(sseJson((await messages(f, claudeRequest(history))).text))).toEqual([{ type: 'text', text: 'It printed hi.' }]);
    const resumed = [...history, { role: 'assistant', content: [{ type: 'text', text: 'It printed hi.' }] }, userText('again')];
    expect(assemble(sseJson((await messages(f, claudeRequest(resumed))).text))[0].text).toBe('Second prompt answered.');
    // Past the end: a short "done".
    const past = [...resumed, { role: 'assistant', content: [{ type: 'text', text: 'x' }] }, userText('more')];
    expect(assemble(sseJson((await messages(f, claudeRequest(past))).text))[0].text).toBe('done');
    expect(f.requests.map((r) => r.turn)).toEqual([0, 0, 1, 2, 3]);
    expect(f.requests.at(-1)!.exhausted).toBe(true);
  });

  it('answers tool-less requests (titles, quota probes) with fixed text, without using a turn', async () => {
    const f = await start([[{ text: 'The real answer.' }]]);
    const title = claudeRequest([userText('Summarise this conversation in a title')], { tools: undefined });
    const t = assemble(sseJson((await messages(f, title)).text));
    expect(t).toEqual([{ type: 'text', text: 'Fake model session' }]);
    expect(f.requests[0]!.toolless).toBe(true);
    expect(assemble(sseJson((await messages(f, claudeRequest([userText('hi')]))).text))[0].text).toBe('The real answer.');
  });
});

describe('Anthropic Messages: errors', () => {
  it('answers 529 overloaded with the error shape and retry headers, then succeeds on the retry', async () => {
    const f = await start([[{ error: 529, retryAfterMs: 1500, times: 1, shouldRetry: true }, { text: 'Recovered.' }]]);
    const body = claudeRequest([userText('hi')]);
    const r = await messages(f, body);
    expect(r.status).toBe(529);
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.headers.get('retry-after-ms')).toBe('1500');
    expect(r.headers.get('x-should-retry')).toBe('true');
    expect(r.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: r.headers.get('request-id'),
    });
    const retry = await messages(f, body);
    expect(retry.status).toBe(200);
    expect(assemble(sseJson(retry.text))).toEqual([{ type: 'text', text: 'Recovered.' }]);
  });

  it('keeps failing without `times`, with the status and message given', async () => {
    const f = await start([[{ error: 500, message: 'boom' }]]);
    for (let i = 0; i < 3; i++) {
      const r = await messages(f, claudeRequest([userText('hi')]));
      expect(r.status).toBe(500);
      expect(r.json().error).toEqual({ type: 'api_error', message: 'boom' });
      expect(r.headers.get('retry-after')).toBeNull();
    }
  });

  it('fails inside the stream with an `error` event after the steps before it', async () => {
    const f = await start([[{ text: 'Starting…' }, { error: 529, inStream: true }]]);
    const events = sseJson((await messages(f, claudeRequest([userText('hi')]))).text);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...events.filter((e) => e.event === 'content_block_delta').map(() => 'content_block_delta'),
      'content_block_stop',
      'error',
    ]);
    expect(events.at(-1)!.data).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });
});

describe('Anthropic Messages: non-streaming and count_tokens', () => {
  it('answers `stream: false` with one Message JSON', async () => {
    const f = await start([[{ thinking: 'hmm' }, { text: 'Running.' }, { tool: 'shell', command: 'pwd' }]]);
    const r = await messages(f, claudeRequest([userText('hi')], { stream: false }));
    expect(r.status).toBe(200);
    const m = r.json();
    expect(m).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'tool_use', stop_sequence: null });
    expect(m.id).toMatch(/^msg_01/);
    expect(m.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: expect.any(String) },
      { type: 'text', text: 'Running.' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_01/), name: 'Bash', input: { command: 'pwd', description: 'Run pwd' } },
    ]);
    expect(m.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
  });

  it('counts tokens', async () => {
    const f = await start([]);
    const r = await post(`${f.url}/v1/messages/count_tokens?beta=true`, claudeRequest([userText('hi')]), claudeHeaders);
    expect(r.status).toBe(200);
    expect(r.json()).toEqual({ input_tokens: expect.any(Number) });
    expect(r.json().input_tokens).toBeGreaterThan(0);
  });
});
