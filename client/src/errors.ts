// One error type for everything that goes wrong: a problem+json answer from the daemon keeps its
// catalogue code and context fields, and what never got an answer (the network, a timeout, an
// abort, a stream that could not be resumed) gets a code of its own, so callers switch on `code`
// and never on message text.
import type { Problem, ProblemCode } from './types.js';

/** Codes the client itself gives, for failures that are not a daemon's problem+json answer. */
export type ClientErrorCode =
  /** The request never got an HTTP answer: refused, reset, DNS, CORS (in browsers). */
  | 'network_error'
  /** A timeout this client applied: `timeoutMs` before the answer, or a stream silent for `idleTimeoutMs`. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** An answer that is not what the API promises: an error status without problem+json, unparsable JSON. */
  | 'invalid_response'
  /** The daemon ended a stream it otherwise keeps open (a deleted session, a stopping daemon, a
   *  subscriber that fell behind); `session.events()` reconnects, so it is seen only as the `cause` of `stream_failed`. */
  | 'stream_closed'
  /** `session.events()` gave up: `maxAttempts` reconnections in a row made no progress (`cause` is the last failure). */
  | 'stream_failed'
  /** The daemon sent an event whose sequence skips ahead of the last one: events would be missing. */
  | 'sequence_gap';

/** Every code an AgentwireError can carry; open-ended, since a newer daemon may add catalogue codes. */
export type ErrorCode = ProblemCode | ClientErrorCode | (string & {});

const STANDARD = new Set(['type', 'title', 'status', 'detail', 'code']);

export class AgentwireError extends Error {
  override readonly name = 'AgentwireError';
  /** The HTTP status of the answer; undefined when there was none (network, timeout, abort). */
  readonly status: number | undefined;
  /** The daemon's catalogue code (`session_not_found`, `events_evicted` …) or a ClientErrorCode. */
  readonly code: ErrorCode;
  /** The problem's `detail` (for people), or what the client saw. */
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** The problem's context fields beyond the standard five: `sessionId`, `oldestAvailable`, `errors` … */
  readonly fields: Record<string, unknown>;
  /** The whole problem+json body, when there was one. */
  readonly problem: Problem | undefined;
  /** The daemon's `X-Request-Id` for this request, to find it in the daemon's log. */
  readonly requestId: string | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { status?: number; problem?: Problem; requestId?: string; cause?: unknown } = {},
  ) {
    super(`${code}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = detail;
    this.status = options.status ?? options.problem?.status;
    this.problem = options.problem;
    this.title = options.problem?.title;
    this.type = options.problem?.type;
    this.requestId = options.requestId;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(options.problem ?? {})) if (!STANDARD.has(key)) fields[key] = value;
    this.fields = fields;
  }

  /** True for this error class across bundle copies (instanceof fails when a page loads two builds). */
  static is(error: unknown): error is AgentwireError {
    return error instanceof AgentwireError || (error instanceof Error && error.name === 'AgentwireError' && 'code' in error);
  }
}

/** The error for a non-2xx answer: its problem+json when it is one, otherwise `invalid_response`. */
export async function errorFromResponse(response: Response, method: string, url: string): Promise<AgentwireError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isProblem(body)) {
    return new AgentwireError(body.code, body.detail, { status: response.status, problem: body, ...(requestId ? { requestId } : {}) });
  }
  const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new AgentwireError('invalid_response', `${method} ${url} answered ${response.status} without a problem+json body: ${snippet}`, {
    status: response.status,
    ...(requestId ? { requestId } : {}),
  });
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const p = body as Record<string, unknown>;
  return typeof p.code === 'string' && typeof p.status === 'number' && typeof p.detail === 'string';
}
