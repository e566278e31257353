// `node bench/run.js start`: how long a user waits for a new session, per agent, with and without
// the warm pool, measured side by side in one run against the fake model (bench/fake-agents.ts):
//   <agent>_create_ms / _first_event_ms         a daemon without --warm (every agent boots at create)
//   <agent>_warm_create_ms / _warm_first_event_ms   a daemon with --warm <agent>=1, a pool hit each time
//   <agent>_rss_mb_1 / _rss_mb_per_session_10   the RSS of the agents' process trees, 1 and 10 live sessions
//   opencode_<servers>_…  OpenCode with --opencode-servers per-session and shared, one daemon after
//                          the other in the same run, 10 live sessions in the default permission mode:
//                          RSS at 1 and 10 sessions, per added session, server processes, and the
//                          create time of sessions 2..10 (on a running server when shared);
//                          opencode_shared_dirs_…: shared, each session in a directory of its own,
//                          the RSS once sessions 2..10 have left (their instances disposed of), and
//                          with 10 live sessions again, the 9 new ones in 9 new directories
// create: POST /v1/sessions/{id} until its answer; first event: the first message's POST (NDJSON
// turn stream) until the first event the agent produced (source "agent"). p50 over the rounds;
// cold and warm rounds alternate, each after the warm daemon's spare is ready again, so a refill
// booting never overlaps a measured round.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { api, AUTH, startDaemon } from './daemon.js';
import { here, pct, print, sleep } from './util.js';

const ROUNDS = { mock: 10, claude: 6, codex: 6, opencode: 5 };

async function loadFakeAgents() {
  const outfile = join(tmpdir(), `agentwire-bench-fake-agents-${process.pid}.mjs`);
  await build({ entryPoints: [here('fake-agents.ts')], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'error', packages: 'external' });
  try {
    return await (await import(outfile)).fakeAgents();
  } finally {
    rmSync(outfile, { force: true });
  }
}

/** The first message of a session: ms until the first agent event, and the turn's end. */
function firstTurn(d, id) {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    let first = NaN;
    let unparsed = 0;
    let buffered = '';
    const req = http.request(`${d.url}/v1/sessions/${id}/messages/stream`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json', accept: 'application/x-ndjson' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffered += chunk;
        let nl;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line.trim()) continue;
          const event = JSON.parse(line);
          if (event.type === 'agent.unparsed') unparsed++;
          if (Number.isNaN(first) && event.source === 'agent') first = performance.now() - t;
        }
      });
      res.on('end', () => (unparsed > 0 ? reject(new Error(`${id}: ${unparsed} agent.unparsed`)) : resolve(first)));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ message: 'Say hello.' }));
  });
}

async function round(d, agent, id) {
  const t = performance.now();
  await api(d.url, 'POST', `/v1/sessions/${id}`, { agent });
  const create = performance.now() - t;
  const first = await firstTurn(d, id);
  await api(d.url, 'DELETE', `/v1/sessions/${id}`);
  return { create, first };
}

async function warmReady(d, agent) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { agents } = await api(d.url, 'GET', '/v1/agents');
    if (agents.find((a) => a.id === agent).warm.ready >= 1) return;
    if (Date.now() > deadline) throw new Error(`${agent}: no warm spare after 120 s`);
    await sleep(50);
  }
}

