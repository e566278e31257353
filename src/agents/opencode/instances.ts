// The OpenCode instances in use on one server, one per directory: each with ONE
// `/event?directory=` stream, opened before any session is created there and heard by the sessions
// in that directory only, and disposed of when its last session leaves. Kept apart from
// shared-server.ts, which decides which server a session gets; this is what happens inside one.
import type { ServerLauncher, ServerListener, ServerLogger, ServerProcess } from './shared-server.js';
import type { EventStream, StreamHandlers } from './sse.js';

export interface Instance {
  readonly path: string;
  refs: number;
  readonly listeners: Set<ServerListener>;
  stream: Promise<EventStream>;
  /** The stream once open, so the server's end closes it at once. */
  opened?: EventStream;
  /** The logger of the session that opened it. */
  readonly logger: ServerLogger;
}

export class Instances {
  private readonly open = new Map<string, Instance>();
  /** Instances being disposed of, by directory: a new stream there waits for it. */
  private readonly disposing = new Map<string, Promise<void>>();
  /** Directories opened so far, counting a return after a dispose. */
  served = 0;

  /** `lost`: a stream ended while the server lives (the pool decides what that means). */
  constructor(
    private readonly launcher: ServerLauncher,
    private readonly server: { proc: ServerProcess; url: string },
    private readonly lost: (reason: string, logger: ServerLogger) => void,
  ) {}

  /** A session joins the instance of `path`: its stream opened (after a dispose there has
   *  finished) if none is, and resolved once it is open. */
  async join(path: string, logger: ServerLogger): Promise<Instance> {
    let instance = this.open.get(path);
    if (!instance) {
      this.served++;
      const i: Instance = { path, refs: 0, listeners: new Set(), stream: undefined!, logger };
      const handlers: StreamHandlers = {
        event: (data) => i.listeners.forEach((l) => l.event(data)),
        end: (reason) => {
          if (reason !== 'closed' && this.server.proc.running) this.lost(reason, logger);
        },
      };
      const previous = this.disposing.get(path) ?? Promise.resolve();
      i.stream = previous.then(() => this.launcher.subscribe(this.server.url, path, handlers)).then((stream) => (i.opened = stream));
      this.open.set(path, i);
      instance = i;
    }
    instance.refs++;
    try {
      await instance.stream;
    } catch (err) {
      this.leave(instance, false);
      throw err;
    }
    return instance;
  }

  /** A session leaves; the last one of a directory closes its stream and, when `dispose` (the
   *  server stays for others), disposes of OpenCode's instance there, so a long-lived server does
   *  not keep every directory it ever served. A session that comes back there meanwhile waits for
   *  the dispose to finish. */
  leave(instance: Instance, dispose = true): void {
    if (--instance.refs > 0 || this.open.get(instance.path) !== instance) return;
    this.open.delete(instance.path);
    // Closed at once when open, so its end reads as ours ('closed'), never as a lost stream.
    instance.opened?.close();
    const closed = instance.opened ? Promise.resolve() : instance.stream.then((s) => s.close());
    if (!dispose) return void closed.catch(() => {});
    const done = closed
      .then(() => this.launcher.dispose(this.server.url, instance.path))
      // Best effort: a server that refuses keeps an idle instance until it goes itself.
      .catch((err: Error) => instance.logger.debug({ directory: instance.path, err: err.message }, 'opencode did not dispose of an instance'));
    this.disposing.set(instance.path, done);
    void done.then(() => {
      if (this.disposing.get(instance.path) === done) this.disposing.delete(instance.path);
    });
  }

  /** The server is gone: every stream closed; who was listening, for the pool to tell. */
  closeAll(): ServerListener[] {
    const listeners: ServerListener[] = [];
    for (const instance of this.open.values()) {
      if (instance.opened) instance.opened.close();
      else instance.stream.then((s) => s.close(), () => {});
      listeners.push(...instance.listeners);
      instance.listeners.clear();
    }
    this.open.clear();
    return listeners;
  }
}
