// Helpers shared by the bench's sections (run.js, persist.js).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { api, rssMb } from './daemon.js';

export const here = (f) => fileURLToPath(new URL(f, import.meta.url));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
export const print = (name, value) => console.log(`${name}: ${Number.isFinite(value) ? +value.toFixed(2) : value}`);

/** A bench child process (reader, load, relay) speaking over IPC: `next()` is its next report. */
export function child(script, args) {
  const proc = fork(here(script), args.map(String), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const next = () =>
    new Promise((resolve, reject) => {
      proc.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
      proc.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
    });
  return { proc, next, stop: () => proc.kill('SIGKILL') };
}

/**
 * RSS of an idle daemon once it is steady: V8 shrinks the young generation a few seconds after
 * start-up allocation stops (its memory reducer), so the 1 s figure is start-up, not idle. Read
 * every second until three reads agree within 0.5 MB (at least 10 s, at most 25 s).
 */
export async function settledRss(pid, { min = 10, max = 25 } = {}) {
  const reads = [];
  for (let s = 0; s < max; s++) {
    await sleep(1000);
    reads.push(rssMb(pid));
    const last = reads.slice(-3);
    if (last.length === 3 && Math.max(...last) - Math.min(...last) < 0.5 && s >= min) break;
  }
  return reads.at(-1);
}

export async function session(d, id, extra = {}) {
  await api(d.url, 'POST', `/v1/sessions/${id}`, { agent: 'mock', ...extra });
  return id;
}

export const lastSequence = async (d, id) => (await api(d.url, 'GET', `/v1/sessions/${id}`)).eventCount;

export async function untilIdle(d, id, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await api(d.url, 'GET', `/v1/sessions/${id}`)).status !== 'idle') {
    if (Date.now() > deadline) throw new Error(`${id} did not become idle`);
    await sleep(20);
  }
}
