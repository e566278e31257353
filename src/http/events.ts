// Reading a session's events: poll (GET /events) and the replay-then-live SSE stream.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Metrics } from '../metrics/registry.js';
import { EventsQuery, SseQuery } from '../schema/api.js';
import type { Session } from '../sessions/session.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { LogStream, SSE_HEADERS } from './log-stream.js';
import { parse, wantsRaw } from './validate.js';

/** Poll page size when the client does not say (see docs/events.md). */
export const DEFAULT_POLL_LIMIT = 1000;

export function eventRoutes(app: FastifyInstance, sessions: SessionManager, config: Config, metrics?: Metrics): void {
  app.get('/v1/sessions/:id/events', { config: { query: true } }, async (req, reply) => {
    const session = sessions.get((req.params as { id: string }).id);
    const q = parse(EventsQuery, req.query, 'query');
    const after = q.offset ?? 0;
    const limit = q.limit ?? DEFAULT_POLL_LIMIT;
    const events = session.log.readJson(after, limit, wantsRaw(q));
    const hasMore = after + events.length < session.log.lastSequence;
    // Events are stored serialized; the page is assembled, not re-stringified.
    return reply.type('application/json; charset=utf-8').send(`{"events":[${events.join(',')}],"hasMore":${hasMore}}`);
  });

  app.get('/v1/sessions/:id/events/sse', { config: { query: true } }, async (req, reply) => {
    const session = sessions.get((req.params as { id: string }).id);
    const q = parse(SseQuery, req.query, 'query');
    const after = lastEventId(req.headers['last-event-id']) ?? q.offset ?? 0;
    session.log.assertAvailable(after);
    const stream = openSubscriber(session, config, reply.raw, { format: 'sse', after, includeRaw: wantsRaw(q) }, metrics);
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...SSE_HEADERS });
    stream.start();
  });
}

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

function lastEventId(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new ApiError('invalid_request', `Last-Event-ID must be an event sequence number, got '${value}'.`);
  }
  return Number(value.trim());
}
