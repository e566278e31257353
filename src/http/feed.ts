// The daemon-wide feed: every session's entries in commit order, by one cursor (docs/feed.md).
// Poll (GET /v1/events) and replay-then-live SSE (GET /v1/events/sse).
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import { FEED_QUERY_DOCUMENT, FeedQuery, FeedResponse, FeedSseQuery } from '../schema/feed.js';
import { feedSseStream, json } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import type { SessionManager } from '../sessions/session-manager.js';
import { lastEventId, DEFAULT_POLL_LIMIT } from './events.js';
import { feedPage, type FeedFilter } from './feed-frames.js';
import { FeedStream } from './feed-stream.js';
import { SSE_HEADERS } from './log-stream.js';
import { route } from './route.js';
import { wantsRaw } from './validate.js';

const getFeed = route({
  method: 'get', path: '/v1/events', operationId: 'getFeed', tag: 'events', auth: 'bearer',
  summary: "Poll every session's entries after a feed cursor",
  query: { schema: FeedQuery, document: z.object({ ...FEED_QUERY_DOCUMENT, limit: z.number().int().min(1).max(10000).optional().openapi({ description: 'Entries at most; default 1000' }) }) },
  ok: { 200: json(FeedResponse, 'A page of feed entries') }, errors: ['events_evicted', 'offset_ahead'],
  async handler(input, { sessions }) {
    const q = input.query;
    const body = feedPage(sessions.feed, q.after ?? 0, q.limit ?? DEFAULT_POLL_LIMIT, filterOf(q), wantsRaw(q));
    return input.reply.type('application/json; charset=utf-8').send(body);
  },
});

const streamFeedSse = route({
  method: 'get', path: '/v1/events/sse', operationId: 'streamFeedSse', tag: 'events', auth: 'bearer-or-query-token',
  summary: "Replay every session's entries after the cursor, then stream live",
  query: { schema: FeedSseQuery, document: z.object(FEED_QUERY_DOCUMENT) },
  headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume cursor (what a reconnecting EventSource sends); wins over after' }) }),
  ok: { 200: feedSseStream('The entries after the cursor, then live ones.') },
  errors: ['events_evicted', 'offset_ahead', 'too_many_subscribers'],
  async handler(input, { sessions, config, metrics }) {
    const { req, reply } = input;
    const q = input.query;
    const after = lastEventId(req.headers['last-event-id']) ?? q.after ?? 0;
    sessions.feed.assertAvailable(after);
    const stream = openFeedReader(sessions, config, reply.raw, after, filterOf(q), wantsRaw(q), metrics);
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...SSE_HEADERS });
    stream.start();
  },
});

export const feedRoutes = [getFeed, streamFeedSse];

type FilterQuery = { session_id?: string | undefined; sessionId?: string | undefined; agent?: string | undefined; types?: string | undefined };

function filterOf(q: FilterQuery): FeedFilter {
  const sessionId = q.session_id ?? q.sessionId;
  const types = q.types?.split(',').map((t) => t.trim()).filter((t) => t !== '');
  return { ...(sessionId ? { sessionId } : {}), ...(q.agent ? { agent: q.agent } : {}), ...(types?.length ? { types: new Set(types) } : {}) };
}

/** A feed reader, counted against --max-subscribers (the feed is one more log to follow) and in the metrics. */
function openFeedReader(
  sessions: SessionManager, config: Config, res: import('node:http').ServerResponse,
  after: number, filter: FeedFilter, includeRaw: boolean, metrics: import('../metrics/registry.js').Metrics,
): FeedStream {
  const feed = sessions.feed;
  if (feed.subscribers >= config.maxSubscribersPerSession) {
    throw new ApiError('too_many_subscribers', `The feed already has ${feed.subscribers} readers (--max-subscribers).`, { limit: config.maxSubscribersPerSession });
  }
  feed.subscribers++;
  metrics.subscriberOpened('sse');
  return new FeedStream(feed, res, {
    after, includeRaw, filter,
    maxLag: config.feedMaxLag, lagGraceMs: config.subscriberLagGraceMs,
    keepAliveMs: config.sseKeepAliveMs, retryMs: config.sseRetryMs,
    onClose: () => {
      feed.subscribers--;
      metrics.subscriberClosed('sse');
    },
    onDropped: (reason) => metrics.subscriberDropped(reason),
  });
}
