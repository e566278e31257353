// "Run it safely in a sandbox": every malformed request gets a specific 4xx problem+json (never a
// 500, a stack trace or an internal path), and after the whole corpus the daemon is still healthy
// and its sessions are exactly as they were. The rows live in bad-input-corpus.ts.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { CORPUS, type Row } from '../support/bad-input-corpus.js';
import { createMock, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

// Where the daemon's own code lives: no answer may reveal it.
const INTERNAL = new RegExp(`node_modules|file://|${process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

const base = realpathSync(mkdtempSync(join(tmpdir(), 'agentwire-bad-input-')));
let app: App;
const ids: Record<string, string> = {};

function pendingId(events: UniversalEvent[], type: 'permission.requested' | 'question.requested'): string {
  const event = events.find((e) => e.type === type);
  if (event?.type === 'permission.requested') return event.data.permission_id;
  if (event?.type === 'question.requested') return event.data.question_id;
  throw new Error(`no ${type} in ${events.map((e) => e.type).join(', ')}`);
}

beforeAll(async () => {
  app = await makeApp({ config: { bodyLimitBytes: 16 * 1024 }, baseDir: base });
  for (const id of ['live', 'perm', 'quest', 'gone']) await createMock(app, id);
  ids.perm = pendingId(await runTurn(app, 'perm', 'permission'), 'permission.requested');
  ids.question = pendingId(await runTurn(app, 'quest', 'question'), 'question.requested');
  ids.gonePerm = pendingId(await runTurn(app, 'gone', 'permission'), 'permission.requested');
  expect((await post(app, '/v1/sessions/gone/terminate')).statusCode).toBe(204);
});

afterAll(async () => {
  await app?.app.close();
  rmSync(base, { recursive: true, force: true });
});

function inject(row: Row) {
  const url = row.url.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `{${name}}`);
  const body = row.body;
  const payload = body === undefined || typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers = row.headers ?? (payload === undefined ? {} : { 'content-type': 'application/json' });
  return app.app.inject({ method: row.method ?? 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });
}

async function expectRow(row: Row): Promise<void> {
  const res = await inject(row);
  if (row.method === 'HEAD') {
    // No body on a HEAD answer; the status and headers still say it all.
    expect(res.statusCode).toBe(row.expect.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers.allow).toBe(row.expect.allow);
    return;
  }
  const problem = expectProblem(res, row.expect.status, row.expect.code);
  expect(res.body).not.toMatch(INTERNAL);
  if (row.expect.status === 405) expect(res.headers.allow, res.body).toBe(row.expect.allow);
  if (row.expect.errorPath) {
    const paths = (problem.errors as { path: string }[] | undefined)?.map((e) => e.path);
    expect(paths, res.body).toContain(row.expect.errorPath);
  }
}

describe('the bad-input corpus', () => {
  it('has unique row names', () => {
    const names = CORPUS.map((r) => r.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  for (const row of CORPUS) {
    it(row.name, () => expectRow(row));
  }
});

describe('input that looks odd but is valid', () => {
  const echo = async (id: string, text: string, headers?: Record<string, string>, payload?: string | Buffer) => {
    const before = (await getEvents(app, id)).length;
    const res = await app.app.inject({
      method: 'POST',
      url: `/v1/sessions/${id}/messages`,
      headers: headers ?? { 'content-type': 'application/json' },
      payload: payload ?? JSON.stringify({ message: `echo ${text}` }),
    });
    expect(res.statusCode, res.body).toBe(204);
    const events = await waitFor(async () => {
      const all = (await getEvents(app, id)).slice(before);
      return all.some((e) => e.type === 'turn.ended') ? all : undefined;
    });
    const reply = events.find((e) => e.type === 'item.completed' && e.data.item.role === 'assistant');
    return reply?.type === 'item.completed' ? reply.data.item.content : undefined;
  };

  it('keeps unicode, emoji, control characters and lone surrogates intact end to end', async () => {
    await createMock(app, 'unicode');
    for (const text of ['héllo wörld', '😀👩‍👩‍👧 🇫🇷', 'שלום \u202e evil \u202c', 'ﷺ \u0301', 'nul \u0000 bell \u0007', 'lone \ud800 surrogate']) {
      expect(await echo('unicode', text)).toEqual([{ type: 'text', text }]);
    }
  });

  it('accepts JSON content types regardless of case, parameters or a BOM', async () => {
    await createMock(app, 'charset');
    const body = (text: string) => JSON.stringify({ message: `echo ${text}` });
    for (const type of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;', 'Application/Json; charset="UTF-8"']) {
      expect(await echo('charset', type, { 'content-type': type }, body(type))).toEqual([{ type: 'text', text: type }]);
    }
    // The charset parameter is not honoured: a UTF-8 body declared utf-16 is read as UTF-8.
    expect(await echo('charset', 'utf-16', { 'content-type': 'application/json; charset=utf-16' }, body('utf-16'))).toEqual([{ type: 'text', text: 'utf-16' }]);
    expect(await echo('charset', 'bom', undefined, `\ufeff${body('bom')}`)).toEqual([{ type: 'text', text: 'bom' }]);
  });

  it('accepts every query parameter a route declares, in both spellings', async () => {
    for (const query of ['offset=0&limit=5&include_raw=true', 'includeRaw=1', 'include_raw=false&offset=1']) {
      const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/live/events?${query}` });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    }
  });

  it('accepts an empty JSON object on a route that takes no body', async () => {
    expect((await post(app, '/v1/sessions/gone/terminate', {})).statusCode).toBe(204);
  });

  it('accepts JSON nested exactly 64 levels deep', async () => {
    // 64 levels counting the body object; spent in an unknown field, so the schema refuses it
    // for that field, not for its depth.
    const deep = `{"agent":"mock","x":${'['.repeat(63)}${']'.repeat(63)}}`;
    const res = await app.app.inject({ method: 'POST', url: '/v1/sessions/never', headers: { 'content-type': 'application/json' }, payload: deep });
    expect(expectProblem(res, 400, 'invalid_request').detail).not.toMatch(/nested/);
  });

  it('accepts a 128-character session id, as docs/http-api.md promises', async () => {
    const id = 'a'.repeat(128);
    expect((await post(app, `/v1/sessions/${id}`, { agent: 'mock' })).statusCode).toBe(200);
  });
});

