// The JSON-RPC peer the Codex driver speaks app-server with, against a tiny fake peer process
// (test/support/fake-rpc-peer.mjs): ids on both sides starting at 0, errors, timeouts, server
// requests, notifications, a line that is not JSON, and the process exiting under a request.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcPeer, type RpcNotification, type RpcServerRequest } from '../../../src/agents/json-rpc.js';
import type { ChildProcess } from '../../../src/process/spawn.js';

const script = fileURLToPath(new URL('../../support/fake-rpc-peer.mjs', import.meta.url));
let child: ChildProcess | undefined;

afterEach(async () => {
  await child?.kill();
  child = undefined;
});

async function start() {
  const natives: unknown[] = [];
  const requests: RpcServerRequest[] = [];
  const notifications: RpcNotification[] = [];
  const spawned = await JsonRpcPeer.spawn(
    { command: process.execPath, args: [script], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, maxLineChars: 100_000, killGraceMs: 500 },
    { native: (m) => natives.push(m), onRequest: (r) => requests.push(r), onNotification: (n) => notifications.push(n) },
  );
  child = spawned.child;
  return { peer: spawned.peer, natives, requests, notifications };
}

describe('codex JSON-RPC peer', () => {
  it('matches responses to requests by id, numbering from 0, and forwards them to native', async () => {
    const { peer, natives } = await start();
    const [a, b] = await Promise.all([peer.request('echo', { n: 1 }, 5_000), peer.request('echo', { n: 2 }, 5_000)]);
    expect(a).toEqual({ n: 1 });
    expect(b).toEqual({ n: 2 });
    expect(natives).toEqual([
      { id: 0, result: { n: 1 } },
      { id: 1, result: { n: 2 } },
    ]);
    expect(peer.pendingCount).toBe(0);
  });

  it('rejects with the error message of an error response', async () => {
    const { peer } = await start();
    await expect(peer.request('fail', {}, 5_000)).rejects.toThrow('it failed on purpose');
    // The peer still works after an error.
    await expect(peer.request('echo', 'ok', 5_000)).resolves.toBe('ok');
  });

  it('times out a request that is never answered', async () => {
    const { peer } = await start();
    const t0 = Date.now();
    await expect(peer.request('silent', {}, 200)).rejects.toThrow(/no answer to silent within 200 ms/);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(peer.pendingCount).toBe(0);
  });

  it('tells server requests (id + method) and notifications apart from responses, though both id counters start at 0', async () => {
    const { peer, natives, requests, notifications } = await start();
    const asked = peer.request('ask', {}, 5_000); // our id 0
    await expect.poll(() => requests.length).toBe(1);
    expect(requests[0]).toEqual({ id: 0, method: 'item/thing/requestApproval', params: { itemId: 'it-1' } });
    expect(notifications).toEqual([{ method: 'note/added', params: { n: 1 } }]);
    expect(peer.pendingCount).toBe(1); // the server's id 0 did not answer our id 0
    await peer.respond(requests[0]!.id, { decision: 'accept' });
    await expect(asked).resolves.toEqual({ replied: { decision: 'accept' } });
    // Everything reached native in stdout order, the malformed line as its text.
    expect(natives).toEqual([
      { method: 'note/added', params: { n: 1 } },
      'this is {not json',
      { id: 0, method: 'item/thing/requestApproval', params: { itemId: 'it-1' } },
      { id: 0, result: { replied: { decision: 'accept' } } },
    ]);
  });

  it('sends notifications without an id', async () => {
    const { peer, notifications } = await start();
    await peer.notify('initialized');
    await peer.notify('with/params', { x: 1 });
    await expect.poll(() => notifications.length).toBe(2);
    expect(notifications).toEqual([
      { method: 'seen/notification', params: { method: 'initialized', params: null } },
      { method: 'seen/notification', params: { method: 'with/params', params: { x: 1 } } },
    ]);
  });

  it('fails pending and later requests once the process exits', async () => {
    const { peer } = await start();
    const pending = peer.request('silent', {}, 10_000);
    await peer.notify('noop');
    void peer.request('exit', {}, 10_000).catch(() => undefined);
    await expect(pending).rejects.toThrow(/silent: the process exited \(code 3\)/);
    await expect(peer.request('echo', {}, 1_000)).rejects.toThrow(/process exited/);
  });

  it('ignores responses to ids it never sent, but still forwards them', () => {
    const natives: unknown[] = [];
    const peer = new JsonRpcPeer(async () => {}, { native: (m) => natives.push(m) });
    peer.receive({ id: 42, result: {} });
    peer.receive([1, 2]);
    peer.receive({ foo: 'bar' });
    expect(natives).toEqual([{ id: 42, result: {} }, [1, 2], { foo: 'bar' }]);
  });
});
