// The error catalogue: every error the API can answer with, its HTTP status and title, in one
// table. Everything is rendered once, as RFC 9457 application/problem+json, by app.ts.

export const CATALOGUE = {
  invalid_request: { status: 400, title: 'Invalid request' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  invalid_cwd: { status: 400, title: 'Working directory does not exist' },
  offset_ahead: { status: 400, title: 'Cursor is past the last event' },
  invalid_fork_point: { status: 400, title: 'Not a point the session can be forked at' },
  unauthorized: { status: 401, title: 'Missing or invalid bearer token' },
  origin_not_allowed: { status: 403, title: 'Origin not allowed' },
  attachment_refused: { status: 403, title: 'Attachment outside what the session may read' },
  not_found: { status: 404, title: 'No such route' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  session_not_found: { status: 404, title: 'Session not found' },
  permission_not_found: { status: 404, title: 'Permission request not found' },
  question_not_found: { status: 404, title: 'Question not found' },
  queued_message_not_found: { status: 404, title: 'No such message in the queue' },
  session_exists: { status: 409, title: 'Session already exists' },
  turn_in_progress: { status: 409, title: 'A turn is already running' },
  session_ended: { status: 409, title: 'Session has ended' },
  permission_already_resolved: { status: 409, title: 'Permission already resolved' },
  question_already_resolved: { status: 409, title: 'Question already resolved' },
  no_turn_running: { status: 409, title: 'No turn is running' },
  steer_unsupported: { status: 409, title: 'The agent cannot take a message into a running turn' },
  fork_unsupported: { status: 409, title: 'The agent cannot fork there' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  events_evicted: { status: 410, title: 'Events no longer available' },
  body_too_large: { status: 413, title: 'Request body too large' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  host_not_allowed: { status: 421, title: 'Host not allowed' },
  too_many_sessions: { status: 429, title: 'Session limit reached' },
  too_many_subscribers: { status: 429, title: 'Subscriber limit reached' },
  queue_full: { status: 429, title: 'Message queue full' },
  internal_error: { status: 500, title: 'Internal error' },
  agent_not_available: { status: 501, title: 'Agent not available' },
  agent_start_failed: { status: 502, title: 'Agent failed to start' },
  agent_io_failed: { status: 502, title: 'Agent did not accept the input' },
  agent_install_failed: { status: 502, title: 'Agent install failed' },
  shutting_down: { status: 503, title: 'Daemon is shutting down' },
  too_many_connections: { status: 503, title: 'Connection limit reached' },
  store_unavailable: { status: 507, title: 'Event store cannot take writes' },
} as const;

export type ErrorCode = keyof typeof CATALOGUE;
/** Every code, in catalogue order: the enum of Problem.code in the OpenAPI document. */
export const ERROR_CODES = Object.keys(CATALOGUE) as [ErrorCode, ...ErrorCode[]];

/** A catalogue error. Thrown anywhere in the domain; rendered once by the app's error handler. */
export class ApiError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly context: Record<string, unknown> = {},
    /** Response headers the problem needs (Allow on a 405, WWW-Authenticate on a 401). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = CATALOGUE[code].status;
    this.title = CATALOGUE[code].title;
  }

  toProblem(): Record<string, unknown> {
    // Context first, so a context field can never shadow one of the standard members.
    return {
      ...this.context,
      type: `https://agentwire.dev/problems/${this.code}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      code: this.code,
    };
  }
}

export function sessionNotFound(sessionId: string): ApiError {
  return new ApiError('session_not_found', `No session with id '${sessionId}'.`, { sessionId });
}

/** The client asked for events older than the log still holds (see docs/events.md). */
export function eventsEvicted(sessionId: string, after: number, oldest: number): ApiError {
  return new ApiError(
    'events_evicted',
    `Events after sequence ${after} were evicted by the per-session event limit; the oldest event still held is ${oldest}. ` +
      `Resume from offset ${oldest - 1} and treat sequences ${after + 1}..${oldest - 1} as lost.`,
    { sessionId, offset: after, oldestAvailable: oldest },
  );
}

/** The client's cursor is beyond the log's last event: it belongs to some other log. */
export function offsetAhead(sessionId: string, after: number, last: number): ApiError {
  return new ApiError(
    'offset_ahead',
    `Offset ${after} is past the last event of session '${sessionId}' (${last}); the cursor belongs to another log (was the session re-created?). Start again from offset 0.`,
    { sessionId, offset: after, lastSequence: last },
  );
}

/** A feed cursor older than the feed still holds: only with --persist off, whose feed is its window (docs/feed.md). */
export function feedEvicted(after: number, oldest: number): ApiError {
  return new ApiError(
    'events_evicted',
    `Feed entries after cursor ${after} are no longer held (the store keeps nothing with --persist off); the oldest still held is ${oldest}. ` +
      `Resume from cursor ${oldest - 1} and treat ${after + 1}..${oldest - 1} as lost.`,
    { offset: after, oldestAvailable: oldest },
  );
}

/** A feed cursor past the last entry: it belongs to another daemon's feed (or one with --persist off that restarted). */
export function feedAhead(after: number, last: number): ApiError {
  return new ApiError(
    'offset_ahead',
    `Cursor ${after} is past the feed's last entry (${last}); it belongs to another daemon's feed (or to a daemon with --persist off that restarted). Start again from cursor 0.`,
    { offset: after, lastCursor: last },
  );
}
