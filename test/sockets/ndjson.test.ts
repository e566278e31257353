// The NDJSON turn stream over real sockets: one universal event per line, ended with the turn, and
// what a client going away does to the turn (only with abort_on_disconnect does it interrupt).
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createMock, expectNoUnparsed, getEvents, makeApp, post, runTurn, waitFor } from '../support/helpers.js';
import { abortAllStreams, HttpStream, openStream, portOf } from '../support/sse-client.js';

let a: App | undefined;

afterEach(async () => {
  abortAllStreams();
  await a?.app.close();
  a = undefined;
});

async function listening(): Promise<{ app: App; port: number }> {
  const app = await makeApp({ config: { sseKeepAliveMs: 50 } });
  a = app;
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: portOf(app.app) };
}

function ndjsonTurn(port: number, id: string, message: string, query = ''): Promise<HttpStream> {
  return openStream({
    port,
    path: `/v1/sessions/${id}/messages/stream${query}`,
    method: 'POST',
    headers: { accept: 'application/x-ndjson' },
    body: { message },
  });
}

/** Complete lines only: a line still arriving is not an event yet. */
function lines(stream: HttpStream): string[] {
  const parts = stream.text.split('\n');
  parts.pop();
  return parts;
}

function parsed(stream: HttpStream): UniversalEvent[] {
  return lines(stream).map((l) => JSON.parse(l) as UniversalEvent);
}

function turnEnd(events: UniversalEvent[]): Extract<UniversalEvent, { type: 'turn.ended' }> | undefined {
  return events.find((e): e is Extract<UniversalEvent, { type: 'turn.ended' }> => e.type === 'turn.ended');
}

async function status(app: App, id: string): Promise<string> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { status: string }).status;
}

describe('POST /v1/sessions/:id/messages/stream (NDJSON)', () => {
  it('streams one JSON event per line and ends after turn.ended', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const before = app.sessions.get('s1').log.lastSequence;
    const stream = await ndjsonTurn(port, 's1', 'Reply with exactly the single word OK.');
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^application\/x-ndjson/);
    await stream.ended(5000);
    expect(stream.completed).toBe(true);

    expect(stream.text.endsWith('\n')).toBe(true);
    const events = parsed(stream);
    expect(events[0]?.type).toBe('turn.started');
    expect(events.at(-1)?.type).toBe('turn.ended');
    expect(events).toEqual(await getEvents(app, 's1', before));
    // Each line is one event, never an SSE frame or a pretty-printed fragment.
    for (const line of lines(stream)) expect(line).toMatch(/^\{"event_id":.*\}$/);
    expect(app.sessions.get('s1').subscribers).toBe(0);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it("streams deltas that concatenate to the completed message's text", async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const stream = await ndjsonTurn(port, 's1', 'markdown');
    await stream.ended(5000);
    const events = parsed(stream);
    expect(events.at(-1)?.type).toBe('turn.ended');

    const completed = events.filter(
      (e): e is Extract<UniversalEvent, { type: 'item.completed' }> => e.type === 'item.completed' && e.data.item.role === 'assistant',
    );
    expect(completed).toHaveLength(1);
    const item = completed[0]!.data.item;
    const text = item.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    expect(text.length).toBeGreaterThan(20);
    const deltas = events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === item.item_id ? [e.data.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('interrupts the turn when the client disconnects with abort_on_disconnect=true, and the session stays usable', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const stream = await ndjsonTurn(port, 's1', 'slow 100', '?abort_on_disconnect=true');
    await stream.until(() => parsed(stream).filter((e) => e.type === 'item.delta').length >= 2, 5000, 'two deltas');
    const disconnectedAt = Date.now();
    stream.abort();

    const ended = await waitFor(async () => turnEnd(await getEvents(app, 's1')), 2000, 'turn.ended after the disconnect');
    expect(Date.now() - disconnectedAt).toBeLessThan(2000);
    expect(ended.data.metadata?.reason).toBe('interrupted');
    expect(await status(app, 's1')).toBe('idle');
    expect(app.sessions.get('s1').subscribers).toBe(0);

    const next = await runTurn(app, 's1', 'Reply with exactly the single word AGAIN.');
    expect(turnEnd(next)?.data.metadata?.reason).toBe('completed');
    expect(await status(app, 's1')).toBe('idle');
    expectNoUnparsed(await getEvents(app, 's1'));
  });

  it('does not interrupt the turn when the client disconnects without abort_on_disconnect', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const stream = await ndjsonTurn(port, 's1', 'slow 100');
    await stream.until(() => parsed(stream).filter((e) => e.type === 'item.delta').length >= 2, 5000, 'two deltas');
    stream.abort();
    await stream.closed;
    await waitFor(() => app.sessions.get('s1').subscribers === 0, 2000, 'the server to drop the subscriber');
    const atDisconnect = app.sessions.get('s1').log.lastSequence;

    // Ticks come every 100 ms: several more must land while nobody is listening.
    await waitFor(() => app.sessions.get('s1').log.lastSequence >= atDisconnect + 3, 2000, 'the turn to go on');
    const meanwhile = await getEvents(app, 's1', atDisconnect);
    expect(meanwhile.every((e) => e.type === 'item.delta')).toBe(true);
    expect(turnEnd(await getEvents(app, 's1'))).toBeUndefined();
    expect(await status(app, 's1')).toBe('running');

    const res = await post(app, '/v1/sessions/s1/interrupt');
    expect(res.statusCode, res.body).toBe(202);
    const ended = await waitFor(async () => turnEnd(await getEvents(app, 's1')), 2000, 'turn.ended after the interrupt');
    expect(ended.data.metadata?.reason).toBe('interrupted');
    expect(await status(app, 's1')).toBe('idle');
    expectNoUnparsed(await getEvents(app, 's1'));
  });
});

describe('turn streams on one keep-alive connection', () => {
  it('leave no listener behind on the socket (12 turns, one socket)', async () => {
    const { app, port } = await listening();
    await createMock(app, 's1');
    const sockets: import('node:net').Socket[] = [];
    app.app.server.on('connection', (s) => sockets.push(s));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const drainListeners: number[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const body = await new Promise<string>((resolve, reject) => {
          const req = http.request({ port, host: '127.0.0.1', agent, method: 'POST', path: '/v1/sessions/s1/messages/stream', headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' } }, (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text));
          });
          req.on('error', reject);
          req.end(JSON.stringify({ message: 'Reply with exactly the single word OK.' }));
        });
        expect(body.trim().split('\n').map((l) => (JSON.parse(l) as UniversalEvent).type)).toContain('turn.ended');
        drainListeners.push(sockets[0]!.listenerCount('drain'));
      }
      expect(sockets).toHaveLength(1);
      // Whatever Node itself keeps on the socket, nothing grows with the number of streams.
      expect(new Set(drainListeners).size, `drain listeners after each turn: ${drainListeners.join(',')}`).toBe(1);
      expectNoUnparsed(await getEvents(app, 's1'));
    } finally {
      agent.destroy();
    }
  });
});
