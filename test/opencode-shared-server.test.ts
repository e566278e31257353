// The OpenCode server pool (src/agents/opencode/shared-server.ts) against fake servers: which
// sessions share a server (the key), the ref-count (the last lease kills it), and a server's end
// reaching every session on it. The real server is in test/opencode-shared-e2e.test.ts.
import { describe, expect, it } from 'vitest';
import type { ChildExit } from '../src/process/spawn.js';
import { serverKey, ServerPool, type ServerListener, type ServerProcess, type ServerSpec } from '../src/agents/opencode/shared-server.js';
import type { StreamHandlers } from '../src/agents/opencode/sse.js';

class FakeServer implements ServerProcess {
  running = true;
  kills = 0;
  readonly exited: Promise<ChildExit>;
  private finish!: (exit: ChildExit) => void;
  handlers!: StreamHandlers;
  streamClosed = false;

  constructor(readonly pid: number) {
    this.exited = new Promise((resolve) => (this.finish = resolve));
  }

  /** The process ends by itself (a crash). */
  crash(signal = 'SIGKILL'): void {
    this.end({ exitCode: null, signal, stderr: { head: 'boom', truncated: false }, killed: false });
  }

  kill(): Promise<ChildExit> {
    this.kills++;
    this.end({ exitCode: null, signal: 'SIGTERM', stderr: { truncated: false }, killed: true });
    return this.exited;
  }

  private end(exit: ChildExit): void {
    if (!this.running) return;
    this.running = false;
    this.finish(exit);
  }
}

function fakePool(share = true, failLaunch = false) {
  const launched: { spec: ServerSpec; server: FakeServer }[] = [];
  const pool = new ServerPool(
    {
      launch: async (spec) => {
        await new Promise((r) => setTimeout(r, 5));
        if (failLaunch) throw new Error('did not listen');
        const server = new FakeServer(1000 + launched.length);
        launched.push({ spec, server });
        return { proc: server, url: `http://127.0.0.1:${server.pid}` };
      },
      subscribe: async (url, handlers) => {
        const server = launched.find((l) => url.endsWith(`:${l.server.pid}`))!.server;
        server.handlers = handlers;
        return { close: () => ((server.streamClosed = true), handlers.end('closed')) };
      },
    },
    share,
  );
  return { pool, launched };
}

const logger = { debug: () => {}, warn: () => {} };
const spec = (env: Record<string, string> = { HOME: '/h', OPENCODE_CONFIG_CONTENT: '{"permission":"allow"}' }, cwd = '/work'): ServerSpec => ({ executable: '/bin/opencode', cwd, env });

function listener() {
  const heard: unknown[] = [];
  const exits: { exit: ChildExit; lost: boolean }[] = [];
  const l: ServerListener = { event: (e) => heard.push(e), exit: (exit, lost) => exits.push({ exit, lost }) };
  return { l, heard, exits };
}

/** A sharing pool with two sessions on one server, each attached with its own listener. */
async function twoSessions() {
  const { pool, launched } = fakePool();
  const a = await pool.acquire(spec(), logger);
  const b = await pool.acquire(spec(), logger);
  const la = listener();
  const lb = listener();
  a.attach(la.l);
  b.attach(lb.l);
  return { pool, launched, a, b, la, lb };
}

describe('serverKey', () => {
  it('is the same for the same executable, cwd and env in any order, and differs in any of them', () => {
    const base = spec({ A: '1', B: '2' });
    expect(serverKey(base)).toBe(serverKey(spec({ B: '2', A: '1' })));
    expect(serverKey(base)).not.toBe(serverKey(spec({ A: '1', B: '3' })));
    expect(serverKey(base)).not.toBe(serverKey(spec({ A: '1' })));
    expect(serverKey(base)).not.toBe(serverKey(spec({ A: '1', B: '2' }, '/other')));
    expect(serverKey(base)).not.toBe(serverKey({ ...base, executable: '/other/opencode' }));
    expect(serverKey(spec({ OPENCODE_CONFIG_CONTENT: '{"permission":"allow"}' }))).not.toBe(serverKey(spec({ OPENCODE_CONFIG_CONTENT: '{"permission":{"edit":"ask"}}' })));
    // A hash: no credential is kept in the key.
    expect(serverKey(spec({ API_KEY: 'sk-secret' }))).not.toContain('secret');
  });
});

