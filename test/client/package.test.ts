// agentwire-client as a package: its version is the daemon's, its types are what openapi.json
// generates (drift test), its core imports nothing from Node, and what `npm pack` ships is only
// the built code, its README and package.json.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packClient } from '../support/pack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = join(ROOT, 'client');
const run = promisify(execFile);
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the agentwire-client package', () => {
  it('has the daemon’s version', () => {
    expect(json(join(CLIENT, 'package.json')).version).toBe(json(join(ROOT, 'package.json')).version);
  });

  it('src/openapi.ts is what openapi-typescript generates from openapi.json (npm run generate -w client)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentwire-client-types-'));
    try {
      const out = join(dir, 'openapi.ts');
      await run(process.execPath, [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), join(ROOT, 'openapi.json'), '-o', out], { cwd: CLIENT });
      expect(readFileSync(join(CLIENT, 'src/openapi.ts'), 'utf8'), 'client/src/openapi.ts is stale: run npm run generate -w client').toBe(readFileSync(out, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('its core runs in browsers: no Node imports outside mirror/ and bin/, and it typechecks against the DOM alone', async () => {
    const core = sources(join(CLIENT, 'src')).filter((f) => !/^(mirror|bin)\//.test(relative(join(CLIENT, 'src'), f)));
    expect(core.map((f) => relative(CLIENT, f))).toContain('src/index.ts');
    const offending = core.filter((f) => /from\s+['"](node:|pg['"])|require\(/.test(readFileSync(f, 'utf8')));
    expect(offending.map((f) => relative(CLIENT, f))).toEqual([]);
    // tsconfig.core.json: index.ts and all it reaches, with the DOM's types and without Node's.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(CLIENT, 'tsconfig.core.json')], { cwd: CLIENT });
  }, 120_000);

  it('npm pack ships dist, README.md, LICENSE and package.json only; its dependencies are eventsource-parser, pg and the pg types its mirror declarations name', async () => {
    const packed = await packClient();
    try {
      expect(packed.files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/openapi.d.ts']));
      expect(packed.files.filter((f) => !/^(dist\/|bin\/)/.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f))).toEqual([]);
      expect(packed.files.filter((f) => f.endsWith('.map') || f.includes('test'))).toEqual([]);
      expect(Object.keys(json(join(CLIENT, 'package.json')).dependencies as object).sort()).toEqual(['@types/pg', 'eventsource-parser', 'pg']);
    } finally {
      packed.remove();
    }
  }, 120_000);
});
