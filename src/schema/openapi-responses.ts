// The success responses route declarations (src/http/route.ts) are written with: JSON bodies,
// empty ones and the event streams. The security and problem+json responses every operation
// shares are src/openapi/cross-cutting.ts's.
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { HealthResponse } from './api.js';
import { UniversalEvent } from './events.js';
import { FeedEntry } from './feed.js';
import { z } from './zod.js';

export const json = <T extends z.ZodType>(schema: T, description: string): ResponseConfig => ({
  description,
  content: { 'application/json': { schema } },
});
export const empty = (description: string): ResponseConfig => ({ description });

const SSE_FRAMES =
  '`text/event-stream`: `retry:` once, then one frame per event with `id: <sequence>` and a single `data:` line holding one UniversalEvent as JSON (no `event:` line, so `EventSource.onmessage` sees every event); a `: keep-alive` comment every 15 s. The schema is the type of one frame\'s `data`.';
const NDJSON_LINES = '`application/x-ndjson` (with `Accept: application/x-ndjson`): one UniversalEvent JSON per line. The schema is the type of one line.';

/** GET …/events/sse: SSE only. */
export const sseStream = (what: string): ResponseConfig => ({
  description: `${what} ${SSE_FRAMES}`,
  content: { 'text/event-stream': { schema: UniversalEvent } },
});
/** GET /v1/events/sse: the daemon-wide feed. */
export const feedSseStream = (what: string): ResponseConfig => ({
  description: `${what} \`text/event-stream\`: \`retry:\` once, then one frame per entry with \`id: <cursor>\` and a single \`data:\` line holding one FeedEntry as JSON (no \`event:\` line); a \`: keep-alive\` comment every 15 s. The schema is the type of one frame's \`data\`.`,
  content: { 'text/event-stream': { schema: FeedEntry } },
});
/** POST …/messages/stream: SSE, or NDJSON when the client asks for it. */
export const sseOrNdjsonStream = (what: string): ResponseConfig => ({
  description: `${what} ${SSE_FRAMES} ${NDJSON_LINES}`,
  content: { 'text/event-stream': { schema: UniversalEvent }, 'application/x-ndjson': { schema: UniversalEvent } },
});

/** Health answers 503 with its own body (not a problem) while the daemon drains. */
export const draining: ResponseConfig = json(HealthResponse, 'Draining: `{status: "draining"}`; a load balancer should stop sending work');
