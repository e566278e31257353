// Bounded connections (rule: Bounded buffers, for sockets): a request must arrive whole
// within --request-timeout, and at most --max-connections sockets are served at once.
//
// The time bound is Node's own server.requestTimeout: it bounds receiving a request (headers and
// body), from its first byte until the parser has the whole message, and never a response, so an
// SSE or NDJSON stream answering a complete request runs as long as it likes. Node checks it every
// connectionsCheckingInterval (default 30 s, which would let a 1 s bound fire up to 31 s late);
// the check walks only connections with an incomplete request, so it runs more often here. The
// timeout reaches clientErrorAnswerer (problems.ts) as ERR_HTTP_REQUEST_TIMEOUT: a 408
// problem+json, and the connection is closed.
//
// The count bound wraps the server's 'connection' listeners: Node's server.maxConnections would
// destroy a socket past the limit without a word, which a client reads as a network fault and
// retries at once. Here it is answered `503 too_many_connections` with Retry-After and closed.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.js';
import { writeRawProblem } from './problems.js';

/** Options for http.createServer (Fastify's `http`) and Fastify's requestTimeout. */
export function receiveTimeouts(requestTimeoutMs: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout: requestTimeoutMs,
    // Node refuses a headersTimeout above requestTimeout; 60 s is its own default.
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    // How late the check may fire: a quarter of the bound, between 100 ms and 5 s.
    connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(requestTimeoutMs / 4))),
  };
}

/** Refused sockets waiting for their 503 to leave; beyond this a refused socket is just closed. */
const MAX_REFUSING = 256;

export interface ConnectionBound {
  /** Sockets being served now. */
  readonly open: number;
}

/**
 * Serves at most `max` connections at once; one more is answered 503 problem+json and closed
 * (`onRefused` counts it). Install it once the server exists and before it listens: it takes the
 * 'connection' listeners registered so far (Node's HTTP parser among them) and calls them only
 * for sockets it admits.
 */
export function boundConnections(server: Server, max: number, onRefused: () => void = () => {}): ConnectionBound {
  const serve = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  let open = 0;
  let refusing = 0;
  server.on('connection', (socket: Socket) => {
    if (open < max) {
      open++;
      socket.once('close', () => open--);
      for (const listener of serve) listener.call(server, socket);
      return;
    }
    onRefused();
    socket.on('error', () => {}); // a client gone first is not the daemon's error
    if (refusing >= MAX_REFUSING) {
      socket.destroy();
      return;
    }
    refusing++;
    socket.once('close', () => refusing--);
    // Read the request away (unparsed): closing a socket with unread data resets it, and the reset
    // can destroy the answer before the client reads it.
    socket.resume();
    writeRawProblem(
      socket,
      new ApiError('too_many_connections', `The daemon serves at most ${max} connections at once (--max-connections); retry shortly, or close idle connections.`, { limit: max }, { 'Retry-After': '1' }),
    );
  });
  return {
    get open() {
      return open;
    },
  };
}