describe('ServerPool', () => {
  it('gives sessions of one key one server, started once even when they ask at the same time', async () => {
    const { pool, launched } = fakePool();
    const [a, b] = await Promise.all([pool.acquire(spec(), logger), pool.acquire(spec(), logger)]);
    const c = await pool.acquire(spec(), logger);
    expect(launched).toHaveLength(1);
    expect(new Set([a.pid, b.pid, c.pid]).size).toBe(1);
    expect(a.shared).toBe(true);
    expect(pool.size).toBe(1);
  });

  it('never shares between different env, config or cwd', async () => {
    const { pool, launched } = fakePool();
    const a = await pool.acquire(spec({ HOME: '/a' }), logger);
    const b = await pool.acquire(spec({ HOME: '/b' }), logger);
    const c = await pool.acquire(spec({ HOME: '/a' }, '/elsewhere'), logger);
    expect(launched).toHaveLength(3);
    expect(new Set([a.pid, b.pid, c.pid]).size).toBe(3);
    expect(a.shared).toBe(false);
  });

  it('per-session (share off): every acquire gets its own server', async () => {
    const { pool, launched } = fakePool(false);
    await pool.acquire(spec(), logger);
    await pool.acquire(spec(), logger);
    expect(launched).toHaveLength(2);
  });

  it('fans every frame out to the attached sessions; a released one hears nothing more', async () => {
    const { launched, a, b, la, lb } = await twoSessions();
    launched[0]!.server.handlers.event({ type: 'one' });
    expect(await a.release()).toBeUndefined();
    launched[0]!.server.handlers.event({ type: 'two' });
    expect(la.heard).toEqual([{ type: 'one' }]);
    expect(lb.heard).toEqual([{ type: 'one' }, { type: 'two' }]);
  });

  it('kills the server when its last lease is released, and starts a new one for the next session', async () => {
    const { pool, launched } = fakePool();
    const a = await pool.acquire(spec(), logger);
    const b = await pool.acquire(spec(), logger);
    await a.release();
    await a.release(); // idempotent: the count is not taken twice
    expect(launched[0]!.server.kills).toBe(0);
    const exit = await b.release();
    expect(exit).toMatchObject({ killed: true });
    expect(launched[0]!.server.kills).toBe(1);
    expect(launched[0]!.server.streamClosed).toBe(true);
    expect(pool.size).toBe(0);
    const c = await pool.acquire(spec(), logger);
    expect(launched).toHaveLength(2);
    expect(c.pid).not.toBe(a.pid);
  });

  it('a crash reaches every session on the server with its exit; the next session gets a new server', async () => {
    const { pool, launched } = fakePool();
    const other = await pool.acquire(spec({ HOME: '/other' }), logger);
    const lo = listener();
    other.attach(lo.l);
    const leases = await Promise.all([1, 2, 3].map(() => pool.acquire(spec(), logger)));
    const ls = leases.map((lease) => {
      const l = listener();
      lease.attach(l.l);
      return l;
    });
    launched[1]!.server.crash();
    await new Promise((r) => setTimeout(r, 0));
    for (const l of ls) expect(l.exits).toEqual([{ exit: expect.objectContaining({ signal: 'SIGKILL', stderr: { head: 'boom', truncated: false }, killed: false }), lost: false }]);
    expect(lo.exits).toEqual([]); // the other key's server is untouched
    const next = await pool.acquire(spec(), logger);
    expect(launched).toHaveLength(3);
    expect(next.pid).not.toBe(leases[0]!.pid);
    // The dead server's leases are given back without killing the new one.
    for (const lease of leases) await lease.release();
    expect(launched[2]!.server.kills).toBe(0);
  });

  it('a lost event stream kills the server and reports it as lost to every session on it', async () => {
    const { pool, launched, la, lb } = await twoSessions();
    launched[0]!.server.handlers.end('the event stream failed: reset');
    await new Promise((r) => setTimeout(r, 0));
    expect(launched[0]!.server.kills).toBe(1);
    expect(la.exits.map((e) => e.lost)).toEqual([true]);
    expect(lb.exits.map((e) => e.lost)).toEqual([true]);
    expect(pool.size).toBe(0);
  });

  it('a server that fails to start fails every session waiting for it, and the next one tries again', async () => {
    const { pool } = fakePool(true, true);
    const results = await Promise.allSettled([pool.acquire(spec(), logger), pool.acquire(spec(), logger)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(pool.size).toBe(0);
  });
});
