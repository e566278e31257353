#!/usr/bin/env node
// The `agentwire` command. `npm run build` (npm start does it) compiles src/ to dist/ and bundles
// it into dist/agentwire.mjs, which starts faster and smaller than the module tree (scripts/bundle.js).
import { lstatSync, mkdirSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

enableCompileCache();
// main() reports its own start-up failures (src/startup-failure.ts); what reaches here is
// unexpected (a missing build, say): one line as well, the stack only with AGENTWIRE_DEBUG=1.
try {
  const { main } = await import('../dist/agentwire.mjs');
  await main(process.argv.slice(2));
} catch (err) {
  console.error(`agentwire: ${String(err?.message ?? err).replace(/\s*\n\s*/g, '; ')} (unexpected; AGENTWIRE_DEBUG=1 prints its stack trace)`);
  if (process.env.AGENTWIRE_DEBUG === '1') console.error(err);
  process.exit(1);
}

/**
 * Node 22.1 and later keep V8's compiled code of the bundle on disk, so a start after the first
 * deserializes it instead of compiling 1.2 MB of source (docs/performance.md). Node 20 has no such
 * cache: nothing happens there. The cache holds code the daemon runs, so it lives where only the
 * daemon's user can write: NODE_COMPILE_CACHE when set (Node's own variable), otherwise the user's
 * cache dir ($XDG_CACHE_HOME/agentwire/compile-cache or ~/.cache/…), never the shared temp dir
 * Node would pick, where an agent running as another user (--agent-user) could plant entries.
 * The data dir would do as well, but it is only known once the bundle has parsed the flags. A
 * directory that is not ours, or that others can write, is not used; nor is one that cannot be
 * made (a read-only HOME): the daemon then compiles as before. Node checks each entry against the
 * source and its own version, so a new build or another Node simply writes new entries.
 */
function enableCompileCache() {
  if (typeof module.enableCompileCache !== 'function') return;
  let dir = process.env.NODE_COMPILE_CACHE;
  if (!dir) {
    dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agentwire', 'compile-cache');
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const stat = lstatSync(dir);
      if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o022) !== 0) return;
    } catch {
      return;
    }
  }
  try {
    module.enableCompileCache(dir);
  } catch {
    // A cache is an optimisation: never a reason not to start.
  }
}
