// Builds what the daemon serves to browsers into dist/web (src/http/inspector.ts serves it):
//   ui/    the inspector: inspector/src bundled by esbuild (Preact, markdown-it, agentwire-client)
//          into assets/app.js and assets/app.css, beside inspector/index.html;
//   docs/  the API reference: swagger-ui-dist's bundle and stylesheet, copied from node_modules,
//          beside inspector/docs/ (its page and the script that starts it on /openapi.json).
// Every file gets a gzip twin (<name>.gz) so the daemon sends compressed bytes without compressing
// on each request; the page weight the tests check is measured on those.
// Usage: node scripts/build-web.js [distDir]   (default: dist/ of this checkout)
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(resolve(process.argv[2] ?? join(root, 'dist')), 'web');
const swagger = join(root, 'node_modules', 'swagger-ui-dist');

await rm(web, { recursive: true, force: true });
await mkdir(join(web, 'ui', 'assets'), { recursive: true });
await mkdir(join(web, 'docs', 'assets'), { recursive: true });

/** The client from its sources: the workspace package points at its own build (client/dist),
 *  which the daemon's build does not need to run first. */
const clientFromSource = {
  name: 'client-from-source',
  setup(b) {
    b.onResolve({ filter: /^agentwire-client$/ }, () => ({ path: join(root, 'client', 'src', 'index.ts') }));
  },
};

await build({
  entryPoints: { app: join(root, 'inspector', 'src', 'main.tsx') },
  outdir: join(web, 'ui', 'assets'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'none',
  // The client runs in Node too; nothing of Node may reach the page.
  define: { 'process.env.NODE_ENV': '"production"' },
  plugins: [clientFromSource],
  logLevel: 'warning',
});

const copies = [
  [join(root, 'inspector', 'index.html'), join(web, 'ui', 'index.html')],
  [join(root, 'inspector', 'favicon.svg'), join(web, 'ui', 'assets', 'favicon.svg')],
  [join(root, 'inspector', 'docs', 'index.html'), join(web, 'docs', 'index.html')],
  [join(root, 'inspector', 'docs', 'docs.js'), join(web, 'docs', 'assets', 'docs.js')],
  [join(root, 'inspector', 'docs', 'docs.css'), join(web, 'docs', 'assets', 'docs.css')],
  [join(root, 'inspector', 'favicon.svg'), join(web, 'docs', 'assets', 'favicon.svg')],
  [join(swagger, 'swagger-ui-bundle.js'), join(web, 'docs', 'assets', 'swagger-ui-bundle.js')],
  [join(swagger, 'swagger-ui.css'), join(web, 'docs', 'assets', 'swagger-ui.css')],
];
for (const [from, to] of copies) await copyFile(from, to);

// swagger-ui's bundle ends with a sourceMappingURL for a map we do not ship: browsers with dev
// tools open would ask for it and log a 404.
const bundle = join(web, 'docs', 'assets', 'swagger-ui-bundle.js');
await writeFile(bundle, (await readFile(bundle, 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));

let files = 0;
let uiGzip = 0;
for (const entry of await readdir(web, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const path = join(entry.parentPath, entry.name);
  const gz = gzipSync(await readFile(path), { level: constants.Z_BEST_COMPRESSION });
  await writeFile(`${path}.gz`, gz);
  files += 1;
  if (relative(web, path).startsWith('ui')) uiGzip += gz.length;
}
console.error(`agentwire: built the inspector and the API reference into ${relative(process.cwd(), web) || web} (${files} files; /ui/ is ${(uiGzip / 1024).toFixed(0)} KB gzipped)`);
