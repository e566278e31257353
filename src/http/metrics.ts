// GET /metrics (Prometheus text format, docs/operations.md) and the hooks counting every HTTP
// answer by route pattern and status. Behind the token like every route but /v1/health (auth.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteAnswers } from '../metrics/http-requests.js';
import type { Metrics } from '../metrics/registry.js';
import { z } from '../schema/zod.js';
import { route } from './route.js';

const getMetrics = route({
  method: 'get', path: '/metrics', operationId: 'getMetrics', tag: 'daemon', auth: 'bearer',
  summary: 'Prometheus metrics: sessions, turns, HITL, streams, agent processes, installs, HTTP (docs/operations.md)',
  ok: { 200: { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: z.string() } } } },
  async handler({ reply }, { metrics }) {
    const text = await metrics.scrape();
    return reply.type(metrics.contentType).send(text);
  },
});

export const metricsRoutes = [getMetrics];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's answer counts, made the first time it answers (one table per Fastify route). */
    answers?: RouteAnswers;
  }
}

/** The table a request is counted in: its route's, made once per route. */
function answersOf(req: FastifyRequest, metrics: Metrics): RouteAnswers {
  const config = req.routeOptions.config;
  return (config.answers ??= metrics.httpRoute(config.url ?? 'unmatched'));
}

export function installMetricsHooks(app: FastifyInstance, metrics: Metrics): void {
  // The route pattern, never the raw URL: session ids in paths would make one series per session.
  // Fastify runs onResponse when the response finished (streams too, once the daemon ends them);
  // a request no route matched has no pattern and is counted as `unmatched`.
  app.addHook('onResponse', (req, reply, done) => {
    answersOf(req, metrics).count(req.method, reply.statusCode);
    done();
  });
  // A request the client closed before its answer finished: mostly event streams the client left
  // (the daemon rarely ends an SSE stream itself), or a client that gave up waiting.
  app.addHook('onRequestAbort', (req, done) => {
    answersOf(req, metrics).count(req.method, 'aborted');
    done();
  });
  app.addHook('onClose', (_app, done) => {
    metrics.close();
    done();
  });
}
