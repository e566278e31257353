import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../src/http/routes.js';
import { buildOpenApi, documentPath } from '../../../src/openapi/document.js';
import { makeApp } from '../../support/helpers.js';
import { VERSION } from '../../../src/version.js';
import { EVENT_TYPES } from '../../../src/schema/events.js';
import { ERROR_CODES } from '../../../src/errors.js';

/** Every operation of the committed document as [`method path`, operation], the WebSocket
 *  upgrades (`x-websockets`, kept out of `paths`) included. */
function operations(): [string, Record<string, any>][] {
  return Object.entries({ ...committed.paths, ...committed['x-websockets'] } as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => [`${method} ${path}`, op] as [string, Record<string, any>]),
  );
}

const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as Record<string, any>;

describe('openapi.json', () => {
  it('is what the code generates (run `npm run openapi` after changing a schema or route)', () => {
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApi(VERSION))));
  });

  it('names every operation with its declared operationId, each id once (a contract: generated clients key on them)', () => {
    // The ids come from the route table (src/http/routes.ts); renaming one changes this document
    // and client/src/openapi.ts, whose drift tests fail until both are regenerated, and breaks
    // every client keyed on the old name.
    const declared = Object.fromEntries(ROUTES.map((r) => [`${r.method} ${documentPath(r.path)}`, r.operationId]));
    expect(Object.fromEntries(operations().map(([route, op]) => [route, op.operationId]))).toEqual(declared);
    expect(new Set(ROUTES.map((r) => r.operationId)).size).toBe(ROUTES.length);
  });

  it('documents both stream routes as streams of the event union (SSE, and NDJSON on the turn stream)', () => {
    const paths = committed.paths as Record<string, any>;
    const event = { $ref: '#/components/schemas/UniversalEvent' };
    const sse = paths['/v1/sessions/{id}/events/sse'].get.responses['200'].content;
    expect(sse).toEqual({ 'text/event-stream': { schema: event } });
    const turn = paths['/v1/sessions/{id}/messages/stream'].post.responses['200'].content;
    expect(turn).toEqual({ 'text/event-stream': { schema: event }, 'application/x-ndjson': { schema: event } });
    const variants = committed.components.schemas.UniversalEvent.oneOf as unknown[];
    expect(variants).toHaveLength(EVENT_TYPES.length);
  });

  it('describes problem+json errors on every route, with the catalogue as the enum of Problem.code', () => {
    expect(committed.components.schemas.Problem.properties.code.enum).toEqual(ERROR_CODES);
    for (const [route, op] of operations()) {
      const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400);
      expect(errors.filter((s) => s.startsWith('4')).length, route).toBeGreaterThan(0);
      for (const s of errors) {
        // Health's 503 is its own body ({status: "draining"}), which load balancers read.
        const type = route === 'get /v1/health' && s === '503' ? 'application/json' : 'application/problem+json';
        expect(Object.keys(op.responses[s].content), `${route} ${s}`).toEqual([type]);
      }
    }
  });

  it('is served as committed, with the address the request reached the daemon at as its server', async () => {
    // Not listening (inject): the Host the request came with. A listening daemon names its own
    // address and port (test/sockets/http-edge.test.ts).
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
