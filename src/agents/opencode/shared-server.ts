// The running `opencode serve` processes of one driver, one per server key, each shared by every
// session whose server would be the same process anyway (docs/opencode.md, "Shared servers").
//
// The key is what a server is started with: the executable and the whole environment the driver
// gives it, including OPENCODE_CONFIG_CONTENT (permission rules, model, MCP servers). Two sessions
// that differ in any of it never share, so one session's env or credentials never reach another's
// agent. The key is a hash: the pool keeps no second copy of anyone's credentials. The session's
// directory is not in the key: OpenCode keeps one instance per directory inside one process, and
// every call names its directory (`?directory=`, docs/opencode.md).
//
// A server is ref-counted by leases, and so is each directory on it (instances.ts: one stream per
// directory, heard by that directory's sessions only; the driver's SessionRouter picks each
// session's own; an instance nobody uses is disposed of). A server that has opened
// MAX_DIRECTORIES_PER_SERVER directories takes no new session (its own stay). The last lease of a
// server kills it at once (no idle grace: nothing is left for the daemon's shutdown to find). A
// server that exits by itself, or one of whose streams is lost (then it is killed), reports its
// exit to every listener in every directory and leaves the pool: the next acquire starts a new one.
import { createHash } from 'node:crypto';
import type { ChildExit } from '../../process/spawn.js';
import { Instances, type Instance } from './instances.js';
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
  /** The session's directory: where a new server is spawned, and the instance its calls name. */
  cwd: string;
  /** The session's env and what the driver adds (the whole of what differs between servers). */
  env: Record<string, string>;
}

export interface ServerLauncher {
  /** Spawns a server and resolves once it answers; rejects with why not. */
  launch(spec: ServerSpec, logger: ServerLogger): Promise<{ proc: ServerProcess; url: string }>;
  /** Opens the server's `/event` stream of one directory. */
  subscribe(url: string, directory: string, handlers: StreamHandlers): Promise<EventStream>;
  /** Disposes of OpenCode's instance of a directory no session uses any more (best effort). */
  dispose(url: string, directory: string): Promise<void>;
}

/** The logger of the session that started a server: its stderr and its end are logged there. */
export type ServerLogger = { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };

/** What a session attached to a server hears: every frame of its directory, and the server's end. */
export interface ServerListener {
  event(data: unknown): void;
  /** The server is gone. `lost`: a stream ended first and the pool killed it (not requested). */
  exit(exit: ChildExit, lost: boolean): void;
}

export interface ServerLease {
  readonly url: string;
  readonly pid: number | undefined;
  /** Other sessions hold leases on the same server. */
  readonly shared: boolean;
  /** Starts hearing the directory's frames; before this nothing reaches the listener. */
  attach(listener: ServerListener): void;
  /** Stops hearing it and gives the lease back; the last one kills the server and resolves with
   *  its exit once it is reaped. Idempotent. */
  release(): Promise<ChildExit | undefined>;
}

/** Directories one server takes in its life before new sessions of its key get a new server. A
 *  disposed instance does not give all its memory back (~13 MB stays per directory served, measured
 *  with 1.18.33, docs/performance.md): past about 32 of them the leftovers cost as much as a fresh
 *  server (~470 MB), so a long-lived server stays below about twice a fresh one. */
export const MAX_DIRECTORIES_PER_SERVER = 32;

interface Server {
  key: string;
  ready: Promise<{ proc: ServerProcess; url: string; instances: Instances }>;
  refs: number;
  /** Set once the process is gone or being killed: no new lease may join it. */
  closing: boolean;
  lost: boolean;
}

export function serverKey(spec: Pick<ServerSpec, 'executable' | 'env'>): string {
  const env = Object.keys(spec.env)
    .sort()
    .map((name) => [name, spec.env[name]]);
  return createHash('sha256').update(JSON.stringify([spec.executable, env])).digest('hex');
}

export class ServerPool {
  private readonly servers = new Map<string, Server>();
  private unshared = 0;

  /** `share` false: every acquire gets a server of its own (--opencode-servers per-session). */
  constructor(
    private readonly launcher: ServerLauncher,
    private readonly share: boolean,
    private readonly maxDirectories = MAX_DIRECTORIES_PER_SERVER,
  ) {}

  /** Whether sessions may share servers (false: --opencode-servers per-session). */
  get shares(): boolean {
    return this.share;
  }

  /** Servers new sessions may join, running or starting (tests). */
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
    let instance;
    try {
      if (server.closing) throw new Error('the server exited before a session could be created on it');
      instance = await running.instances.join(spec.cwd, logger);
      // It has taken its last new directory: its sessions stay, new ones of its key get a new server.
      if (running.instances.served >= this.maxDirectories) this.forget(server);
      if (server.closing) {
        running.instances.leave(instance, false);
        throw new Error('the server exited before a session could be created on it');
      }
    } catch (err) {
      // Nothing was attached, so nothing is reported; a server nobody holds any more goes.
      if (--server.refs === 0 && !server.closing) void this.close(server, running.proc);
      throw err;
    }
    return this.lease(server, instance, running);
  }

  private start(key: string, spec: ServerSpec, logger: ServerLogger): Server {
    const server: Server = { key, refs: 0, closing: false, lost: false, ready: undefined! };
    server.ready = (async () => {
      const { proc, url } = await this.launcher.launch(spec, logger).catch((err: Error) => {
        this.forget(server);
        throw err;
      });
      const instances = new Instances(this.launcher, { proc, url }, (reason, log) => {
        if (server.closing) return;
        // The server lives but a stream is gone: nothing more would reach those sessions.
        log.warn({ reason, sessions: server.refs }, 'opencode event stream ended; killing the shared server');
        server.lost = true;
        server.closing = true;
        void proc.kill();
      });
      void proc.exited.then((exit) => {
        server.closing = true;
        this.forget(server);
        for (const listener of instances.closeAll()) listener.exit(exit, server.lost);
      });
      return { proc, url, instances };
    })();
    return server;
  }

  private lease(server: Server, instance: Instance, running: { proc: ServerProcess; url: string; instances: Instances }): ServerLease {
    let listener: ServerListener | undefined;
    let released: Promise<ChildExit | undefined> | undefined;
    return {
      url: running.url,
      pid: running.proc.pid,
      get shared() {
        return server.refs > 1;
      },
      attach: (l) => {
        if (released) return;
        listener = l;
        instance.listeners.add(l);
      },
      release: () => {
        if (released) return released;
        if (listener) instance.listeners.delete(listener);
        server.refs--;
        // A directory left on a server others still use is disposed of; the last lease: the
        // server goes, and no acquire may join it meanwhile.
        running.instances.leave(instance, server.refs > 0 && !server.closing);
        return (released = server.refs > 0 ? Promise.resolve(undefined) : this.close(server, running.proc));
      },
    };
  }

  private close(server: Server, proc: ServerProcess): Promise<ChildExit> {
    server.closing = true;
    this.forget(server);
    return proc.kill();
  }

  private forget(server: Server): void {
    if (this.servers.get(server.key) === server) this.servers.delete(server.key);
  }
}
