// The routes the daemon serves are the operations openapi.json describes, no more and no fewer:
// every route Fastify registers in buildApp() (recorded as it registers them, src/http/methods.ts)
// is compared with the committed document's paths × methods. A route added beside the table
// (src/http/routes.ts), or an operation the daemon stopped serving, fails here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { ROUTES } from '../../../src/http/routes.js';
import { documentPath } from '../../../src/openapi/document.js';
import { makeApp } from '../../support/helpers.js';

const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
  'x-websockets': Record<string, Record<string, unknown>>;
};
// The WebSocket upgrades (`GET /v1/acp`) are documented under `x-websockets`, not `paths`: a
// generator would make a plain GET of them, which can only answer 400 (src/openapi/document.ts).
const documented = Object.entries({ ...committed.paths, ...committed['x-websockets'] })
  .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
  .sort();

// Served on purpose and not in the document, each with why:
// - the inspector's page and the API reference (src/http/inspector.ts): static files and
//   redirects for a browser, with auth class `public`; they are no API operation a client calls.
const INSPECTOR = ['/', '/ui', '/ui/', '/ui/assets/:file', '/ui/*', '/docs', '/docs/', '/docs/assets/:file'];
// - `OPTIONS *`: the CORS plugin's preflight answer (with --cors-origin only), which browsers send
//   by themselves; the document's operations are what a client asks.
const CORS_PREFLIGHT = 'OPTIONS *';
// - `HEAD` on every GET route: Fastify adds it (exposeHeadRoutes), answering the GET's headers
//   without its body; OpenAPI documents GET and leaves HEAD implied. Checked to be exactly that.

describe('the routes served and the routes documented', () => {
  let app: App;
  beforeAll(async () => {
    // With an allowed origin, so the CORS plugin's route is there to be accounted for.
    app = await makeApp({ config: { corsOrigins: ['https://app.test'] } });
    await app.app.ready();
  });
  afterAll(async () => {
    await app?.app.close();
  });

  const served = () => app.routes.list().map(({ method, url }) => `${method} ${url}`);

  it('serves exactly the operations openapi.json lists, besides the documented exceptions', () => {
    const all = served();
    const gets = new Set(all.filter((r) => r.startsWith('GET ')).map((r) => r.slice(4)));
    const api = all.filter((route) => {
      const [method, url] = route.split(' ') as [string, string];
      if (INSPECTOR.includes(url) || route === CORS_PREFLIGHT) return false;
      if (method === 'HEAD') {
        expect(gets.has(url), `${route} is the HEAD twin of a GET route`).toBe(true);
        return false;
      }
      return true;
    });
    expect(api.map((route) => route.replace(/ (.*)$/, (_m, url: string) => ` ${documentPath(url)}`)).sort()).toEqual(documented);
  });

  it('has every exception it documents, so the list cannot go stale', () => {
    const all = served();
    for (const url of INSPECTOR) expect(all, url).toContain(`GET ${url}`);
    expect(all).toContain(CORS_PREFLIGHT);
  });

  it('serves each declared route once, under its declared method and path', () => {
    const all = served();
    for (const route of ROUTES) {
      expect(all.filter((r) => r === `${route.method.toUpperCase()} ${route.path}`), route.operationId).toHaveLength(1);
    }
  });
});
