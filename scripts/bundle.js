// Bundles the compiled daemon (dist/main.js and everything it imports, node_modules included) into
// one file, dist/agentwire.mjs, which bin/agentwire.js runs. Why: resolving, reading and compiling
// several hundred small modules at every start cost ~100 ms of cold start and ~10 MB of idle RSS
// (docs/performance.md); one minified file does neither. dist/ keeps the tsc output, because files
// next to it are read at run time (the mock agent's program.js, Amp's delegate.js, openapi.json,
// package.json): every `import.meta.url` is rewritten to the URL its module had before bundling,
// so those relative paths resolve exactly as they do unbundled.
//
// What start-up never needs stays out of the bundle or out of start-up (docs/performance.md, issue
// 20 item 4): zod's other locales, zod-to-openapi's metadata (openapiMetadataOff), the OpenTelemetry
// API, Fastify's http2/https and prom-client's Pushgateway with the built-ins they load, plus the
// `external` list below. Each stand-in is in this file and says what it replaces and why. On Node
// >= 22.1 bin/agentwire.js also keeps V8's compiled code of this file in a cache, so only the first
// start compiles it.
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const dist = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..', 'dist'));

/** `import.meta.url` → the module's own pre-bundle URL, relative to the bundle's. */
const keepModuleUrls = {
  name: 'keep-module-urls',
  setup(b) {
    b.onLoad({ filter: /\.(js|mjs|cjs)$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const rel = relative(dist, args.path).split('\\').join('/');
      const url = `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url).href`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'js' };
    });
  },
};

/** zod's `locales` namespace re-exports ~40 translations of its error messages (290 KB, the
 *  bundle's largest part); agentwire's messages are English and it never reads `z.locales`, so
 *  the bundle's namespace holds `en` only. zod's default English messages come from en.js
 *  directly and are unaffected. */
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/** `.openapi(…)` (zod-to-openapi) records a schema's OpenAPI metadata: it clones the schema into a
 *  metadata registry, and wraps `.optional()`, `.nullable()`, `.extend()` … to carry it along. The
 *  only reader of that metadata is src/openapi/document.ts, which writes openapi.json at build time
 *  (`npm run openapi`, from dist/, not from this bundle) and is not part of the daemon; the daemon
 *  serves the committed openapi.json. So in the bundle `.openapi()` returns its schema unchanged:
 *  the same validation, without the clones and the wrappers at every start (and without the
 *  library's 45 KB). src/ and the tests keep the real library. */
const openapiMetadataOff = {
  name: 'openapi-metadata-off',
  setup(b) {
    b.onResolve({ filter: /^@asteasolutions\/zod-to-openapi$/ }, () => ({ path: 'zod-to-openapi', namespace: 'openapi-off' }));
    b.onLoad({ filter: /.*/, namespace: 'openapi-off' }, () => ({
      contents: `export function extendZodWithOpenApi(z) {
        if (typeof z.ZodType.prototype.openapi === 'undefined') z.ZodType.prototype.openapi = function () { return this; };
      }`,
      loader: 'js',
    }));
  },
};

/** prom-client requires the OpenTelemetry API (42 KB, and it sets up its global registry when
 *  loaded) for one thing: exemplars of the CPU counter, read only when a registry enables
 *  exemplars. agentwire never does (src/metrics/), so the bundle gets a stand-in that says so if
 *  that ever changes. */
const noOpenTelemetry = {
  name: 'no-opentelemetry',
  setup(b) {
    b.onResolve({ filter: /^@opentelemetry\/api$/ }, () => ({ path: 'opentelemetry-api', namespace: 'otel-off' }));
    b.onLoad({ filter: /.*/, namespace: 'otel-off' }, () => ({
      contents: `const off = () => { throw new Error('agentwire: metric exemplars are not enabled, and the bundle carries no OpenTelemetry API (scripts/bundle.js)'); };
        module.exports = { get trace() { return off(); }, get context() { return off(); } };`,
      loader: 'js',
    }));
  },
};

/** Node built-ins loaded at start for features agentwire never uses: Fastify's server.js requires
 *  node:http2 and node:https (with tls) for its `http2` and `https` options (3–20 ms to load
 *  here), prom-client's index requires its Pushgateway, which requires node:zlib. In the bundle,
 *  Fastify requires each when it first creates such a server (agentwire never does: it listens
 *  on plain HTTP), and the Pushgateway is a stand-in that says it is left out.
 *  Each replacement names the exact source line it replaces and fails the build when that line
 *  is gone, so a Fastify or prom-client upgrade cannot silently keep the eager require. */
const unusedBuiltinsLazy = {
  name: 'unused-builtins-lazy',
  setup(b) {
    const replace = (filter, pairs) =>
      b.onLoad({ filter }, async (args) => {
        let source = await readFile(args.path, 'utf8');
        for (const [from, to] of pairs) {
          if (!source.includes(from)) throw new Error(`scripts/bundle.js: ${args.path} no longer contains ${JSON.stringify(from)}; update unusedBuiltinsLazy`);
          source = source.replace(from, to);
        }
        return { contents: source, loader: 'js' };
      });
    replace(/[\\/]fastify[\\/]lib[\\/]server\.js$/, [
      ["const https = require('node:https')", "const https = { createServer: (...a) => require('node:https').createServer(...a) }"],
      ["const http2 = require('node:http2')", "const http2 = { createServer: (...a) => require('node:http2').createServer(...a), createSecureServer: (...a) => require('node:http2').createSecureServer(...a) }"],
    ]);
    replace(/[\\/]prom-client[\\/]index\.js$/, [
      ["exports.Pushgateway = require('./lib/pushgateway');", "exports.Pushgateway = class { constructor() { throw new Error('agentwire: the bundle leaves out prom-client\\'s Pushgateway (scripts/bundle.js)'); } };"],
    ]);
  },
};

const result = await build({
  entryPoints: [join(dist, 'main.js')],
  outfile: join(dist, 'agentwire.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Whitespace and syntax only: identifiers stay, so stack traces in logs stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // CommonJS dependencies (fastify, pino) call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __agentwireRequire } from 'node:module'; const require = __agentwireRequire(import.meta.url);" },
  plugins: [keepModuleUrls, englishOnly, openapiMetadataOff, noOpenTelemetry, unusedBuiltinsLazy],
  // execa is loaded with import() on the first agent spawn, never at start: left in node_modules so
  // start-up does not even parse it. better-sqlite3 (Node 20's SQLite, src/store/sqlite-binding.ts) loads
  // its compiled addon (.node) from its own package directory, which a bundle cannot carry.
  // Fastify's JSON-schema compilers (Ajv, fast-json-stringify) are never loaded: routes use zod
  // (src/http/validate.ts, ZOD_ONLY_SCHEMAS); left out, start-up does not parse a fifth of the code.
  // light-my-request is Fastify's inject(), which only tests use (and they run src/, not this).
  external: ['execa', 'better-sqlite3', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'],
  logLevel: 'warning',
  metafile: true,
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.error(`agentwire: bundled ${Object.keys(result.metafile.inputs).length} modules into ${relative(process.cwd(), join(dist, 'agentwire.mjs'))} (${(bytes / 1024).toFixed(0)} KB)`);
