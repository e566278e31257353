// The session's end of Amp's `delegate` permission rule: a unix socket in the session's 0700 temp
// directory that the delegate program (delegate.js) connects to, one connection per tool call. A
// request carries the per-session secret and {tool, thread_id, input}; the connection stays open
// until the driver answers `allow` or `reject`. Bounded: request size, connections at once.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { deeperThan } from '../../util/json-limits.js';

export interface DelegateRequest {
  tool: string;
  thread_id: string | null;
  input: unknown;
}

/** Answers one blocked delegate; later calls are ignored (the socket may be gone). */
export type DelegateAnswer = (allow: boolean, message?: string) => void;

const MAX_REQUEST_BYTES = 8 << 20;
const MAX_CONNECTIONS = 32;

export class DelegateServer {
  readonly secret = randomBytes(24).toString('hex');
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly socketPath: string,
  ) {}

  static async start(socketPath: string, onRequest: (request: DelegateRequest, answer: DelegateAnswer) => void): Promise<DelegateServer> {
    let self: DelegateServer | undefined;
    const server = createServer((socket) => self?.accept(socket, onRequest));
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    self = new DelegateServer(server, socketPath);
    return self;
  }

  private accept(socket: Socket, onRequest: (request: DelegateRequest, answer: DelegateAnswer) => void): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = '';
    let done = false;
    const answer: DelegateAnswer = (allow, message) => {
      if (done) return;
      done = true;
      if (!socket.destroyed) socket.end(`${JSON.stringify({ allow, ...(message ? { message } : {}) })}\n`);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (done || buffer.includes('\n')) return;
      buffer += chunk;
      if (buffer.length > MAX_REQUEST_BYTES) return answer(false, 'agentwire: permission request too large');
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      const request = this.parse(buffer.slice(0, nl));
      if (!request) return answer(false, 'agentwire: unauthorised or malformed permission request');
      onRequest(request, answer);
    });
  }

  private parse(line: string): DelegateRequest | undefined {
    try {
      if (deeperThan(line)) return undefined;
      const body = JSON.parse(line) as Record<string, unknown>;
      const given = Buffer.from(typeof body.secret === 'string' ? body.secret : '');
      const expected = Buffer.from(this.secret);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      if (typeof body.tool !== 'string') return undefined;
      return { tool: body.tool, thread_id: typeof body.thread_id === 'string' ? body.thread_id : null, input: body.input ?? null };
    } catch {
      return undefined;
    }
  }

  /** Stops listening and drops every connection: blocked delegates exit with a rejection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
