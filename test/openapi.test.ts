import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/schema/openapi.js';
import { makeApp } from './helpers.js';
import { VERSION } from '../src/version.js';
import { EVENT_TYPES } from '../src/schema/events.js';

const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as Record<string, any>;

describe('openapi.json', () => {
  it('is what the code generates (run `npm run openapi` after changing a schema or route)', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApi(VERSION))));
  });

  it('documents the event union on every event stream', () => {
    const paths = committed.paths as Record<string, any>;
    const sse = paths['/v1/sessions/{id}/events/sse'].get.responses['200'].content['text/event-stream'].schema;
    expect(sse).toEqual({ $ref: '#/components/schemas/UniversalEvent' });
    const turn = paths['/v1/sessions/{id}/messages/stream'].post.responses['200'].content;
    expect(Object.keys(turn).sort()).toEqual(['application/x-ndjson', 'text/event-stream']);
    const variants = committed.components.schemas.UniversalEvent.oneOf as unknown[];
    expect(variants).toHaveLength(EVENT_TYPES.length);
  });

  it('describes problem+json errors on every route', () => {
    // Only these take no input a client could get wrong.
    const infallible = new Set(['get /v1/health', 'get /openapi.json', 'get /v1/sessions']);
    for (const [path, methods] of Object.entries(committed.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        if (infallible.has(`${method} ${path}`)) continue;
        const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400);
        expect(errors.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const s of errors) expect(Object.keys(op.responses[s].content)).toEqual(['application/problem+json']);
      }
    }
  });

  it('is served as committed, with the address the request reached the daemon at as its server', async () => {
    // Not listening (inject): the Host the request came with. A listening daemon names its own
    // address and port (http-edge.test.ts).
    const { app } = await makeApp();
    try {
      const served = (await app.inject({ method: 'GET', url: '/openapi.json', headers: { host: '127.0.0.1:7777' } })).json<Record<string, unknown>>();
      expect(served.servers).toEqual([{ url: 'http://127.0.0.1:7777', description: 'This daemon' }]);
      expect({ ...served, servers: committed.servers }).toEqual(committed);
    } finally {
      await app.close();
    }
  });
});
