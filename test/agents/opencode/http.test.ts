// The OpenCode driver's HTTP plumbing against a local stand-in server: JSON calls refuse what is
// not JSON (OpenCode's web app answers unknown routes with 200 HTML), and the /event reader frames,
// bounds and ends as it should.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { callJson, OpencodeHttpError } from '../../../src/agents/opencode/http.js';
import { subscribe } from '../../../src/agents/opencode/sse.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function serve(handler: (path: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => handler(req.url ?? '/', res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

describe('callJson', () => {
  it('returns JSON, null for 204, and refuses HTML, bad JSON and error statuses', async () => {
    const base = await serve((path, res) => {
      if (path === '/json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ses_1"}');
      if (path === '/empty') return res.writeHead(204).end();
      if (path === '/bad') return res.writeHead(200, { 'content-type': 'application/json' }).end('{nope');
      if (path === '/fail') return res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"x"}');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html></html>');
    });
    expect(await callJson(base, 'GET', '/json', undefined, 2000)).toEqual({ status: 200, json: { id: 'ses_1' } });
    expect(await callJson(base, 'POST', '/empty', {}, 2000)).toEqual({ status: 204, json: null });
    await expect(callJson(base, 'POST', '/session/x/no_such_route', {}, 2000)).rejects.toThrow(/text\/html, not JSON/);
    await expect(callJson(base, 'GET', '/bad', undefined, 2000)).rejects.toThrow(/invalid JSON/);
    await expect(callJson(base, 'GET', '/fail', undefined, 2000)).rejects.toBeInstanceOf(OpencodeHttpError);
  });
});

describe('subscribe', () => {
  it('delivers frames in order, cuts an oversized one to text, and reports the end once', async () => {
    const paths: string[] = [];
    const base = await serve((path, res) => {
      paths.push(path);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected","properties":{}}\n\n');
      res.write(`data: {"type":"big","properties":{"x":"${'y'.repeat(500)}"}}\n\n`);
      res.write(': comment\n\ndata: {"type":"split",\ndata: "properties":{}}\n\n');
      res.end('data: not json\n\n');
    });
    const events: unknown[] = [];
    const ended: string[] = [];
    await subscribe(base, '/work/a b', 100, { event: (e) => events.push(e), end: (r) => ended.push(r) }, 2000);
    await expect.poll(() => ended).toEqual(['the server closed the event stream']);
    expect(events).toHaveLength(4);
    expect(events[0]).toEqual({ type: 'server.connected', properties: {} });
    expect(typeof events[1] === 'string' && (events[1] as string).length).toBe(100);
    expect(events[2]).toEqual({ type: 'split', properties: {} });
    expect(events[3]).toBe('not json');
    // The stream of the session's directory's instance, not the server's own.
    expect(paths).toEqual(['/event?directory=%2Fwork%2Fa%20b']);
  });

  it('a frame nested deeper than the store takes is handed on as text, and the frames after it as JSON (docs/security.md)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const base = await serve((path, res) => {
      if (path === '/deep') return res.writeHead(200, { 'content-type': 'application/json' }).end(deep);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"type":"deep","properties":${deep}}\n\n`);
      res.end('data: {"type":"after","properties":{}}\n\n');
    });
    const events: unknown[] = [];
    const ended: string[] = [];
    await subscribe(base, '/w', 1_000_000, { event: (e) => events.push(e), end: (r) => ended.push(r) }, 2000);
    await expect.poll(() => ended).toHaveLength(1);
    expect(typeof events[0]).toBe('string');
    expect(events[1]).toEqual({ type: 'after', properties: {} });
    await expect(callJson(base, 'GET', '/deep', undefined, 2000)).rejects.toThrow(/nested more than 256 levels/);
  });

  it('refuses an answer that is not an event stream', async () => {
    const base = await serve((_path, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    await expect(subscribe(base, '/work/a b', 100, { event: () => {}, end: () => {} }, 2000)).rejects.toThrow(/not an event stream/);
  });

  it('closing it is reported as closed', async () => {
    const base = await serve((_path, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': hi\n\n'));
    const ended: string[] = [];
    const stream = await subscribe(base, '/work/a b', 100, { event: () => {}, end: (r) => ended.push(r) }, 2000);
    stream.close();
    await expect.poll(() => ended).toEqual(['closed']);
  });
});
