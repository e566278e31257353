// `npm pack` of the client without touching client/dist: tests in parallel workers would
// otherwise rebuild the same directory under each other (prepack deletes it first). The package
// directory is staged in a temporary directory (everything but node_modules and dist), built there
// with the package's own tsconfig, and packed by npm with its `files` list, as a release would be.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLIENT = join(ROOT, 'client');
const run = promisify(execFile);

export interface Packed {
  /** The .tgz file. */
  tarball: string;
  /** The paths npm put in it. */
  files: string[];
  remove: () => void;
}

export async function packClient(): Promise<Packed> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-client-pack-'));
  const stage = join(dir, 'client');
  cpSync(CLIENT, stage, { recursive: true, filter: (src) => !/^(node_modules|dist)(\/|$)/.test(relative(CLIENT, src)) });
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(CLIENT, 'tsconfig.json'), '--outDir', join(stage, 'dist')]);
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: stage, maxBuffer: 16 * 1024 * 1024 });
  const report = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  return {
    tarball: join(dir, report[0]!.filename),
    files: report[0]!.files.map((f) => f.path),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
