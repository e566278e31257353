// session.events() against scripted answers (a fake fetch), for what a real daemon never does but
// the client must still survive: a reconnection that replays events already yielded, a sequence
// that skips ahead, a connection that goes silent, and answers worth retrying or not.
import { describe, expect, it } from 'vitest';
import { AgentwireError, createClient, type ReconnectInfo } from '../../client/src/index.js';
import { collect } from './daemon.js';

type Script = (init: RequestInit, n: number) => Response;

function fakeClient(script: Script) {
  const requests: Headers[] = [];
  const client = createClient({
    baseUrl: 'http://daemon.test',
    fetch: async (_url, init) => {
      requests.push(new Headers(init.headers as Record<string, string>));
      return script(init, requests.length);
    },
  });
  return { session: client.sessions.handle('s1'), requests };
}

const event = (sequence: number, type = 'item.delta') => ({ sequence, type, event_id: `evt_${sequence}`, data: {} });
const frames = (...sequences: (number | [number, string])[]) =>
  sequences.map((s) => (Array.isArray(s) ? event(s[0], s[1]) : event(s))).map((e) => `id: ${e.sequence}\ndata: ${JSON.stringify(e)}\n\n`).join('');

/** An SSE answer; with `hang` it stays open (until the request is aborted) after the frames. */
function sse(text: string, init: RequestInit, hang = false): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      if (!hang) return controller.close();
      init.signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

const problem = (status: number, code: string) =>
  new Response(JSON.stringify({ type: `https://agentwire.dev/problems/${code}`, title: code, status, detail: `${code} here`, code }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });

const fast = { reconnect: { initialDelayMs: 1 } };

describe('session.events() on scripted answers', () => {
  it('drops events a reconnection replays, resuming with Last-Event-ID', async () => {
    const { session, requests } = fakeClient((init, n) => (n === 1 ? sse(frames(1, 2, 3), init) : sse(frames(2, 3, 4, 5, [6, 'session.ended']), init)));
    const events = await collect(session.events(fast));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(requests.map((h) => h.get('last-event-id'))).toEqual([null, '3']);
  });

  it('throws sequence_gap rather than skip events', async () => {
    const { session } = fakeClient((init) => sse(frames(1, 3), init));
    const error = await collect(session.events(fast)).catch((e: unknown) => e);
    expect(AgentwireError.is(error) && error.code).toBe('sequence_gap');
  });

  it('drops a connection silent for idleTimeoutMs and resumes', async () => {
    const reconnects: ReconnectInfo[] = [];
    const { session, requests } = fakeClient((init, n) => (n === 1 ? sse(frames(1), init, true) : sse(frames(2, [3, 'session.ended']), init)));
    const events = await collect(session.events({ ...fast, idleTimeoutMs: 300, onReconnect: (r) => void reconnects.push(r) }));
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(reconnects.map((r) => [r.attempt, r.cursor, r.error.code])).toEqual([[1, 1, 'timeout']]);
    expect(requests[1]!.get('last-event-id')).toBe('1');
  });

  it('retries 503 and 429, throws 404 and 410 at once', async () => {
    const answers = [503, 429];
    const { session } = fakeClient((init, n) => (n <= answers.length ? problem(answers[n - 1]!, n === 1 ? 'shutting_down' : 'too_many_subscribers') : sse(frames([1, 'session.ended']), init)));
    expect((await collect(session.events(fast))).map((e) => e.sequence)).toEqual([1]);

    for (const [status, code] of [[404, 'session_not_found'], [410, 'events_evicted']] as const) {
      const { session: gone, requests } = fakeClient(() => problem(status, code));
      const error = await collect(gone.events(fast)).catch((e: unknown) => e);
      expect(AgentwireError.is(error) && [error.status, error.code, error.detail]).toEqual([status, code, `${code} here`]);
      expect(requests.length).toBe(1);
    }
  });
});
