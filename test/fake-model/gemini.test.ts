// The fake model's Gemini API, checked on the wire with requests shaped like Gemini CLI's: data-only
// SSE frames of whole GenerateContentResponses, thought parts, function calls onto the offered
// tools, the turn index from `contents`, errors with RetryInfo and retry headers, countTokens.
import { describe, expect, it } from 'vitest';
import type { FakeModel } from './server.js';
import { geminiHeaders, geminiRequest, geminiUser } from './cli-requests.js';
import { parseSse, post, useFakeModel } from './helpers.js';

const start = useFakeModel();
const MODEL = 'gemini-2.5-flash';
const stream = (f: FakeModel, body: unknown) => post(`${f.url}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, body, geminiHeaders);

/** The chunks of a stream; asserts data-only frames. */
async function chunks(f: FakeModel, body: unknown): Promise<any[]> {
  const r = await stream(f, body);
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const frames = parseSse(r.text);
  expect(frames.every((fr) => fr.event === undefined)).toBe(true);
  return frames.map((fr) => JSON.parse(fr.data));
}
const parts = (cs: any[]) => cs.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);

describe('Gemini API: streamGenerateContent', () => {
  it('streams text and thoughts as parts; the last chunk has finishReason and full usage', async () => {
    const f = await start([[{ thinking: 'Short answer.' }, { text: 'Hello from the fake Gemini model.' }]]);
    const cs = await chunks(f, geminiRequest([geminiUser('hi')]));
    const ps = parts(cs);
    expect(ps.filter((p) => p.thought).map((p) => p.text).join('')).toBe('Short answer.');
    const text = ps.filter((p) => !p.thought).map((p) => p.text);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('Hello from the fake Gemini model.');
    for (const c of cs) {
      expect(c).toMatchObject({ modelVersion: MODEL, responseId: cs[0].responseId });
      expect(c.candidates[0]).toMatchObject({ content: { role: 'model' }, index: 0 });
    }
    expect(cs.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const last = cs.at(-1);
    expect(last.candidates[0].finishReason).toBe('STOP');
    const u = last.usageMetadata;
    expect(u.thoughtsTokenCount).toBeGreaterThan(0);
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount + u.thoughtsTokenCount);
    expect(f.requests[0]).toMatchObject({ path: `/v1beta/models/${MODEL}:streamGenerateContent`, query: '?alt=sse', status: 200, turn: 0 });
    expect(f.requests[0]!.headers['x-goog-api-key']).toBe('[redacted]');
  });

  it('maps shell and write steps onto run_shell_command and write_file, whole functionCall parts', async () => {
    const f = await start([[{ text: 'Running it.' }, { tool: 'shell', command: 'echo hi' }, { tool: 'write', path: 'a.txt', content: 'a\n' }]]);
    const ps = parts(await chunks(f, geminiRequest([geminiUser('go')])));
    const calls = ps.filter((p) => p.functionCall);
    expect(calls.map((p) => p.functionCall)).toEqual([
      { name: 'run_shell_command', args: { command: 'echo hi', description: 'Run echo hi' } },
      { name: 'write_file', args: { file_path: 'a.txt', content: 'a\n' } },
    ]);
    // The first call carries a thought signature, as the real models send one.
    expect(calls[0].thoughtSignature).toEqual(expect.any(String));
    expect(calls[1].thoughtSignature).toBeUndefined();
  });

  it('takes the turn from the model contents; function responses do not start a turn', async () => {
    const f = await start([[{ tool: 'shell', command: 'ls' }], [{ text: 'second' }], [{ text: 'third' }]]);
    const history = [
      geminiUser('go'),
      { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'ls' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: '' } } }] },
    ];
    expect(parts(await chunks(f, geminiRequest(history))).map((p) => p.text).join('')).toBe('second');
    const more = [...history, { role: 'model', parts: [{ text: 'second' }] }, geminiUser('again')];
    expect(parts(await chunks(f, geminiRequest(more))).map((p) => p.text).join('')).toBe('third');
    expect(f.requests.map((r) => r.turn)).toEqual([1, 2]);
  });

  it('answers a request without tools (routing, next-speaker checks) with the fixed text', async () => {
    const f = await start([[{ text: 'scenario text' }]]);
    const r = await post(`${f.url}/v1beta/models/${MODEL}:generateContent`, { contents: [geminiUser('classify')] }, geminiHeaders);
    expect(r.status).toBe(200);
    expect(r.json().candidates[0]).toMatchObject({ content: { parts: [{ text: 'Fake model session' }], role: 'model' }, finishReason: 'STOP' });
    expect(f.requests[0]!.toolless).toBe(true);
  });
});

describe('Gemini API: generateContent, countTokens, errors', () => {
  it('generateContent answers one JSON response with merged text parts', async () => {
    const f = await start([[{ thinking: 'hm' }, { text: 'one two three four' }]]);
    const r = await post(`${f.url}/v1beta/models/${MODEL}:generateContent`, geminiRequest([geminiUser('hi')]), geminiHeaders);
    expect(r.status).toBe(200);
    expect(r.json().candidates[0].content.parts).toEqual([{ text: 'hm', thought: true }, { text: 'one two three four' }]);
  });

  it('countTokens answers totalTokens', async () => {
    const f = await start([[{ text: 'x' }]]);
    const r = await post(`${f.url}/v1beta/models/${MODEL}:countTokens`, { contents: [geminiUser('count me')] }, geminiHeaders);
    expect(r.json()).toEqual({ totalTokens: expect.any(Number) });
  });

  it('a 429 carries RetryInfo and retry headers; the retry gets the turn', async () => {
    const f = await start([[{ error: 429, retryAfterMs: 1500, times: 1 }, { text: 'back' }]]);
    const r = await stream(f, geminiRequest([geminiUser('hi')]));
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.headers.get('retry-after-ms')).toBe('1500');
    expect(r.json()).toEqual({
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }],
      },
    });
    expect(parts(await chunks(f, geminiRequest([geminiUser('hi')]))).map((p) => p.text).join('')).toBe('back');
  });

  it('a 400 without times fails every attempt, with INVALID_ARGUMENT and no details', async () => {
    const f = await start([[{ error: 400, message: 'bad request' }]]);
    for (let i = 0; i < 2; i++) {
      const r = await stream(f, geminiRequest([geminiUser('hi')]));
      expect(r.status).toBe(400);
      expect(r.json().error).toEqual({ code: 400, message: 'bad request', status: 'INVALID_ARGUMENT', details: [] });
    }
  });

  it('an inStream error fails inside a 200 stream after the steps before it', async () => {
    const f = await start([[{ text: 'partial' }, { error: 500, inStream: true, message: 'stream broke' }]]);
    const cs = await chunks(f, geminiRequest([geminiUser('hi')]));
    expect(parts(cs.slice(0, -1)).map((p) => p.text).join('')).toBe('partial');
    expect(cs.at(-1)).toEqual({ error: { code: 500, message: 'stream broke', status: 'INTERNAL', details: [] } });
  });
});
