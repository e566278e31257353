// POST /stream (and /v1/stream): the sandbox stream a chat backend speaks (docs/stream.md,
// the chat backend's sandbox envelope reference). The route opens the dispatch (sessions/stream-dispatch.ts),
// listens to the session's log before it sends, and answers 200 NDJSON only once the turn has
// started, so a refusal is still problem+json. The writer is a cursor into the log, paced like
// every other stream (pull-stream.ts): it reads a bounded batch, maps it (sandbox-lines.ts) and
// writes only while the socket takes data, so the only backlog is the log itself. Exactly one
// terminal line (result or error) ends every stream the daemon ends; a caller that goes away
// first gets nothing more, and its turn is stopped.
import type { ServerResponse } from 'node:http';
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { ApiError } from '../errors.js';
import { StreamLine, StreamRequest, type StreamErrorCode } from '../schema/sandbox-stream.js';
import type { EventLog } from '../sessions/event-log.js';
import { openStreamDispatch, type StreamDispatch } from '../sessions/stream-dispatch.js';
import { NDJSON_HEADERS } from './log-stream.js';
import { PullStream, type Pacing } from './pull-stream.js';
import { BODY_ERRORS, route, SESSION_ERRORS, type RouteDeps, type RouteInput } from './route.js';
import { SandboxLines } from './sandbox-lines.js';

/** Events read per pull, and pulls per tick: a flood of deltas (which make no lines) yields between. */
const BATCH = 256;
const BATCHES_PER_TICK = 8;

export const SESSION_HEADER = 'agentwire-session-id';

export interface SandboxStreamOptions extends Pacing {
  /** Map events with sequence > after. */
  after: number;
  /** The first line: which session runs the turn. */
  opening: string;
  /** The stream is over; `aborted` when the caller went away first. Resolves once what the dispatch started is ended. */
  onEnd(aborted: boolean): Promise<void>;
}

export class SandboxStream extends PullStream {
  private cursor: number;
  private readonly lines = new SandboxLines();
  private readonly unlisten: () => void;
  private resumeScheduled = false;
  private opened = false;
  /** The log closed (the session deleted, the daemon stopping), perhaps before start(). */
  private logGone = false;

  constructor(
    private readonly log: EventLog,
    res: ServerResponse,
    private readonly options: SandboxStreamOptions,
  ) {
    super(res, options);
    this.cursor = options.after;
    this.unlisten = log.listen(
      () => this.appended(),
      () => this.logClosed(),
    );
  }

  start(): void {
    if (this.res.destroyed) return this.stop(true); // the caller left while the turn was dispatched
    this.begin(false);
    if (this.logGone) this.logClosed(); // it closed while the turn was dispatched: still one terminal line
  }

  /** Stops listening without having written anything (the dispatch was refused). */
  dispose(): void {
    this.closed = true;
    this.unlisten();
  }

  protected behind(): number {
    return this.log.lastSequence - this.cursor;
  }

  protected dropSlow(lag: number): void {
    this.end('slow_reader', `the reader fell ${lag} events behind with its socket full`);
  }

  protected socketClosed(): void {
    if (!this.closed) this.stop(true);
  }

  protected pump(force = false): void {
    if (this.closed) return;
    if (!this.opened) this.openingLine();
    try {
      this.pull(force);
    } catch (err) {
      const evicted = err instanceof ApiError && err.code === 'events_evicted';
      return this.end(evicted ? 'slow_reader' : 'internal_error', evicted ? 'events of this turn were evicted before the stream read them' : 'the daemon failed while streaming this turn');
    }
    if (this.lines.done) this.stop(false);
  }

  private openingLine(): void {
    this.opened = true;
    this.write([{ type: 'log', level: 'info', message: this.options.opening, ts: Date.now() }], true);
  }

  private pull(force: boolean): void {
    for (let n = 0; !this.lines.done && (force || !this.waitingDrain) && this.cursor < this.log.lastSequence; n++) {
      if (n === BATCHES_PER_TICK && !force) return this.resumeLater();
      const out: StreamLine[] = [];
      try {
        for (const event of this.log.read(this.cursor, BATCH)) {
          out.push(...this.lines.map(event));
          this.cursor = event.sequence;
          if (this.lines.done) break;
        }
        if (!this.lines.done && this.cursor >= this.log.lastSequence) out.push(...this.lines.flush());
      } finally {
        // Lines mapped before a failure go out first: a step's running line before the error closes it.
        this.write(out, force);
      }
    }
  }

