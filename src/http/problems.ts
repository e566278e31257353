// Renders every error as application/problem+json (RFC 9457), framework errors included, and
// never leaks a stack trace: unknown errors are logged server-side and answered with a plain 500.
// This holds below the router too: requests Node's parser refuses and CONNECT are answered on
// the raw socket in the same shape.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.js';
import { discardUnreadBody } from './discard-body.js';
import type { RouteTable } from './methods.js';

export function installProblemHandlers(app: FastifyInstance, routes: RouteTable): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const problem = toApiError(error);
    if (problem.status >= 500) req.log.error({ err: error }, 'request failed');
    // A refused request may still be sending its body: read it away so the client gets to read
    // this answer, instead of a reset that can destroy it (see discard-body.ts).
    discardUnreadBody(req.raw, reply);
    return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(problem.toProblem());
  });

  app.setNotFoundHandler((req, reply) => {
    const problem = routes.refusal(req.method, req.url);
    discardUnreadBody(req.raw, reply);
    return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(problem.toProblem());
  });
}

function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Send request bodies as JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('body_too_large', `The request body is larger than the limit (--body-limit).`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'Content-Length does not match the body.');
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', error.message);
  }
  return new ApiError('internal_error', 'The daemon hit an unexpected error; it has been logged.');
}

/** How long a socket answered this way may stay half-open for the client to read and close. */
const RAW_LINGER_MS = 2_000;

/**
 * Writes a complete problem+json response straight to a socket and closes it: our side at once
 * (FIN after the answer), the descriptor once the client closes too, or after RAW_LINGER_MS,
 * so that a client that keeps sending (a trickled body) cannot keep it.
 */
export function writeRawProblem(socket: Socket, problem: ApiError): void {
  const body = JSON.stringify(problem.toProblem());
  const extra = Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json\r\n${extra}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), RAW_LINGER_MS).unref();
}

type ClientError = Error & { code?: string; rawPacket?: unknown };

/**
 * Fastify's clientErrorHandler: requests Node's HTTP parser rejects before Fastify sees them
 * (bad request line, unknown method, headers too large, headers or body too slow) are still
 * answered with problem+json, never Node's bare text or a silent close.
 */
export function clientErrorAnswerer(routes: RouteTable) {
  return (error: ClientError, socket: Socket): void => {
    // A reset or a response already under way: there is nobody to answer, or no room to.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent || error.code === 'ECONNRESET' || error.code === 'EPIPE') {
      socket.destroy();
      return;
    }
    writeRawProblem(socket, clientProblem(error, routes));
  };
}

function clientProblem(error: ClientError, routes: RouteTable): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('headers_too_large', 'The request line or headers are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return new ApiError('request_timeout', 'The request (its headers and body) did not arrive within the bound (--request-timeout); send it whole, then wait for the answer.');
    case 'HPE_INVALID_METHOD': {
      // The parser stops at the method, but the request line is in the packet it refused.
      const line = /^([!-~]{1,32}) (\S{1,8192}) HTTP\/1\.[01]\r?\n/.exec(Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '');
      if (line) return routes.refusal(line[1]!, line[2]!);
    }
  }
  return new ApiError('invalid_request', 'The request could not be parsed as HTTP.');
}
