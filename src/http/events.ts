// Reading a session's events: poll (GET /events) and the replay-then-live SSE stream.
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Metrics } from '../metrics/registry.js';
import { EventsQuery, EventsResponse, SseQuery } from '../schema/api.js';
import { json, sseStream } from '../schema/openapi-responses.js';
import type { Session } from '../sessions/session.js';
import { z } from '../schema/zod.js';
import { pollPage } from './frames.js';
import { LogStream, SSE_HEADERS } from './log-stream.js';
import { route, SESSION_ERRORS, SessionPath } from './route.js';
import { wantsRaw } from './validate.js';

/** Poll page size when the client does not say (see docs/events.md). */
export const DEFAULT_POLL_LIMIT = 1000;

/** The query parameters both streams and the poll document (the aliases are accepted, not advertised). */
export const RAW_QUERY = {
  include_raw: z.boolean().optional().openapi({ description: 'Fill `raw` with the native payload (alias: includeRaw)' }),
};
const OFFSET = z.number().int().min(0).optional().openapi({ description: 'Exclusive sequence cursor (default 0): events with a greater sequence follow' });

const getEvents = route({
  method: 'get', path: '/v1/sessions/:id/events', operationId: 'getEvents', tag: 'events', auth: 'bearer',
  summary: 'Poll events after an offset',
  params: SessionPath,
  query: {
    schema: EventsQuery,
    document: z.object({ offset: OFFSET, limit: z.number().int().min(1).max(10000).optional().openapi({ description: 'Default 1000' }), ...RAW_QUERY }),
  },
  ok: { 200: json(EventsResponse, 'A page of events') }, errors: [...SESSION_ERRORS, 'events_evicted', 'offset_ahead'],
  async handler(input, { sessions }) {
    const session = sessions.read(input.params.id);
    const q = input.query;
    const after = q.offset ?? 0;
    const limit = q.limit ?? DEFAULT_POLL_LIMIT;
    session.log.assertAvailable(after);
    // Events are stored serialized; the page is assembled from their bytes, never decoded.
    return input.reply.type('application/json; charset=utf-8').send(pollPage(session.log, after, limit, wantsRaw(q)));
  },
});

const streamEventsSse = route({
  method: 'get', path: '/v1/sessions/:id/events/sse', operationId: 'streamEventsSse', tag: 'events', auth: 'bearer-or-query-token',
  summary: 'Replay events after the cursor, then stream live',
  params: SessionPath,
  query: { schema: SseQuery, document: z.object({ offset: OFFSET, ...RAW_QUERY }) },
  headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume cursor (what a reconnecting EventSource sends); wins over offset' }) }),
  ok: { 200: sseStream('The backlog after the cursor, then live events.') },
  errors: [...SESSION_ERRORS, 'events_evicted', 'offset_ahead', 'too_many_subscribers'],
  async handler(input, { sessions, config, metrics }) {
    const { req, reply } = input;
    const session = sessions.read(input.params.id);
    const q = input.query;
    const after = lastEventId(req.headers['last-event-id']) ?? q.offset ?? 0;
    session.log.assertAvailable(after);
    const stream = openSubscriber(session, config, reply.raw, { format: 'sse', after, includeRaw: wantsRaw(q) }, metrics);
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...SSE_HEADERS });
    stream.start();
  },
});

export const eventRoutes = [getEvents, streamEventsSse];

/** Creates a log subscriber counted against the session's subscriber limit (and in the metrics). */
export function openSubscriber(
  session: Session,
  config: Config,
  res: import('node:http').ServerResponse,
  options: Pick<import('./log-stream.js').LogStreamOptions, 'format' | 'after' | 'includeRaw' | 'until' | 'onClose'>,
  metrics?: Metrics,
): LogStream {
  if (session.subscribers >= config.maxSubscribersPerSession) {
    throw new ApiError('too_many_subscribers', `Session '${session.id}' already has ${session.subscribers} stream subscribers (--max-subscribers).`, {
      sessionId: session.id,
      limit: config.maxSubscribersPerSession,
    });
  }
  session.subscribers++;
  metrics?.subscriberOpened(options.format);
  return new LogStream(session.log, res, {
    ...options,
    maxLag: config.subscriberMaxLag,
    lagGraceMs: config.subscriberLagGraceMs,
    keepAliveMs: config.sseKeepAliveMs,
    retryMs: config.sseRetryMs,
    onClose: (byClient) => {
      session.subscribers--;
      metrics?.subscriberClosed(options.format);
      options.onClose?.(byClient);
    },
    ...(metrics ? { onDropped: (reason: 'lag' | 'evicted') => metrics.subscriberDropped(reason) } : {}),
  });
}

export function lastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new ApiError('invalid_request', `Last-Event-ID must be an event sequence number, got '${value}'.`);
  }
  return Number(value.trim());
}
