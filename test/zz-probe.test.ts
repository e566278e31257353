import { afterEach, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { createMock, makeApp, post, waitFor, getEvents } from './helpers.js';
import { abortAllStreams, openSse, portOf } from './sse-client.js';

let a: App;
afterEach(async () => { abortAllStreams(); await a?.app.close(); });

for (const [lag, n, paused] of [[5000, 20000, true], [5000, 20000, false], [5000, 50000, true], [50, 20000, false]] as const)
it(`probe lag ${lag} n ${n} paused ${paused}`, async () => {
  a = await makeApp({ config: { sseKeepAliveMs: 50, subscriberMaxLag: lag } });
  await a.app.listen({ host: '127.0.0.1', port: 0 });
  await createMock(a, 's1');
  const sse = await openSse({ port: portOf(a.app), path: '/v1/sessions/s1/events/sse' });
  if (paused) sse.pause();
  const t0 = Date.now();
  expect((await post(a, '/v1/sessions/s1/messages', { message: `flood ${n}` })).statusCode).toBe(204);
  await waitFor(() => a.sessions.get('s1').status === 'idle', 15000);
  await new Promise((r) => setTimeout(r, 200));
  console.log('turn took', Date.now() - t0, 'last', a.sessions.get('s1').log.lastSequence, 'received', sse.text.length, 'subs', a.sessions.get('s1').subscribers);
  sse.resume();
  await new Promise((r) => setTimeout(r, 500));
  console.log('frames', sse.frames.length, sse.comments.filter(c => c.startsWith('closed')), sse.text.length);
});
