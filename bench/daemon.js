// Starts a built agentwire daemon as its own process (with a raised file-descriptor limit) and
// finds its port from its first log line; reads its RSS from /proc.
//
// Every daemon the bench starts says where its data goes: `--persist off` (memory only) or a
// `--data-dir` the bench made under the system temp dir (tempDataDir). The daemon persists by
// default in ~/.local/share/agentwire; a bench must never write there, so startDaemon refuses
// flags without either, and the daemon gets no AGENTWIRE_* variables from the bench's environment.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Every daemon the bench starts has a token, as a default daemon does (src/daemon-token.ts), so the
// auth check is part of what is measured. One per run, in BENCH_TOKEN, which the bench's child
// processes (readers, load) inherit.
process.env.BENCH_TOKEN ??= randomBytes(24).toString('base64url');
export const BENCH_TOKEN = process.env.BENCH_TOKEN;
/** The header every bench request to a daemon carries. */
export const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };

const BIN = fileURLToPath(new URL('../bin/agentwire.js', import.meta.url));
const BARE = fileURLToPath(new URL('./bare.js', import.meta.url));

/**
 * `options.env` is added to the daemon's environment (what its agents inherit), `options.cwd` is
 * its working directory (its default session cwd).
 * @returns {Promise<{port: number, pid: number, url: string, stop: () => Promise<void>, child: import('node:child_process').ChildProcess}>}
 */
export function startDaemon(flags, options = {}) {
  // `options.answers`: a JSON file of the answers the bare server gives (bench/bare.js).
  if (options.bare) return startProcess(`exec "${process.execPath}" "${BARE}" ${options.answers ? `'${options.answers}'` : ''}`, process.env, {});
  const persistOff = flags.some((f, i) => f === '--persist' && flags[i + 1] === 'off');
  const dataDir = flags.findIndex((f) => f === '--data-dir');
  if (!persistOff && (dataDir < 0 || !String(flags[dataDir + 1]).startsWith(tmpdir()))) {
    throw new Error(`startDaemon(${JSON.stringify(flags)}): pass --persist off or --data-dir <a tempDataDir()>`);
  }
  // V8's compile cache (Node >= 22.1, bin/agentwire.js): one per bench run under the temp dir, not
  // the user's ~/.cache; the run's first start writes it, the others read it, as a user's would.
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENTWIRE_'))),
    NODE_COMPILE_CACHE: compileCacheDir(),
    AGENTWIRE_TOKEN: BENCH_TOKEN,
    ...options.env,
  };
  const args = ['server', '--port', '0', '--log-level', 'warn', ...flags].map((a) => `'${a}'`).join(' ');
  // ulimit in the shell, then exec: the daemon itself holds the 5,000 reader sockets.
  // `options.bin`: another build's bin/agentwire.js (the `requests` section's BENCH_BEFORE); BENCH_BIN
  // runs every section against another build.
  return startProcess(`ulimit -n 20000; exec "${process.execPath}" ${process.env.BENCH_DAEMON_FLAGS ?? ''} "${options.bin ?? process.env.BENCH_BIN ?? BIN}" ${args} --log-level info`, env, options);
}

function startProcess(script, env, options) {
  const child = spawn('sh', ['-c', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk) => {
      buffered += chunk;
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(buffered);
      if (!match) return;
      child.stdout.off('data', onData);
      child.stdout.resume(); // keep draining its log
      const port = Number(match[1]);
      resolve({
        port,
        pid: child.pid,
        url: `http://127.0.0.1:${port}`,
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before listening`)));
  });
}

export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

export async function api(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? AUTH : { ...AUTH, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const made = new Set();

let compileCache;
/** The bench run's compile cache dir (removed with the data dirs). */
function compileCacheDir() {
  compileCache ??= tempDataDir('compile-cache');
  return compileCache;
}

/** A fresh data dir under the system temp dir; removed by removeDataDirs (the bench calls it on exit). */
export function tempDataDir(label = 'bench') {
  const dir = mkdtempSync(join(tmpdir(), `agentwire-${label}-`));
  made.add(dir);
  return dir;
}

export function removeDataDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
}

export function removeDataDirs() {
  for (const dir of made) removeDataDir(dir);
}
