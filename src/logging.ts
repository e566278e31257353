// Logger settings: pino JSON to stdout, a request id on every request line (taken from
// X-Request-Id when the caller sends a sane one), and no secret ever written: the Authorization
// header and `?token=` are redacted before anything is serialized.
import type { FastifyServerOptions } from 'fastify';
import type { IdGenerator } from './util/deps.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    serializers: {
      req: (req: { id: string; method: string; url: string; ip?: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.ip,
      }),
    },
  };
}

/** Request log lines carry the id as `reqId` (Fastify's label). */
export function requestIdOptions(ids: IdGenerator): Pick<FastifyServerOptions, 'genReqId'> {
  return {
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : ids.next('req');
    },
  };
}
