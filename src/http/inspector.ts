// The inspector page (GET /ui/, built from inspector/ into dist/web/ui) and the API reference
// (GET /docs, swagger-ui-dist copied into dist/web/docs), served from the daemon's own package: no
// CDN, no network (docs/inspector.md). The files are static and hold no data, so they are served
// without the token (auth class `public`, auth.ts): the page must load to ask for it, and
// every API call it then makes carries it in a header. The Host check still runs first.
//
// Only files the build wrote are served: the directory is listed once into a table, and a request
// names an entry of that table or gets a 404, so no path from a URL ever reaches the file system.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

/** dist/web from both src/http (tests) and dist/http (the package): the build's output. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

// No inline script or style anywhere, nothing from another origin, no framing, no plugins; the
// page talks to this daemon only (connect-src 'self'). img-src allows data: for images an agent
// sends inline; nothing an agent says can add a script (the page renders its text as text).
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

interface WebFile {
  body: Buffer;
  /** The build's gzip of it (`<name>.gz`), sent to clients that accept gzip. */
  gzip?: Buffer;
  type: string;
  etag: string;
}

/** Every file under `dir` by its path relative to it ('ui/index.html'); `.gz` twins folded in. */
async function loadFiles(dir: string, auth: 'bearer' | 'none'): Promise<Map<string, WebFile>> {
  const files = new Map<string, WebFile>();
  let names: string[];
  try {
    names = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length).replace(/^\/+/, ''));
  } catch {
    return files; // not built: every page is a 404 that says how to build it
  }
  for (const name of names.filter((n) => !n.endsWith('.gz'))) {
    let body = await readFile(join(dir, name));
    let gzip = names.includes(`${name}.gz`) ? await readFile(join(dir, `${name}.gz`)) : undefined;
    // The page learns whether to ask for a token from its own markup (no request, so no 401 in the
    // console); the build leaves the placeholder, the daemon fills it in.
    if (name.endsWith('.html')) {
      body = Buffer.from(body.toString('utf8').replaceAll('content="agentwire-auth"', `content="${auth}"`));
      gzip = undefined;
    }
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(name, { body, ...(gzip ? { gzip } : {}), type: TYPES[extname(name)] ?? 'application/octet-stream', etag });
  }
  return files;
}

export interface InspectorOptions {
  /** The built files (dist/web); tests point it at a build of their own. */
  dir?: string;
  /** Whether the daemon has a token, so the page knows to ask for one. */
  tokenRequired: boolean;
}

export function inspectorRoutes(app: FastifyInstance, options: InspectorOptions): void {
  let files: Promise<Map<string, WebFile>> | undefined;
  const serve = async (req: FastifyRequest, reply: FastifyReply, name: string) => {
    files ??= loadFiles(options.dir ?? DEFAULT_WEB_DIR, options.tokenRequired ? 'bearer' : 'none');
    const file = (await files).get(name);
    if (!file) {
      const built = (await files).size > 0;
      throw new ApiError('not_found', built ? `No such file: ${req.url.split('?')[0]}` : 'The inspector is not built in this install; run `npm run build`.');
    }
    reply.headers(securityHeaders).header('etag', file.etag).header('vary', 'accept-encoding');
    // HTML is revalidated on every load (it names the current assets); assets by ETag as well,
    // since their names carry no hash: a 304 costs one round trip and no bytes.
    reply.header('cache-control', 'no-cache');
    if (req.headers['if-none-match'] === file.etag) return reply.code(304).send();
    reply.type(file.type);
    if (file.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(file.gzip);
    }
    return reply.send(file.body);
  };
  // Not API routes (route.ts): files and redirects, outside the OpenAPI document.
  const open = { config: { auth: 'public' as const } };
  // The page reads its own query (?token=); the daemon passes it through untouched.
  const page = { config: { auth: 'public' as const, query: true as const } };

  app.get('/', page, async (req, reply) => reply.redirect(`/ui/${queryOf(req)}`, 302));
  app.get('/ui', page, async (req, reply) => reply.redirect(`/ui/${queryOf(req)}`, 301));
  app.get('/ui/', page, (req, reply) => serve(req, reply, 'ui/index.html'));
  app.get<{ Params: { file: string } }>('/ui/assets/:file', open, (req, reply) => serve(req, reply, `ui/assets/${req.params.file}`));
  // Deep links (/ui/sessions/{id}) are the page's own routes: every other path under /ui/ is the page.
  app.get('/ui/*', page, (req, reply) => serve(req, reply, 'ui/index.html'));
  app.get('/docs', page, (req, reply) => serve(req, reply, 'docs/index.html'));
  app.get('/docs/', open, async (_req, reply) => reply.redirect('/docs', 301));
  app.get<{ Params: { file: string } }>('/docs/assets/:file', open, (req, reply) => serve(req, reply, `docs/assets/${req.params.file}`));
}

const securityHeaders = {
  'content-security-policy': UI_CSP,
  'x-content-type-options': 'nosniff',
  // The token may be in the page's URL (?token=) until the page removes it: never send it on.
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function queryOf(req: FastifyRequest): string {
  const at = req.url.indexOf('?');
  return at === -1 ? '' : req.url.slice(at);
}
