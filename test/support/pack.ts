// `npm pack` of the two packages without touching the repo's build outputs: test files in parallel
// workers would otherwise rebuild client/dist or dist/ under each other (prepack rebuilds first).
// Each package is staged in a temporary directory and packed there by npm with its own `files`
// list and --ignore-scripts, as a release would be packed after its build:
// - the client: its sources, built with its own tsconfig;
// - the daemon: package.json, README.md, LICENSE, bin/, openapi.json and scripts/check-sqlite.js
//   (its postinstall) from the repo, and dist/
//   from the run's shared install (test/support/daemon-process.ts: tsc, the bundle and the
//   inspector, built from src/ once per run).
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
  return npmPack(dir, stage);
}

/** The daemon's tarball, its dist/ taken from `install` (a built install, see buildInstall). */
export async function packDaemon(install: string): Promise<Packed> {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-pack-'));
  const stage = join(dir, 'agentwire');
  mkdirSync(stage);
  for (const file of ['package.json', 'README.md', 'LICENSE', 'bin', 'openapi.json', 'scripts/check-sqlite.js']) cpSync(join(ROOT, file), join(stage, file), { recursive: true });
  cpSync(join(install, 'dist'), join(stage, 'dist'), { recursive: true });
  return npmPack(dir, stage);
}

async function npmPack(dir: string, stage: string): Promise<Packed> {
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: stage, maxBuffer: 16 * 1024 * 1024 });
  const report = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  return {
    tarball: join(dir, report[0]!.filename),
    files: report[0]!.files.map((f) => f.path),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
