// The fake model server as a whole: where it listens, the request log, routing and models, picking
// a scenario, scenario files, pauses and clients that go away mid-stream.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadScenario, startFakeModel } from './server.js';
import { claudeHeaders, claudeRequest, codexHeaders, codexRequest, codexUser, opencodeRequest, userText } from './cli-requests.js';
import { get, post, sseJson, useFakeModel } from './helpers.js';

const start = useFakeModel();

const claudeText = (text: string) =>
  sseJson(text)
    .filter((e) => e.data.delta?.type === 'text_delta')
    .map((e) => e.data.delta.text)
    .join('');

describe('fake model server', () => {
  it('listens on 127.0.0.1 on a free port and serves a health answer at /', async () => {
    const f = await start({ scenario: [] });
    expect(f.url).toBe(`http://127.0.0.1:${f.port}`);
    expect(f.port).toBeGreaterThan(0);
    expect((await get(`${f.url}/`)).json()).toEqual({ ok: true, fake_model: true });
  });

  it('logs every request with method, path, query, redacted headers, parsed body and time', async () => {
    const f = await start({ scenario: [[{ text: 'hi' }]] });
    const before = Date.now();
    const body = claudeRequest([userText('hello')]);
    await post(`${f.url}/v1/messages?beta=true`, body, claudeHeaders);
    await post(`${f.url}/v1/responses`, codexRequest([codexUser('x')]), codexHeaders);
    await get(`${f.url}/nowhere`);
    expect(f.requests).toHaveLength(3);
    const [claude, codex, stray] = f.requests;
    expect(claude).toMatchObject({ method: 'POST', path: '/v1/messages', query: '?beta=true', body, status: 200, scenario: 'default', turn: 0 });
    expect(claude!.at).toBeGreaterThanOrEqual(before);
    expect(claude!.headers['x-api-key']).toBe('[redacted]');
    expect(claude!.headers['anthropic-version']).toBe('2023-06-01');
    expect(JSON.stringify(f.requests)).not.toContain('sk-ant-test-key');
    expect(codex!.headers.authorization).toBe('Bearer [redacted]');
    expect(codex!.headers.originator).toBe('codex_exec');
    expect(JSON.stringify(f.requests)).not.toContain('sk-codex-test-key');
    expect(stray).toMatchObject({ method: 'GET', path: '/nowhere', body: null, status: 404 });
  });

  it('answers unknown routes 404 in the asking client\'s error shape', async () => {
    const f = await start({ scenario: [] });
    const a = await post(`${f.url}/v1/complete`, {}, claudeHeaders);
    expect(a.status).toBe(404);
    expect(a.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const o = await post(`${f.url}/v1/embeddings`, {});
    expect(o.status).toBe(404);
    expect(o.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'unknown_url' } });
  });

  it('rejects a body that is not a JSON object with 400', async () => {
    const f = await start({ scenario: [] });
    const r = await fetch(`${f.url}/v1/chat/completions`, { method: 'POST', body: 'not json' });
    expect(r.status).toBe(400);
    expect(f.requests[0]!.body).toBe('not json');
  });

  it('lists models, OpenAI or Anthropic flavour by the client\'s headers, with or without /v1', async () => {
    const f = await start({ scenario: [], models: ['gpt-5.5', 'fake-model'] });
    for (const path of ['/v1/models', '/models']) {
      expect((await get(`${f.url}${path}`)).json()).toEqual({
        object: 'list',
        data: [
          { id: 'gpt-5.5', object: 'model', created: expect.any(Number), owned_by: 'fake-model' },
          { id: 'fake-model', object: 'model', created: expect.any(Number), owned_by: 'fake-model' },
        ],
      });
    }
    const a = (await get(`${f.url}/v1/models`, claudeHeaders)).json();
    expect(a).toMatchObject({ has_more: false, data: expect.arrayContaining([expect.objectContaining({ type: 'model' })]) });
    expect(a.first_id).toBe(a.data[0].id);
  });

  it('accepts the OpenAI routes without the /v1 prefix too', async () => {
    const f = await start({ scenario: [[{ text: 'no prefix' }]] });
    const r = await post(`${f.url}/chat/completions`, opencodeRequest([{ role: 'user', content: 'hi' }], { stream: false }));
    expect(r.json().choices[0].message.content).toBe('no prefix');
  });

  it('picks a scenario by header, by a [scenario:NAME] marker in the prompt, else the default', async () => {
    const f = await start({
      scenario: [[{ text: 'from default' }]],
      scenarios: { shell: [[{ text: 'from shell' }]], write: [[{ text: 'from write' }]] },
    });
    const ask = async (prompt: string, headers: Record<string, string> = {}) =>
      claudeText((await post(`${f.url}/v1/messages`, claudeRequest([userText(prompt)]), { ...claudeHeaders, ...headers })).text);
    expect(await ask('hi', { 'x-fake-scenario': 'write' })).toBe('from write');
    expect(await ask('[scenario:shell] please run it')).toBe('from shell');
    expect(await ask('plain')).toBe('from default');
    expect(await ask('[scenario:unknown] x')).toBe('from default');
    expect(f.requests.map((r) => r.scenario)).toEqual(['write', 'shell', 'default', 'default']);
  });

  it('answers "done" when no scenario matches at all', async () => {
    const f = await start({ scenarios: { a: [[{ text: 'A' }]], b: [[{ text: 'B' }]] }, doneText: 'nothing to do' });
    const r = await post(`${f.url}/v1/messages`, claudeRequest([userText('hi')]), claudeHeaders);
    expect(claudeText(r.text)).toBe('nothing to do');
  });

  it('loads scenario files (an array of turns, or {turns}) and rejects malformed steps', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-model-'));
    try {
      writeFileSync(join(dir, 'a.json'), JSON.stringify([[{ text: 'x' }], { tool: 'shell', command: 'ls' }]));
      expect(loadScenario(join(dir, 'a.json'))).toEqual([[{ text: 'x' }], [{ tool: 'shell', command: 'ls' }]]);
      writeFileSync(join(dir, 'b.json'), JSON.stringify({ turns: [[{ error: 529, times: 1 }, { text: 'ok' }]] }));
      expect(loadScenario(join(dir, 'b.json'))).toHaveLength(1);
      writeFileSync(join(dir, 'c.json'), JSON.stringify([[{ tool: 'shell' }]]));
      expect(() => loadScenario(join(dir, 'c.json'))).toThrow(/turn 0 step 0 is not a step/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads gzip-encoded request bodies', async () => {
    const f = await start({ scenario: [[{ text: 'unzipped' }]] });
    const body = gzipSync(JSON.stringify(opencodeRequest([{ role: 'user', content: 'hi' }], { stream: false })));
    const r = await fetch(`${f.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(((await r.json()) as any).choices[0].message.content).toBe('unzipped');
  });

  it('gives the same ids for the same seed', async () => {
    const run = async () => {
      const f = await startFakeModel({ scenario: [[{ tool: 'shell', command: 'ls' }]], seed: 7 });
      const r = await post(`${f.url}/v1/messages`, claudeRequest([userText('x')], { stream: false }), claudeHeaders);
      await f.close();
      return r.json().content[0].id as string;
    };
    expect(await run()).toBe(await run());
  });

  it('pauses mid-stream on sleepMs, and survives a client that goes away during the pause', async () => {
    const f = await start({ scenario: [[{ text: 'before' }, { sleepMs: 300 }, { text: 'after' }]] });
    const t0 = Date.now();
    const r = await post(`${f.url}/v1/messages`, claudeRequest([userText('x')]), claudeHeaders);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(sseJson(r.text).filter((e) => e.event === 'content_block_start')).toHaveLength(2);

    // Abort after the first bytes arrive: the server stops writing and keeps serving.
    await new Promise<void>((resolve) => {
      const req = request(`${f.url}/v1/messages`, { method: 'POST', headers: { ...claudeHeaders, 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify(claudeRequest([userText('x')])));
    });
    await new Promise((r) => setTimeout(r, 400));
    const again = await post(`${f.url}/v1/messages`, claudeRequest([userText('x')], { stream: false }), claudeHeaders);
    expect(again.json().content.map((c: any) => c.text)).toEqual(['before', 'after']);
  });

  it('closes even with a keep-alive connection open', async () => {
    const f = await startFakeModel({ scenario: [] });
    const agentReq = await fetch(`${f.url}/`, { keepalive: true });
    await agentReq.text();
    await f.close();
    await expect(fetch(`${f.url}/`)).rejects.toThrow();
  });

  it('prints one line per request when asked to log', async () => {
    const lines: string[] = [];
    const f = await start({ scenario: [[{ text: 'x' }]], log: (l) => lines.push(l) });
    await post(`${f.url}/v1/messages`, claudeRequest([userText('x')]), claudeHeaders);
    await post(`${f.url}/v1/messages`, claudeRequest([userText('x')], { tools: [] }), claudeHeaders);
    await new Promise((r) => setTimeout(r, 20));
    expect(lines).toEqual(['POST /v1/messages -> 200 default#0', 'POST /v1/messages -> 200 toolless']);
  });
});
