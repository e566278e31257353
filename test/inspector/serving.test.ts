// How the daemon serves the inspector and the API reference (src/http/inspector.ts): the routes,
// the token rule (static files are public, the API is not), the Host check before all of it, the
// Content-Security-Policy, only files the build wrote, and the page weight (≤ 250 KB gzipped).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { makeApp } from '../support/helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'inspector-test-token-0123456789';
let dist: string;
let app: App | undefined;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'agentwire-web-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts/build-web.js'), dist], { cwd: ROOT });
}, 60_000);
afterAll(() => rmSync(dist, { recursive: true, force: true }));
afterEach(async () => {
  await app?.app.close();
  app = undefined;
});

async function daemon(config: Record<string, unknown> = {}, webDir = join(dist, 'web')): Promise<App> {
  app = await makeApp({ config, webDir });
  return app;
}

function get(a: App, url: string, headers: Record<string, string> = {}) {
  return a.app.inject({ method: 'GET', url, headers });
}

describe('routes', () => {
  it('redirects / to /ui/, keeping the query (the token link)', async () => {
    const a = await daemon();
    const res = await get(a, '/?token=abc');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/ui/?token=abc');
    expect((await get(a, '/ui')).headers.location).toBe('/ui/');
  });

  it('serves the page at /ui/ and for every deep link under it', async () => {
    const a = await daemon();
    const page = await get(a, '/ui/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const url of ['/ui/sessions/sess_abc', '/ui/sessions/x?token=t', '/ui/anything/else']) {
      const res = await get(a, url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toBe(page.body);
    }
    expect((await a.app.inject({ method: 'HEAD', url: '/ui/' })).statusCode).toBe(200);
  });

  it('serves only files the build wrote', async () => {
    const a = await daemon();
    expect((await get(a, '/ui/assets/app.js')).statusCode).toBe(200);
    for (const url of ['/ui/assets/nope.js', '/ui/assets/..%2f..%2fpackage.json', '/ui/assets/%2e%2e%2findex.html', '/docs/assets/..%2f..%2f..%2fpackage.json']) {
      const res = await get(a, url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('says how to build it when the install has no build', async () => {
    const a = await daemon({}, join(dist, 'missing'));
    const res = await get(a, '/ui/');
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('npm run build');
  });

  it('serves the API reference offline: swagger-ui from the package, the document from /openapi.json', async () => {
    const a = await daemon();
    const docs = await get(a, '/docs');
    expect(docs.statusCode).toBe(200);
    const sources = [...docs.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.every((s) => s.startsWith('/'))).toBe(true); // nothing from another origin
    for (const s of sources.filter((s) => s.startsWith('/docs/'))) expect((await get(a, s)).statusCode, s).toBe(200);
    expect((await get(a, '/docs/assets/docs.js')).body).toContain("url: '/openapi.json'");
  });

  it('sends gzip to clients that take it, and answers a matching ETag with 304', async () => {
    const a = await daemon();
    const plain = await get(a, '/ui/assets/app.js');
    const gz = await get(a, '/ui/assets/app.js', { 'accept-encoding': 'gzip, deflate' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length);
    const again = await get(a, '/ui/assets/app.js', { 'if-none-match': String(plain.headers.etag) });
    expect(again.statusCode).toBe(304);
  });
});

describe('security', () => {
  it('sends a strict Content-Security-Policy and the page has no inline script or style', async () => {
    const a = await daemon();
    for (const url of ['/ui/', '/ui/sessions/x', '/docs', '/ui/assets/app.js']) {
      const res = await get(a, url);
      const csp = String(res.headers['content-security-policy']);
      for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) {
        expect(csp, `${url}: ${directive}`).toContain(directive);
      }
      expect(csp).not.toContain('unsafe');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
    for (const url of ['/ui/', '/docs']) {
      const html = (await get(a, url)).body;
      expect(html, url).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
      expect(html, url).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    }
  });

  it('with a token: the static files load without it (the page asks for it), the API still needs it', async () => {
    const a = await daemon({ token: TOKEN });
    const page = await get(a, '/ui/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<meta name="agentwire-auth" content="bearer"');
    for (const url of ['/', '/ui/sessions/x', '/ui/assets/app.js', '/ui/assets/app.css', '/docs', '/docs/assets/swagger-ui-bundle.js']) {
      expect((await get(a, url)).statusCode, url).toBeLessThan(400);
    }
    for (const url of ['/v1/sessions', '/v1/agents', '/openapi.json']) expect((await get(a, url)).statusCode, url).toBe(401);
    expect((await get(a, '/v1/sessions', { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    const open = await daemon();
    expect((await get(open, '/ui/')).body).toContain('<meta name="agentwire-auth" content="none"');
    await open.app.close();
  });

  it('checks the Host before serving anything (DNS rebinding)', async () => {
    const a = await daemon();
    for (const url of ['/', '/ui/', '/ui/assets/app.js', '/docs']) {
      const res = await get(a, url, { host: 'attacker.example:2468' });
      expect(res.statusCode, url).toBe(421);
    }
    expect((await get(a, '/ui/', { host: 'localhost:2468' })).statusCode).toBe(200);
  });
});

describe('page weight', () => {
  it('/ui/ and everything it loads is at most 250 KB gzipped', async () => {
    const a = await daemon();
    const html = (await get(a, '/ui/', { 'accept-encoding': 'gzip' })).body;
    const assets = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual(['/ui/assets/app.css', '/ui/assets/app.js', '/ui/assets/favicon.svg']);
    let bytes = (await get(a, '/ui/')).rawPayload.length; // the HTML is small and sent as is
    for (const url of assets) {
      const res = await get(a, url, { 'accept-encoding': 'gzip' });
      expect(res.statusCode).toBe(200);
      bytes += res.rawPayload.length;
    }
    expect(bytes).toBeLessThanOrEqual(250 * 1024);
  });
});