/** RSS (MB) of every process below `pid` (the daemon's agents and everything they started). */
function treeRssMb(pid) {
  const table = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${name}/status`, 'utf8'));
      table.push({ pid: Number(name), ppid, kb: rss ? Number(rss[1]) : 0 });
    } catch {
      // gone meanwhile
    }
  }
  const below = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) if (!below.has(p.pid) && below.has(p.ppid)) (below.add(p.pid), (grew = true));
  }
  return table.filter((p) => p.pid !== pid && below.has(p.pid)).reduce((sum, p) => sum + p.kb, 0) / 1024;
}

async function agentRss(d, agent) {
  const ids = [];
  const measure = async (n) => {
    while (ids.length < n) {
      const id = `${agent}-rss-${ids.length}`;
      await api(d.url, 'POST', `/v1/sessions/${id}`, { agent });
      await firstTurn(d, id);
      ids.push(id);
    }
    await sleep(2_000);
    return treeRssMb(d.pid) / n;
  };
  print(`${agent}_rss_mb_1`, await measure(1));
  print(`${agent}_rss_mb_per_session_10`, await measure(10));
  for (const id of ids) await api(d.url, 'DELETE', `/v1/sessions/${id}`);
}

/** Processes named opencode below `pid` (the daemon's OpenCode servers). */
function opencodeServers(pid) {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && comm.startsWith('opencode')) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/** OpenCode's memory and start time per added session, with shared servers and without. */
export async function opencodeSharing(setup, flags, options) {
  const SESSIONS = 10;
  for (const [servers, ownDirs] of [['per-session', false], ['shared', false], ['shared', true]]) {
    const d = await startDaemon([...flags, '--opencode-servers', servers], options);
    const name = `opencode_${servers.replace('-', '_')}${ownDirs ? '_dirs' : ''}`;
    const ids = [];
    const creates = [];
    let rss1 = NaN;
    try {
      while (ids.length < SESSIONS) {
        const id = `share-${name}-${ids.length}`;
        // Own directories: one OpenCode instance per directory inside the one server.
        const cwd = ownDirs ? join(options.cwd, id) : undefined;
        if (cwd) mkdirSync(cwd, { recursive: true });
        const t = performance.now();
        await api(d.url, 'POST', `/v1/sessions/${id}`, { agent: 'opencode', ...(cwd ? { cwd } : {}) });
        if (ids.length > 0) creates.push(performance.now() - t);
        await firstTurn(d, id);
        ids.push(id);
        if (ids.length === 1) {
          await sleep(2_000);
          rss1 = treeRssMb(d.pid);
        }
      }
      await sleep(2_000);
      const rss10 = treeRssMb(d.pid);
      print(`${name}_rss_mb_1`, rss1);
      print(`${name}_rss_mb_${SESSIONS}`, rss10);
      print(`${name}_rss_mb_per_added_session`, (rss10 - rss1) / (SESSIONS - 1));
      print(`${name}_servers_${SESSIONS}`, opencodeServers(d.pid));
      print(`${name}_added_create_ms`, pct(creates, 50));
      if (ownDirs) {
        // Sessions 2..10 leave: their directories' instances are disposed of (the server stays).
        for (const id of ids.slice(1)) await api(d.url, 'DELETE', `/v1/sessions/${id}`);
        await sleep(3_000);
        print(`${name}_rss_mb_after_${SESSIONS - 1}_left`, treeRssMb(d.pid));
        // Nine more, in nine new directories: what the server holds with 10 live sessions again
        // after 19 directories (bounded by the live ones, or growing with every directory served).
        for (let n = 0; n < SESSIONS - 1; n++) {
          const id = `${name}-again-${n}`;
          mkdirSync(join(options.cwd, id), { recursive: true });
          await api(d.url, 'POST', `/v1/sessions/${id}`, { agent: 'opencode', cwd: join(options.cwd, id) });
          await firstTurn(d, id);
          ids[n + 1] = id;
        }
        await sleep(2_000);
        print(`${name}_rss_mb_${SESSIONS}_again`, treeRssMb(d.pid));
        print(`${name}_servers_${SESSIONS}_again`, opencodeServers(d.pid));
        for (const id of ids.slice(1)) await api(d.url, 'DELETE', `/v1/sessions/${id}`);
      }
      for (const id of ownDirs ? ids.slice(0, 1) : ids) await api(d.url, 'DELETE', `/v1/sessions/${id}`);
    } finally {
      await d.stop();
    }
  }
}

/** `node bench/run.js share`: only the OpenCode sharing comparison. */
export async function sharingOnly() {
  const setup = await loadFakeAgents();
  try {
    await opencodeSharing(setup, ['--persist', 'off', '--agents-dir', setup.agentsDir, '--no-auto-install'], { env: setup.env, cwd: setup.work });
  } finally {
    await setup.close();
  }
}

export async function sessionStart(agents = Object.keys(ROUNDS)) {
  const setup = await loadFakeAgents();
  const flags = ['--persist', 'off', '--agents-dir', setup.agentsDir, '--no-auto-install'];
  const options = { env: setup.env, cwd: setup.work };
  try {
    for (const agent of agents) {
      const cold = await startDaemon(flags, options);
      const warm = await startDaemon([...flags, '--warm', `${agent}=1`], options);
      const times = { create: [], first: [], warmCreate: [], warmFirst: [] };
      try {
        // One unmeasured round each: the first start of a CLI reads it from disk.
        await round(cold, agent, `${agent}-prime`);
        await warmReady(warm, agent);
        await round(warm, agent, `${agent}-prime`);
        for (let i = 0; i < ROUNDS[agent]; i++) {
          await warmReady(warm, agent);
          const c = await round(cold, agent, `${agent}-cold-${i}`);
          const w = await round(warm, agent, `${agent}-warm-${i}`);
          times.create.push(c.create);
          times.first.push(c.first);
          times.warmCreate.push(w.create);
          times.warmFirst.push(w.first);
        }
        print(`${agent}_create_ms`, pct(times.create, 50));
        print(`${agent}_warm_create_ms`, pct(times.warmCreate, 50));
        print(`${agent}_first_event_ms`, pct(times.first, 50));
        print(`${agent}_warm_first_event_ms`, pct(times.warmFirst, 50));
        await warm.stop();
        await agentRss(cold, agent);
        if (agent === 'opencode') {
          await cold.stop();
          await opencodeSharing(setup, flags, options);
        }
      } finally {
        await cold.stop();
        await warm.stop();
      }
    }
  } finally {
    await setup.close();
  }
}
