// The fake model's OpenAI Chat Completions API, checked on the wire with requests shaped like
// OpenCode's (@ai-sdk/openai-compatible): chunk sequences, tool_calls split across chunks, the
// usage chunk, [DONE], errors with retry-after-ms, turn index from history, titles.
import { describe, expect, it } from 'vitest';
import type { FakeModel } from './server.js';
import { opencodeHeaders, opencodeRequest } from './cli-requests.js';
import { parseSse, post, useFakeModel } from './helpers.js';

const start = useFakeModel();

const completions = (f: FakeModel, body: unknown) => post(`${f.url}/v1/chat/completions`, body, opencodeHeaders);

/** Chunks of a stream; asserts the framing: data-only frames, `[DONE]` last. */
async function chunks(f: FakeModel, body: unknown): Promise<any[]> {
  const r = await completions(f, body);
  expect(r.status).toBe(200);
  const frames = parseSse(r.text);
  expect(frames.every((fr) => fr.event === undefined)).toBe(true);
  expect(frames.at(-1)!.data).toBe('[DONE]');
  return frames.slice(0, -1).map((fr) => JSON.parse(fr.data));
}

/** Rebuilds the assistant message from the chunks, as the AI SDK does. */
function assemble(cs: any[]) {
  let content = '';
  let reasoning = '';
  const calls: any[] = [];
  let finish: string | null = null;
  for (const c of cs) {
    const choice = c.choices[0];
    if (!choice) continue;
    content += choice.delta.content ?? '';
    reasoning += choice.delta.reasoning_content ?? '';
    for (const t of choice.delta.tool_calls ?? []) {
      if (t.id) calls[t.index] = { id: t.id, type: t.type, name: t.function.name, arguments: t.function.arguments };
      else calls[t.index].arguments += t.function.arguments;
    }
    finish = choice.finish_reason ?? finish;
  }
  return { content, reasoning, calls: calls.map((c) => ({ ...c, arguments: JSON.parse(c.arguments) })), finish };
}

