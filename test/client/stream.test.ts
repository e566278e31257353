// client.stream() against an app on a real socket running the mock: the typed lines of a turn up
// to its result, an error line as the last line, a refusal as an AgentwireError with the problem's
// code, and an abort (the signal, or leaving the loop) that stops the turn and ends its session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentwireError, createClient, type AgentwireClient, type StreamLine } from '../../client/src/index.js';
import type { App } from '../../src/app.js';
import { makeApp, waitFor } from '../support/helpers.js';
import { portOf } from '../support/sse-client.js';

let app: App;
let client: AgentwireClient;

beforeAll(async () => {
  app = await makeApp();
  await app.app.listen({ host: '127.0.0.1', port: 0 });
  client = createClient({ baseUrl: `http://127.0.0.1:${portOf(app.app)}` });
});
afterAll(async () => {
  // A fetch whose body was abandoned leaves undici (this process's fetch) a fresh pooled socket
  // that never carried a request, which server.close() would wait on: it is the client's, not the
  // daemon's, so it is closed here.
  app.app.server.closeAllConnections();
  await app.app.close();
});

async function all(lines: AsyncIterable<StreamLine>): Promise<StreamLine[]> {
  const out: StreamLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

const mock = (content: string) => ({ agent: 'mock', messages: [{ role: 'user' as const, content }] });
const sessionIdOf = (lines: StreamLine[]) => /agentwire session (\S+)/.exec(lines[0]?.type === 'log' ? lines[0].message : '')?.[1];

describe('client.stream()', () => {
  it('yields the typed lines of a turn and ends after its result', async () => {
    const lines = await all(client.stream(mock('tool')));
    const steps = lines.filter((l) => l.type === 'step');
    expect(steps.map((s) => s.status)).toEqual(['running', 'succeeded']);
    expect(steps[0]!.id).toBe(steps[1]!.id);
    expect(lines.at(-1)).toMatchObject({ type: 'result', message: 'Done.' });
  });

  it('ends after an error line', async () => {
    const lines = await all(client.stream(mock('crash')));
    expect(lines.at(-1)).toMatchObject({ type: 'error', code: 'agent_crashed' });
  });

  it('rejects a refused dispatch with the problem', async () => {
    const refused = all(client.stream({ agent: 'mock', messages: [{ role: 'assistant', content: 'hi' }] }));
    await expect(refused).rejects.toSatisfy((e: unknown) => AgentwireError.is(e) && e.code === 'invalid_request' && e.status === 400);
  });

  it('aborting the signal stops the turn and ends the session; so does leaving the loop', async () => {
    const controller = new AbortController();
    const seen: StreamLine[] = [];
    const aborted = (async () => {
      for await (const line of client.stream(mock('slow 100'), { signal: controller.signal })) {
        seen.push(line);
        if (seen.length === 1) controller.abort();
      }
    })();
    await expect(aborted).rejects.toSatisfy((e: unknown) => AgentwireError.is(e) && e.code === 'aborted');
    const first = app.sessions.read(sessionIdOf(seen)!);
    await waitFor(() => first.status === 'ended', 1000, 'the aborted session to end');

    const left: StreamLine[] = [];
    for await (const line of client.stream(mock('slow 100'))) {
      left.push(line);
      break;
    }
    const second = app.sessions.read(sessionIdOf(left)!);
    await waitFor(() => second.status === 'ended', 1000, 'the left session to end');
  });
});
