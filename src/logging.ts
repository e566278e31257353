// Logger settings: pino JSON to stdout (or, on a terminal, through src/log-format.ts), a request
// id on every request's lines (taken from X-Request-Id when the caller sends a sane one), and no
// secret ever written: the Authorization header and `?token=` are redacted before anything is
// serialized. Fastify's own two lines per request are off; src/http/request-log.ts writes one, at
// debug only (docs/logging.md).
import type { FastifyServerOptions } from 'fastify';
import type { IdGenerator } from './util/deps.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The `msg` of the records a person watching the daemon cares about. They are named once, here,
 * because the terminal format (src/log-format.ts) draws each as its own sentence from its fields:
 * a message changed in one place only would fall back to the plain rendering without a word.
 */
export const LogMessage = {
  /** debug: the effective configuration, secrets redacted (main.ts). */
  configuration: 'starting',
  /** info: the daemon listens: version, url, inspector, dataDir, token (its source), tokenFile. */
  listening: 'listening',
  /** debug: one HTTP request answered or given up by its client (src/http/request-log.ts). */
  request: 'request completed',
  /** info: a session's agent is up: sessionId, agent, pid, cwd, pooled, nativeSessionId. */
  sessionStarted: 'session started',
  /** info (warn when the reason is error): sessionId, agent, reason, terminatedBy, exitCode, message. */
  sessionEnded: 'session ended',
  /** info (warn when nobody asked for it and the code is not 0): sessionId, pid, exitCode, signal, requested. */
  agentExited: 'agent process exited',
} as const;

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** Whether a logger at `configured` writes records of `level` (pino's order). */
export function levelEnables(configured: string, level: string): boolean {
  return (LEVELS[configured] ?? LEVELS.info!) <= (LEVELS[level] ?? Infinity);
}

/**
 * The URL as logged: the value of every query parameter whose key, once decoded as the query
 * parser decodes it, is `token` (any case) is replaced. The raw text is not enough: `?%74oken=`
 * is the same key to the parser (and to auth), but not to a regular expression over the URL. The
 * router (find-my-way) takes the query to start after the first `?` or `#`, and to run to the end,
 * `#` included (`/v1/sessions#token=…` and `?a=1#&token=…` both hand auth a token); so the query
 * here starts there too, and is split on `#` as well as `&`, which hides a token whatever a
 * client meant by the `#` (docs/logging.md).
 */
export function redactUrl(url: string): string {
  const q = url.search(/[?#]/);
  if (q < 0 || !/t|%/i.test(url.slice(q))) return url;
  const parts = url.slice(q + 1).split(/([&#])/).map((part, i) => {
    if (i % 2 === 1) return part; // a separator
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    return decodedKey(key).toLowerCase() === 'token' ? `${key}=[redacted]` : part;
  });
  return `${url.slice(0, q + 1)}${parts.join('')}`;
}

function decodedKey(key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return 'token'; // a bad escape: what the parser makes of it is unknown, so its value is hidden
  }
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
