// Renders every error as application/problem+json (RFC 9457), framework errors included, and
// never leaks a stack trace: unknown errors are logged server-side and answered with a plain 500.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import { ApiError } from '../errors.js';

export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const problem = toApiError(error);
    if (problem.status >= 500) req.log.error({ err: error }, 'request failed');
    return reply.code(problem.status).type('application/problem+json').send(problem.toProblem());
  });

  app.setNotFoundHandler((req, reply) => {
    const problem = new ApiError('not_found', `No route ${req.method} ${req.url.split('?')[0]}; see GET /openapi.json.`);
    return reply.code(404).type('application/problem+json').send(problem.toProblem());
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

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (bad request line, headers too
 * large): still problem+json, never Node's default text.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large', 'The request line or headers are larger than the server accepts.')
      : new ApiError('invalid_request', 'The request could not be parsed as HTTP.');
  const body = JSON.stringify(problem.toProblem());
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
