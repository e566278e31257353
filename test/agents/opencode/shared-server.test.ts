// The OpenCode server pool (src/agents/opencode/shared-server.ts) against fake servers: which
// sessions share a server (the key), the ref-counts (the last lease of a directory closes its stream
// and disposes of its instance, the last of the server kills it), and a server's end reaching every
// session on it. The real server is in test/agents/opencode/shared-e2e.test.ts.
import { describe, expect, it } from 'vitest';
import type { ChildExit } from '../../../src/process/spawn.js';
import { serverKey, ServerPool, type ServerListener, type ServerProcess, type ServerSpec } from '../../../src/agents/opencode/shared-server.js';
import type { StreamHandlers } from '../../../src/agents/opencode/sse.js';

class FakeServer implements ServerProcess {
  running = true;
  kills = 0;
  readonly exited: Promise<ChildExit>;
  private finish!: (exit: ChildExit) => void;
  /** The `/event` streams opened, by directory (the latest one of each). */
  readonly streams = new Map<string, { handlers: StreamHandlers; closed: boolean }>();
  /** Directories whose instance was disposed of, in order. */
  readonly disposed: string[] = [];
  /** When set, a dispose waits for it (a dispose still running when a session comes back). */
  disposeGate: Promise<void> | undefined;

  /** The stream of the default spec's directory. */
  get handlers(): StreamHandlers {
    return this.streams.get('/work')!.handlers;
  }
  get streamClosed(): boolean {
    return [...this.streams.values()].every((s) => s.closed);
  }

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

function fakePool(share = true, failLaunch = false, maxDirectories?: number) {
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
      subscribe: async (url, directory, handlers) => {
        const server = launched.find((l) => url.endsWith(`:${l.server.pid}`))!.server;
        const stream = { handlers, closed: false };
        server.streams.set(directory, stream);
        return { close: () => ((stream.closed = true), handlers.end('closed')) };
      },
      dispose: async (url, directory) => {
        const server = launched.find((l) => url.endsWith(`:${l.server.pid}`))!.server;
        await server.disposeGate;
        server.disposed.push(directory);
      },
    },
    share,
    maxDirectories,
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
  it('is the same for the same executable and env in any order, whatever the cwd, and differs in either', () => {
    const base = spec({ A: '1', B: '2' });
    expect(serverKey(base)).toBe(serverKey(spec({ B: '2', A: '1' })));
    expect(serverKey(base)).not.toBe(serverKey(spec({ A: '1', B: '3' })));
    expect(serverKey(base)).not.toBe(serverKey(spec({ A: '1' })));
    // OpenCode keeps an instance per directory in one process: the directory is not the server's.
    expect(serverKey(base)).toBe(serverKey(spec({ A: '1', B: '2' }, '/other')));
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

  it('never shares between different env or config; sessions in different directories share', async () => {
    const { pool, launched } = fakePool();
    const a = await pool.acquire(spec({ HOME: '/a' }), logger);
    const b = await pool.acquire(spec({ HOME: '/b' }), logger);
    expect(a.shared).toBe(false);
    const c = await pool.acquire(spec({ HOME: '/a' }, '/elsewhere'), logger);
    expect(launched).toHaveLength(2);
    expect(c.pid).toBe(a.pid);
    expect(b.pid).not.toBe(a.pid);
    expect(a.shared).toBe(true);
  });

  it('gives each directory on a server one stream of its own, whose frames only its sessions hear', async () => {
    const { pool, launched } = fakePool();
    const [a, b, c] = await Promise.all([pool.acquire(spec(), logger), pool.acquire(spec(), logger), pool.acquire(spec(undefined, '/elsewhere'), logger)]);
    const [la, lb, lc] = [listener(), listener(), listener()];
    a.attach(la.l);
    b.attach(lb.l);
    c.attach(lc.l);
    const server = launched[0]!.server;
    expect([...server.streams.keys()].sort()).toEqual(['/elsewhere', '/work']);
    server.streams.get('/work')!.handlers.event({ type: 'work' });
    server.streams.get('/elsewhere')!.handlers.event({ type: 'elsewhere' });
    expect(la.heard).toEqual([{ type: 'work' }]);
    expect(lb.heard).toEqual([{ type: 'work' }]);
    expect(lc.heard).toEqual([{ type: 'elsewhere' }]);
  });

  it("the last session of a directory closes its stream and disposes of its instance; one coming back waits for that", async () => {
    const { pool, launched } = fakePool();
    const a = await pool.acquire(spec(), logger);
    const c = await pool.acquire(spec(undefined, '/elsewhere'), logger);
    const server = launched[0]!.server;
    let open!: () => void;
    server.disposeGate = new Promise((resolve) => (open = resolve));
    expect(await c.release()).toBeUndefined();
    expect(server.streams.get('/elsewhere')!.closed).toBe(true);
    expect(server.streams.get('/work')!.closed).toBe(false);
    expect(server.kills).toBe(0);
    // A session in that directory again, while the dispose is still running: its stream (and so
    // its session) waits until OpenCode has let go of the old instance.
    const back = pool.acquire(spec(undefined, '/elsewhere'), logger);
    await new Promise((r) => setTimeout(r, 10));
    expect(server.streams.get('/elsewhere')!.closed).toBe(true);
    open();
    const d = await back;
    expect(server.disposed).toEqual(['/elsewhere']);
    expect(server.streams.get('/elsewhere')!.closed).toBe(false);
    expect(d.pid).toBe(a.pid);
    await d.release();
    await a.release();
    await new Promise((r) => setTimeout(r, 10));
    expect(server.kills).toBe(1);
    expect(server.streamClosed).toBe(true);
    // d left '/elsewhere' while a still held the server: disposed of again. a's lease was the
    // server's last: it is killed, and no dispose is asked of a server that is going.
    expect(server.disposed).toEqual(['/elsewhere', '/elsewhere']);
  });

  it('a server that has taken its last new directory keeps its sessions; new ones of its key get a new server', async () => {
    const { pool, launched } = fakePool(true, false, 2);
    const a = await pool.acquire(spec(undefined, '/one'), logger);
    const b = await pool.acquire(spec(undefined, '/two'), logger);
    expect(b.pid).toBe(a.pid);
    // Even a directory it serves already: the server is retired from new sessions.
    const c = await pool.acquire(spec(undefined, '/one'), logger);
    expect(launched).toHaveLength(2);
    expect(c.pid).not.toBe(a.pid);
    const d = await pool.acquire(spec(undefined, '/three'), logger);
    expect(d.pid).toBe(c.pid);
    await a.release();
    expect(launched[0]!.server.kills).toBe(0);
    await b.release();
    expect(launched[0]!.server.kills).toBe(1);
    expect(launched[1]!.server.kills).toBe(0);
    // '/three' was the new server's second directory: it is retired from new sessions too.
    expect(pool.size).toBe(0);
    expect((await pool.acquire(spec(undefined, '/four'), logger)).pid).not.toBe(c.pid);
    expect(launched).toHaveLength(3);
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
    const leases = await Promise.all([1, 2, 3].map((n) => pool.acquire(spec(undefined, n === 3 ? '/elsewhere' : '/work'), logger)));
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
