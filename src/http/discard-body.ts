// A request refused before its body was read (413 on a declared Content-Length, 401, 421, 404 …)
// may still be sending that body. Closing the socket then makes the kernel answer the unread bytes
// with a reset, which can destroy our response before the client reads it, and a client still
// writing gets EPIPE instead of the answer. So the body is read and thrown away, up to a bound in
// bytes and time, while the answer goes out on a connection that stays usable afterwards; past the
// bound the socket is closed (by then the client has had the answer for a while).
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';

/** The most body bytes read away after a refusal: 20 MB uploads still get their answer. */
export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
/** The longest a refused body may keep arriving. */
export const DISCARD_MAX_MS = 30_000;

const discarding = new WeakSet<IncomingMessage>();

export function discardUnreadBody(req: IncomingMessage, reply: FastifyReply): void {
  // `complete` is false only on a real request still receiving (inject() has no socket to save).
  if (req.complete !== false || req.readableEnded || req.destroyed || discarding.has(req)) return;
  discarding.add(req);
  // Fastify asks for Connection: close after a body it did not finish reading, and so may the
  // client; Node would then close the socket as soon as the answer is written, with the body
  // still arriving. Once the body is read the connection is clean again; a client that wanted it
  // closed closes it itself.
  reply.header('connection', 'keep-alive');
  const cut = () => req.socket?.destroy();
  const timer = setTimeout(cut, DISCARD_MAX_MS);
  timer.unref?.();
  let seen = 0;
  // A 'data' listener (not Node's own dump) keeps the byte count; it also stops Node from
  // dumping the body unbounded once the answer is finished.
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_MAX_BYTES) {
      clearTimeout(timer);
      cut();
    }
  });
  const done = () => clearTimeout(timer);
  req.once('end', done);
  req.once('close', done);
  req.resume();
}
