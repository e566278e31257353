// The durable store of this build against another build's, in one run (issue 42: node:sqlite
// against better-sqlite3): `BENCH_BASE=<another checkout, built> node bench/persist-ab.js [rounds]`.
// Each round starts three fresh daemons one after the other, `--persist off` and then a temp
// data dir with the other build and with this one, and runs the persist section's flows on each
// (bench/persist.js: the 200 000-event flood, the paced 50 000/s, the light 10 000/s). On a busy
// machine the absolute figures swing by 2-4x from one daemon to the next, so what to read is this
// build ÷ the other within each round, printed per round and as the median over the rounds.
import { join } from 'node:path';
import * as here from './daemon.js';
import { flows } from './persist.js';
import { pct, print } from './util.js';

const baseDir = process.env.BENCH_BASE;
if (!baseDir) throw new Error('BENCH_BASE=<a built checkout to compare with> node bench/persist-ab.js [rounds]');
const base = await import(join(baseDir, 'bench/daemon.js'));
const rounds = Number(process.argv[2] ?? 5);

const CONFIGS = [
  ['off', here, false],
  ['base_on', base, true],
  ['this_on', here, true],
];

/** One daemon of `mod`'s build: the flows' figures. */
async function measure(mod, persist) {
  const dir = persist ? mod.tempDataDir('ab') : undefined;
  const d = await mod.startDaemon(dir ? ['--data-dir', dir] : ['--persist', 'off']);
  try {
    return await flows(d);
  } finally {
    await d.stop();
    if (dir) mod.removeDataDir(dir);
  }
}

const ratios = { throughput: [], paced: [], lightP50: [] };
for (let r = 0; r < rounds; r++) {
  const got = {};
  for (const [name, mod, persist] of CONFIGS) {
    got[name] = await measure(mod, persist);
    const f = got[name];
    print(`persist_ab_${r}_${name}_throughput_events_per_s`, f.throughput);
    print(`persist_ab_${r}_${name}_paced_events_per_s`, f.paced);
    print(`persist_ab_${r}_${name}_light_latency_p50_ms`, f.lightP50);
  }
  for (const key of Object.keys(ratios)) ratios[key].push(got.this_on[key] / got.base_on[key]);
}
print('persist_ab_this_base_throughput_ratio_median', pct(ratios.throughput, 50));
print('persist_ab_this_base_paced_ratio_median', pct(ratios.paced, 50));
print('persist_ab_this_base_light_latency_p50_ratio_median', pct(ratios.lightP50, 50));