describe('Chat Completions: streaming', () => {
  it('streams a text turn: role chunk, content deltas, finish chunk, usage chunk, [DONE]', async () => {
    const f = await start([[{ text: 'Hello from the fake model.' }]]);
    const cs = await chunks(f, opencodeRequest([{ role: 'user', content: 'hi' }]));
    const id = cs[0].id;
    expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    for (const c of cs) expect(c).toMatchObject({ id, object: 'chat.completion.chunk', model: 'fake-model', created: expect.any(Number) });
    expect(cs[0].choices).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
    const middle = cs.slice(1, -2);
    expect(middle.length).toBeGreaterThan(1);
    for (const c of middle) expect(Object.keys(c.choices[0].delta)).toEqual(['content']);
    expect(cs.at(-2).choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
    // include_usage: every chunk has `usage: null` but the last, which has no choices.
    expect(cs.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(cs.at(-1).choices).toEqual([]);
    expect(cs.at(-1).usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(cs.at(-1).usage.total_tokens).toBe(cs.at(-1).usage.prompt_tokens + cs.at(-1).usage.completion_tokens);
    expect(assemble(cs)).toMatchObject({ content: 'Hello from the fake model.', finish: 'stop' });
  });

  it('sends no usage chunk without stream_options.include_usage', async () => {
    const f = await start([[{ text: 'Hi.' }]]);
    const cs = await chunks(f, opencodeRequest([{ role: 'user', content: 'hi' }], { stream_options: undefined }));
    expect(cs.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('maps shell and write steps onto bash {command} and write {filePath, content}', async () => {
    const f = await start([[{ tool: 'shell', command: 'ls', description: 'List files' }, { tool: 'write', path: '/tmp/w/a.txt', content: 'A\n' }]]);
    const cs = await chunks(f, opencodeRequest([{ role: 'user', content: 'go' }]));
    // The role rides on the first tool-call delta (content null), so no empty text part appears.
    expect(cs[0].choices[0].delta).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ index: 0, type: 'function' }] });
    const first = cs[0].choices[0].delta.tool_calls[0];
    expect(first).toEqual({ index: 0, id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'function', function: { name: 'bash', arguments: '' } });
    const argChunks = cs.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 0 && !c.choices[0].delta.tool_calls[0].id);
    expect(argChunks.length).toBeGreaterThan(1);
    expect(argChunks.every((c) => Object.keys(c.choices[0].delta.tool_calls[0]).join() === 'index,function')).toBe(true);
    const m = assemble(cs);
    expect(m.finish).toBe('tool_calls');
    expect(m.content).toBe('');
    expect(m.calls).toEqual([
      // OpenCode's bash schema has no `description` property, so none is sent (Claude's Bash has one).
      { id: first.id, type: 'function', name: 'bash', arguments: { command: 'ls' } },
      { id: expect.stringMatching(/^call_/), type: 'function', name: 'write', arguments: { filePath: '/tmp/w/a.txt', content: 'A\n' } },
    ]);
  });

  it('streams thinking as reasoning_content deltas', async () => {
    const f = await start([[{ thinking: 'Let me think about it.' }, { text: 'Done thinking.' }]]);
    const m = assemble(await chunks(f, opencodeRequest([{ role: 'user', content: 'hi' }])));
    expect(m).toMatchObject({ reasoning: 'Let me think about it.', content: 'Done thinking.', finish: 'stop' });
  });

  it('takes the turn from assistant messages in the history; a retry gets the same turn', async () => {
    const f = await start([[{ tool: 'shell', command: 'date' }], [{ text: 'It is today.' }]]);
    const first = opencodeRequest([{ role: 'user', content: 'what date?' }]);
    const a = assemble(await chunks(f, first));
    const again = assemble(await chunks(f, first));
    expect(again.calls[0].arguments).toEqual(a.calls[0].arguments);
    const call = a.calls[0];
    const history = [
      { role: 'user', content: 'what date?' },
      { role: 'assistant', content: '', tool_calls: [{ id: call.id, type: 'function', function: { name: 'bash', arguments: JSON.stringify(call.arguments) } }] },
      { role: 'tool', tool_call_id: call.id, content: 'Mon' },
    ];
    expect(assemble(await chunks(f, opencodeRequest(history))).content).toBe('It is today.');
    expect(f.requests.map((r) => r.turn)).toEqual([0, 0, 1]);
  });

  it('answers a title request (no tools) with fixed text, without using a turn', async () => {
    const f = await start([[{ text: 'real answer' }]]);
    const title = opencodeRequest([{ role: 'user', content: 'Generate a title for this conversation' }], { tools: undefined, tool_choice: undefined });
    expect(assemble(await chunks(f, title)).content).toBe('Fake model session');
    expect(f.requests[0]!.toolless).toBe(true);
    expect(assemble(await chunks(f, opencodeRequest([{ role: 'user', content: 'hi' }]))).content).toBe('real answer');
  });
});

describe('Chat Completions: errors and non-streaming', () => {
  it('answers an HTTP error with retry-after-ms (so OpenCode retries at once), then the turn', async () => {
    const f = await start([[{ error: 503, retryAfterMs: 10, times: 1 }, { text: 'back' }]]);
    const body = opencodeRequest([{ role: 'user', content: 'hi' }]);
    const r = await completions(f, body);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after-ms')).toBe('10');
    expect(r.headers.get('retry-after')).toBe('1');
    expect(r.json()).toEqual({
      error: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null },
    });
    expect(assemble(await chunks(f, body)).content).toBe('back');
  });

  it('sends an error chunk inside the stream for an inStream error', async () => {
    const f = await start([[{ text: 'partial' }, { error: 500, inStream: true, message: 'stream broke' }]]);
    const r = await completions(f, opencodeRequest([{ role: 'user', content: 'hi' }]));
    const frames = parseSse(r.text).map((fr) => JSON.parse(fr.data));
    expect(frames.at(-1)).toEqual({ error: { message: 'stream broke', type: 'server_error', param: null, code: null } });
    expect(assemble(frames.slice(0, -1)).content).toBe('partial');
  });

  it('answers `stream: false` with a chat.completion', async () => {
    const f = await start([[{ text: 'Running it.' }, { tool: 'shell', command: 'pwd' }]]);
    const r = await completions(f, opencodeRequest([{ role: 'user', content: 'hi' }], { stream: false, stream_options: undefined }));
    expect(r.status).toBe(200);
    const c = r.json();
    expect(c).toMatchObject({ object: 'chat.completion', model: 'fake-model', usage: { prompt_tokens: expect.any(Number) } });
    expect(c.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Running it.',
          refusal: null,
          tool_calls: [{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'pwd' }) } }],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
  });
});