  private resumeLater(): void {
    if (this.resumeScheduled) return;
    this.resumeScheduled = true;
    setImmediate(() => {
      this.resumeScheduled = false;
      this.pump();
    });
  }

  private write(lines: StreamLine[], force: boolean): void {
    if (lines.length === 0) return;
    const text = lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
    if (!this.out.write(text) && !force) this.waitingDrain = true;
  }

  /** The log gets nothing more (the session was deleted, the daemon is stopping): what is there, then the end. */
  private logClosed(): void {
    this.logGone = true;
    if (this.closed || !this.started) return;
    this.pump(true);
    this.end('terminated', 'the session was deleted or the daemon is stopping');
  }

  /** Ends the stream from the daemon's side: an error line unless a terminal line was written. */
  private end(code: StreamErrorCode, message: string): void {
    if (this.closed) return;
    this.write(this.lines.fail(code, message, Date.now()), true);
    this.stop(false);
  }

  /** The stream is over: stop reading, end what the dispatch started, then close the response. */
  private stop(aborted: boolean): void {
    if (this.closed) return;
    if (!aborted && !this.lines.done) this.write(this.lines.fail('internal_error', 'the stream ended without a result', Date.now()), true);
    this.closed = true;
    this.unlisten();
    this.stopPacing();
    void this.options
      .onEnd(aborted)
      .catch(() => {})
      .finally(() => {
        if (!aborted && this.started) this.out.end();
      });
  }
}

const ndjsonLines: ResponseConfig = {
  description:
    'The turn as NDJSON (`application/x-ndjson`), one StreamLine per line: `log`, `step` (a running line, then a succeeded or failed one with the same id), and exactly one terminal line, `result` or `error`, after which the stream ends. Every line has `ts` (epoch ms). The `agentwire-session-id` header names the session. See docs/stream.md.',
  headers: {
    [SESSION_HEADER]: { description: 'The session running the turn (continue it with `sessionId` when it was kept)', schema: { type: 'string' as const } },
  },
  content: { 'application/x-ndjson': { schema: StreamLine } },
};

export const postStream = route({
  method: 'post', path: '/stream', operationId: 'postStream', tag: 'sessions', auth: 'bearer',
  summary: 'Run one turn of a chat dispatch and stream it as log, step, result and error lines (the sandbox stream)',
  description:
    'A chat backend\'s dispatch: the recent turns and the new message (last, from the user), the agent and the options a create takes, or a `sessionId` to continue. A fresh session gets the earlier turns as a marked preamble and is ended when the stream ends (unless `keepSession`). Permission requests and questions are answered by `permissions`. Closing the connection interrupts the turn. See docs/stream.md.',
  body: StreamRequest,
  ok: { 200: ndjsonLines },
  errors: [...SESSION_ERRORS, ...BODY_ERRORS, 'invalid_request', 'invalid_cwd', 'turn_in_progress', 'session_ended', 'too_many_sessions', 'agent_not_available', 'agent_start_failed', 'agent_io_failed', 'shutting_down'],
  handler: serveStream,
});

async function serveStream(input: RouteInput<unknown, unknown, StreamRequest>, { sessions, config }: RouteDeps): Promise<void> {
  const { reply } = input;
  const dispatch = await openStreamDispatch(sessions, input.body, config.permissionPolicy);
  const { session } = dispatch;
  const stream = new SandboxStream(session.log, reply.raw, {
    after: session.log.lastSequence,
    opening: `agentwire session ${session.id} (${session.request.agent}, ${dispatch.created ? 'created for this dispatch' : 'continued'})`,
    maxLag: config.subscriberMaxLag,
    lagGraceMs: config.subscriberLagGraceMs,
    keepAliveMs: config.sseKeepAliveMs,
    retryMs: config.sseRetryMs,
    onEnd: (aborted) => dispatch.close(aborted),
  });
  await send(dispatch, stream);
  reply.hijack();
  reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...NDJSON_HEADERS, [SESSION_HEADER]: session.id });
  stream.start();
}

/** The turn starts, or the dispatch is undone and the route answers with the problem. */
async function send(dispatch: StreamDispatch, stream: SandboxStream): Promise<void> {
  try {
    await dispatch.send();
  } catch (err) {
    stream.dispose();
    await dispatch.undo().catch(() => {});
    throw err;
  }
}

/** The same route under /v1, where the rest of the API is. */
export const postStreamV1 = route({ ...postStream, path: '/v1/stream', operationId: 'postStreamV1' });
export const streamRoutes = [postStream, postStreamV1];
