// The running `opencode serve` processes of one driver, one per server key, each shared by every
// session whose server would be the same process anyway (docs/opencode.md, "Shared servers").
//
// The key is everything a server is started with: the executable, the cwd (OpenCode fixes its
// project directory per instance) and the whole environment the driver gives it, including
// OPENCODE_CONFIG_CONTENT (permission rules, model, MCP servers). Two sessions that differ in any
// of it never share, so one session's env or credentials never reach another's agent. The key is a
// hash: the pool keeps no second copy of anyone's credentials.
//
// A server is ref-counted by leases. It has ONE `/event` subscription, opened before any session is
// created on it, whose frames go to every attached listener (the driver's SessionRouter picks each
// session's own). The last lease released kills the server at once (no idle grace: nothing is left
// for the daemon's shutdown to find). A server that exits by itself, or whose stream is lost (then
// it is killed), reports its exit to every listener, and leaves the pool: the next acquire of its
// key starts a new one.
import { createHash } from 'node:crypto';
import type { ChildExit } from '../../process/spawn.js';
import type { EventStream, StreamHandlers } from './sse.js';

/** The part of a ChildProcess the pool uses (tests give a fake). */
export interface ServerProcess {
  readonly pid: number | undefined;
  readonly running: boolean;
  readonly exited: Promise<ChildExit>;
  kill(): Promise<ChildExit>;
}

export interface ServerSpec {
  executable: string;
  cwd: string;
  /** The session's env and what the driver adds (the whole of what differs between servers). */
  env: Record<string, string>;
}

export interface ServerLauncher {
  /** Spawns a server and resolves once it answers; rejects with why not. */
  launch(spec: ServerSpec, logger: ServerLogger): Promise<{ proc: ServerProcess; url: string }>;
  /** Opens the server's `/event` stream. */
  subscribe(url: string, handlers: StreamHandlers): Promise<EventStream>;
}

/** The logger of the session that started a server: its stderr and its end are logged there. */
export type ServerLogger = { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };

/** What a session attached to a server hears: every frame, and the server's end. */
export interface ServerListener {
  event(data: unknown): void;
  /** The server is gone. `lost`: its stream ended first and the pool killed it (not requested). */
  exit(exit: ChildExit, lost: boolean): void;
}

export interface ServerLease {
  readonly url: string;
  readonly pid: number | undefined;
  /** Other sessions hold leases on the same server. */
  readonly shared: boolean;
  /** Starts hearing the server's frames; before this nothing reaches the listener. */
  attach(listener: ServerListener): void;
  /** Stops hearing it and gives the lease back; the last one kills the server and resolves with
   *  its exit once it is reaped. Idempotent. */
  release(): Promise<ChildExit | undefined>;
}

interface Server {
  key: string;
  ready: Promise<{ proc: ServerProcess; url: string; stream: EventStream }>;
  refs: number;
  listeners: Set<ServerListener>;
  /** Set once the process is gone or being killed: no new lease may join it. */
  closing: boolean;
  lost: boolean;
}

export function serverKey(spec: ServerSpec): string {
  const env = Object.keys(spec.env)
    .sort()
    .map((name) => [name, spec.env[name]]);
  return createHash('sha256').update(JSON.stringify([spec.executable, spec.cwd, env])).digest('hex');
}

export class ServerPool {
  private readonly servers = new Map<string, Server>();
  private unshared = 0;

  /** `share` false: every acquire gets a server of its own (--opencode-servers per-session). */
  constructor(
    private readonly launcher: ServerLauncher,
    private readonly share: boolean,
  ) {}

  /** Whether sessions may share servers (false: --opencode-servers per-session). */
  get shares(): boolean {
    return this.share;
  }

  /** Servers running or starting (tests, metrics). */
  get size(): number {
    return this.servers.size;
  }

  /** A lease on the server for `spec`: the running one of its key, or a new one; in a pool that
   *  does not share, always a new one that nobody else joins. */
  async acquire(spec: ServerSpec, logger: ServerLogger): Promise<ServerLease> {
    const key = this.share ? serverKey(spec) : `own-${++this.unshared}`;
    let server = this.servers.get(key);
    if (!server || server.closing) {
      server = this.start(key, spec, logger);
      this.servers.set(key, server);
    }
    server.refs++;
    let running;
    try {
      running = await server.ready;
    } catch (err) {
      server.refs--;
      throw err;
    }
    if (server.closing) {
      // It died between its start and this lease: nothing was attached, so nothing is reported.
      server.refs--;
      throw new Error(`the server exited before a session could be created on it`);
    }
    return this.lease(server, running.proc, running.url);
  }

  private start(key: string, spec: ServerSpec, logger: ServerLogger): Server {
    const server: Server = { key, refs: 0, listeners: new Set(), closing: false, lost: false, ready: undefined! };
    server.ready = (async () => {
      const { proc, url } = await this.launcher.launch(spec, logger).catch((err: Error) => {
        this.forget(server);
        throw err;
      });
      let stream: EventStream;
      try {
        stream = await this.launcher.subscribe(url, {
          event: (data) => server.listeners.forEach((l) => l.event(data)),
          end: (reason) => {
            if (reason === 'closed' || !proc.running || server.closing) return;
            // The server lives but its stream is gone: nothing more would reach its sessions.
            logger.warn({ reason, sessions: server.listeners.size }, 'opencode event stream ended; killing the shared server');
            server.lost = true;
            server.closing = true;
            void proc.kill();
          },
        });
      } catch (err) {
        this.forget(server);
        await proc.kill();
        throw err;
      }
      void proc.exited.then((exit) => {
        server.closing = true;
        stream.close();
        this.forget(server);
        const listeners = [...server.listeners];
        server.listeners.clear();
        for (const listener of listeners) listener.exit(exit, server.lost);
      });
      return { proc, url, stream };
    })();
    return server;
  }

  private lease(server: Server, proc: ServerProcess, url: string): ServerLease {
    let listener: ServerListener | undefined;
    let released: Promise<ChildExit | undefined> | undefined;
    return {
      url,
      pid: proc.pid,
      get shared() {
        return server.refs > 1;
      },
      attach: (l) => {
        if (released) return;
        listener = l;
        server.listeners.add(l);
      },
      release: () => {
        if (released) return released;
        if (listener) server.listeners.delete(listener);
        server.refs--;
        if (server.refs > 0) return (released = Promise.resolve(undefined));
        // The last lease: the server goes, and no acquire may join it meanwhile.
        server.closing = true;
        this.forget(server);
        return (released = proc.kill());
      },
    };
  }

  private forget(server: Server): void {
    if (this.servers.get(server.key) === server) this.servers.delete(server.key);
  }
}