describe('malformed HTTP below the router (a real socket)', () => {
  const send = (port: number, request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(request));
      let response = '';
      socket.setEncoding('latin1').on('data', (d: string) => (response += d));
      socket.on('close', () => resolve(response));
      socket.on('error', reject);
    });
  let port = 0;

  beforeAll(async () => {
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.app.server.address() as { port: number }).port;
  });

  const expectRawProblem = (response: string, status: number, code: string) => {
    const [head = '', body = ''] = response.split('\r\n\r\n');
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(JSON.parse(body)).toMatchObject({ status, code });
  };

  // Node's HTTP parser rejects these before Fastify routes them (app.ts clientErrorHandler).
  it.each([
    ['a 20 kB request line', `GET /v1/sessions/live/events?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400, 'invalid_request'],
    // A Host the daemon answers to: the body's error must be what refuses it. (With `Host: x` the
    // Host check, which runs as soon as the headers are in, answers 421 before the body arrives.)
    ['broken chunked encoding', 'POST /v1/sessions/live/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'invalid_request'],
    ['both Content-Length and chunked', 'POST /v1/sessions/live/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'invalid_request'],
  ])('%s: %i %s', async (_what, request, status, code) => expectRawProblem(await send(port, request), status, code));

  it('a bad percent-escape: 400 problem+json', async () => {
    expectRawProblem(await send(port, 'GET /v1/sessions/%/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 400, 'invalid_request');
  });

  it('stays up', async () => {
    const health = await send(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(health).toMatch(/^HTTP\/1.1 200 /);
  });
});

describe('after the corpus', () => {
  it('the daemon is healthy and every session is as it was', async () => {
    const health = await app.app.inject({ method: 'GET', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });

    // Nothing in the corpus created a session or moved one out of its state.
    const list = (await app.app.inject({ method: 'GET', url: '/v1/sessions' })).json<{ sessions: { sessionId: string; status: string }[] }>();
    const status = Object.fromEntries(list.sessions.map((s) => [s.sessionId, s.status]));
    expect(status).toMatchObject({ live: 'idle', perm: 'waiting', quest: 'waiting', gone: 'ended' });
    expect(status.never).toBeUndefined();

    const turn = await runTurn(app, 'live', 'echo still here');
    expect(turn.find((e) => e.type === 'item.completed' && e.data.item.role === 'assistant')).toMatchObject({
      data: { item: { content: [{ type: 'text', text: 'still here' }] } },
    });
    expect((await post(app, `/v1/sessions/perm/permissions/${ids.perm}/reply`, { reply: 'once' })).statusCode).toBe(204);
    expect((await post(app, `/v1/sessions/quest/questions/${ids.question}/reply`, { answers: [['red']] })).statusCode).toBe(204);
    await waitFor(() => app.sessions.get('perm').status === 'idle' && app.sessions.get('quest').status === 'idle', 10_000, 'the HITL turns to finish');
  });
});
