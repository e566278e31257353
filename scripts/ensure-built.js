// `npm start` builds first when dist/ is missing or older than any source file, so a fresh clone
// runs with `npm install && npm start` and an edited tree never runs stale code. The inspector
// (inspector/, built into dist/web) is checked on its own: it is rebuilt alone in a second.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist', 'agentwire.mjs');
const webStamp = join(root, 'dist', 'web', 'ui', 'index.html');

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

if (!existsSync(stamp) || newest(join(root, 'src')) > statSync(stamp).mtimeMs) {
  console.error('agentwire: building (tsc, then one bundle)…');
  execSync(`"${process.execPath}" node_modules/typescript/bin/tsc -p tsconfig.build.json`, { cwd: root, stdio: 'inherit' });
  execSync(`"${process.execPath}" scripts/bundle.js`, { cwd: root, stdio: 'inherit' });
}

const webSources = Math.max(newest(join(root, 'inspector')), newest(join(root, 'client', 'src')));
if (!existsSync(webStamp) || webSources > statSync(webStamp).mtimeMs) {
  console.error('agentwire: building the inspector…');
  execSync(`"${process.execPath}" scripts/build-web.js`, { cwd: root, stdio: 'inherit' });
}
