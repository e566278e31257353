// The hostile-agent suite (docs/security.md, "Planted files and hostile agents"): one real daemon
// for the whole file (the bundle, a SQLite file in its own data dir, --agent-user nobody), a
// scripted hostile ACP agent (test/support/hostile-acp-agent.mjs) and the mock, attacking turn
// after turn: extreme and non-finite usage, ids the daemon uses, deep and huge frames, floods,
// control characters, paths outside the workspace; a client that poisons the store through
// GET /v1/acp, one that stops reading its WebSocket, attachments the agent may not read. After
// each: the daemon answers /v1/health within a second, another session keeps working, every event
// of the attacked session is still readable in order, and the daemon's memory stays within a bound.
// Switching users needs root: these tests fail (never skip) without it.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { UniversalEvent } from '../../src/schema/events.js';
import { DaemonProcess, installDir, removeInstall, setUpInstall } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';

const AGENT = new URL('../support/hostile-acp-agent.mjs', import.meta.url).pathname;
/**
 * What the daemon may keep over its baseline after an attack: its JS heap in use plus external
 * memory (Buffers), from its own /metrics, and the growth of its RSS while an attack runs.
 */
const RSS_BOUND = 64 * 1024 * 1024;
/**
 * RSS over the suite's baseline, a looser bound: RSS is what the daemon ever touched, not what it
 * keeps. Measured on Node 24.21 (docs/security.md, row 7): the attacks' garbage grows V8's young
 * generation (heap total 54 → 101 MB) and the allocator keeps freed Buffers' pages, so RSS stays
 * near 230–250 MB after the daemon is back at heap used 22 MB + external 45 MB (Node 20: 180 MB).
 * The unbounded buffer this suite guards against grew it by 261 MB (76 → 337 MB).
 */
const RSS_LOOSE = 2 * RSS_BOUND;
let scratch: string;
let work: string;
let dataDir: string;
let daemon: DaemonProcess;
let base: string;
let token: string;
let baselineRss = 0;
let baselineKept = 0;

beforeAll(async () => {
  expect(process.getuid?.(), 'the suite runs its agents as nobody: run it as root (CI does)').toBe(0);
  await setUpInstall();
  scratch = mkdtempSync(join(tmpdir(), 'agentwire-hostile-'));
  chmodSync(scratch, 0o755);
  work = join(scratch, 'work');
  mkdirSync(work, { mode: 0o777 });
  chmodSync(work, 0o777);
  dataDir = join(scratch, 'data');
  daemon = new DaemonProcess(installDir(), {
    args: ['--data-dir', dataDir, '--agent-user', 'nobody', '--max-line-chars', String(1024 * 1024), '--acp-agent', `hostile=${process.execPath} ${AGENT}`],
  });
  token = await daemon.announcedToken();
  base = `http://127.0.0.1:${await daemon.port()}`;
  await create('peer', { agent: 'mock' });
  // The baseline is taken after a flood, once V8's heap has grown to its working size (it keeps
  // what it grew to for a while): what the suite bounds is growth beyond that, attack after attack.
  await turn('peer', 'flood 20000');
  baselineRss = rss();
  baselineKept = await kept();
}, 120_000);

afterAll(() => {
  daemon?.stop();
  removeInstall();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function rss(): number {
  const status = readFileSync(`/proc/${daemon.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

/** The daemon's JS heap in use plus its external memory (Buffers), as its /metrics tells. */
async function kept(): Promise<number> {
  const text = await (await call('GET', '/metrics')).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  const sum = gauge('nodejs_heap_size_used_bytes') + gauge('nodejs_external_memory_bytes');
  expect(sum, 'the daemon reports nodejs_heap_size_used_bytes and nodejs_external_memory_bytes').toBeGreaterThan(0);
  return sum;
}

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

async function ok(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await call(method, path, body);
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return text === '' ? undefined : JSON.parse(text);
}

async function create(sid: string, body: Record<string, unknown>): Promise<void> {
  await ok('POST', `/v1/sessions/${sid}`, { cwd: work, ...body });
}

async function events(sid: string): Promise<UniversalEvent[]> {
  const all: UniversalEvent[] = [];
  for (;;) {
    const page = (await ok('GET', `/v1/sessions/${sid}/events?offset=${all.length}&limit=1000`)) as { events: UniversalEvent[] };
    all.push(...page.events);
    if (page.events.length < 1000) return all;
  }
}

/** Sends a message; resolves with the events from then on once the turn ended or waits for a human. */
async function turn(sid: string, message: string, body: Record<string, unknown> = {}): Promise<UniversalEvent[]> {
  const before = (await events(sid)).length;
  await ok('POST', `/v1/sessions/${sid}/messages`, { message, ...body });
  return waitFor(
    async () => {
      const after = (await events(sid)).slice(before);
      return after.some((e) => e.type === 'turn.ended' || e.type === 'permission.requested') ? after : undefined;
    },
    30_000,
    `turn '${message.slice(0, 40)}' of ${sid}`,
  );
}

let peerTurns = 0;
/** What must hold after every attack. */
async function stillStanding(attacked?: string): Promise<void> {
  const started = Date.now();
  const health = await fetch(`${base}/v1/health`, { signal: AbortSignal.timeout(1_000) });
  expect(health.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(1_000);
  const word = `alive-${++peerTurns}`;
  const replies = await turn('peer', `echo ${word}`);
  expect(replies.some((e) => e.type === 'item.completed' && e.data.item.role === 'assistant' && JSON.stringify(e.data.item.content).includes(word))).toBe(true);
  if (attacked) {
    const all = await events(attacked);
    expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1)); // nothing lost from the store
  }
  // What the daemon keeps comes back (its garbage is collected while it answers the polls).
  let now = 0;
  await waitFor(async () => (now = await kept()) < baselineKept + RSS_BOUND || undefined, 10_000, `heap used + external back under baseline + 64 MB (${now} vs ${baselineKept})`);
  expect(rss() - baselineRss, `RSS ${rss()} vs baseline ${baselineRss}`).toBeLessThan(RSS_LOOSE);
}

const unparsed = (list: UniversalEvent[]) => list.filter((e) => e.type === 'agent.unparsed');
const texts = (list: UniversalEvent[]) =>
  list.flatMap((e) => (e.type === 'item.completed' && e.data.item.role === 'assistant' ? [e.data.item.content.map((p) => (p.type === 'text' ? p.text : '')).join('')] : []));

describe('a hostile ACP agent, turn after turn', () => {
  it('usage of 1e300 and Infinity is a warning, not arithmetic: no budget request, no hang', async () => {
    await create('h1', { agent: 'hostile', budget: { max_tokens: 1000 } });
    for (const n of ['1e300', '1e999', '-5']) {
      const got = await turn('h1', `usage ${n}`);
      expect(got.find((e) => e.type === 'turn.ended')?.data).not.toHaveProperty('metadata.usage');
      if (n === '1e300') expect(unparsed(got).map((e) => e.data)).toEqual([expect.objectContaining({ location: 'normalizer.turn.ended', error: expect.stringContaining('input_tokens 1e+300') })]);
    }
    const next = await turn('h1', 'hello');
    expect(next.some((e) => e.type === 'permission.requested')).toBe(false);
    expect(((await ok('GET', '/v1/sessions/h1')) as { usage: { input_tokens: number } }).usage.input_tokens).toBe(0);
    await stillStanding('h1');
  }, 60_000);

  it('an agent permission id "budget_1" never passes for the daemon’s budget request', async () => {
    await create('h2', { agent: 'hostile', budget: { max_turns: 1 } });
    const first = await turn('h2', 'collide');
    const asked = first.find((e) => e.type === 'permission.requested');
    expect(asked?.data).toMatchObject({ permission_id: 'agent~budget_1' });
    await ok('POST', '/v1/sessions/h2/permissions/agent~budget_1/reply', { reply: 'once' });
    const answered = await waitFor(async () => texts(await events('h2')).find((t) => t.startsWith('Permission answered')), 10_000, 'the agent’s answer');
    expect(answered).toBe('Permission answered: yes.');
    await waitFor(async () => (await events('h2')).some((e) => e.type === 'turn.ended'), 10_000, 'turn 1 ended');
    // Turn 2 is over max_turns: the daemon's own request, under its own id, is asked and answered by it.
    const second = await turn('h2', 'hello');
    const budget = second.find((e) => e.type === 'permission.requested');
    expect(budget?.data).toMatchObject({ permission_id: 'budget_1', action: 'budget' });
    await ok('POST', '/v1/sessions/h2/permissions/budget_1/reply', { reply: 'reject' });
    const ended = await waitFor(async () => (await events('h2')).filter((e) => e.type === 'turn.ended').at(1), 10_000, 'turn 2 ended');
    expect(ended.data.metadata).toMatchObject({ reason: 'budget_exceeded' });
    await stillStanding('h2');
  }, 60_000);

  it('deep, huge, flooding and control-character output', async () => {
    await create('h3', { agent: 'hostile' });
    const deep = await turn('h3', 'deep 200000');
    expect(unparsed(deep)).toHaveLength(1);
    await stillStanding('h3');
    const huge = await turn('h3', 'huge 4');
    expect(unparsed(huge)).toHaveLength(1);
    await stillStanding('h3');
    const flood = await turn('h3', 'flood 20000');
    expect(unparsed(flood)).toEqual([]);
    await stillStanding('h3');
    const control = await turn('h3', 'control');
    expect(texts(control).join('')).toContain('nul \u0000 bel \u0007 esc \u001b[31m');
    await stillStanding('h3');
    const outside = await turn('h3', 'outside');
    expect(unparsed(outside)).toEqual([]);
    await stillStanding('h3');
  }, 90_000);
});

describe('a client poisoning the store', () => {
  it('a session/new on GET /v1/acp whose _meta nests 200,000 levels is refused; every later write is taken', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/acp?agent=mock`, { headers: { authorization: `Bearer ${token}` } });
    const answers: Record<string, unknown>[] = [];
    ws.on('message', (data) => answers.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }));
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`; // 400 kB: under the frame limit
    ws.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":${JSON.stringify(work)},"mcpServers":[],"_meta":${deep}}}`);
    const refused = await waitFor(() => answers.find((a) => a.error !== undefined), 10_000, 'the frame refused');
    expect(refused).toMatchObject({ error: { code: -32700, message: expect.stringContaining('nested more than 256 levels') } });
    // A deep body over HTTP is refused as well, and the store keeps taking every session's writes.
    const body = await call('POST', '/v1/sessions/poison-http', `{"agent":"mock","cwd":${JSON.stringify(work)},"env":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(body.status).toBe(400);
    ws.close();
    await create('after-poison', { agent: 'mock' });
    const after = await turn('after-poison', 'echo stored');
    expect(texts(after)).toContain('stored');
    expect((await call('GET', '/v1/health')).status).toBe(200);
    await stillStanding('after-poison');
  }, 60_000);
});

/** A WebSocket client that writes frames and never reads (the handshake by hand, masked frames). */
async function neverReading(path: string): Promise<Socket> {
  const socket = connect(Number(new URL(base).port), '127.0.0.1');
  socket.on('error', () => {}); // the daemon cutting it mid-write is what the test waits for
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  await new Promise((resolve) => socket.once('data', resolve)); // the 101; nothing is read after it
  socket.pause();
  return socket;
}

function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, Buffer.alloc(4), payload]); // a zero mask leaves the payload as is
}

describe('a WebSocket client that stops reading', () => {
  it('200,000 requests never read: the daemon stops reading, closes the client, and its memory comes back', async () => {
    const socket = await neverReading('/v1/acp?agent=mock');
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    const one = frame('{"jsonrpc":"2.0","id":1,"method":"no/such/method","params":{"padding":"................................................"}}');
    const batch = Buffer.concat(Array.from({ length: 1000 }, () => one));
    const atStart = rss(); // pages earlier attacks left (not given back) are not this attack's growth
    let peak = 0;
    const sentAt = Date.now();
    for (let i = 0; i < 200 && !socket.destroyed; i++) {
      socket.write(batch);
      if (i % 20 === 0) peak = Math.max(peak, rss());
      await new Promise((r) => setImmediate(r));
    }
    const watch = setInterval(() => (peak = Math.max(peak, rss())), 200);
    const closedAt = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(0), 25_000))]);
    clearInterval(watch);
    socket.destroy();
    expect(closedAt, 'the daemon closes a client that stays over its mark').toBeGreaterThan(0);
    expect(closedAt - sentAt).toBeLessThan(20_000);
    expect(peak - atStart, `peak RSS ${peak} vs ${atStart} when the attack began`).toBeLessThan(RSS_BOUND);
    await stillStanding();
  }, 60_000);
});

describe('attachments as the agent', () => {
  it("a file the agent user cannot read, or one outside the session's cwd, is refused with 403 attachment_refused", async () => {
    await create('att', { agent: 'mock' });
    const root = mkdtempSync(join(scratch, 'root-'));
    await create('att-root', { agent: 'mock', cwd: '/' });
    for (const [sid, path] of [
      ['att-root', join(dataDir, 'token')], // the daemon's token: under cwd /, but the agent cannot read it
      ['att', join(dataDir, 'token')], // and outside the session's cwd
      ['att', join(root, '..', 'data', 'token')],
    ] as const) {
      const res = await call('POST', `/v1/sessions/${sid}/messages`, { message: 'hi', attachments: [{ path }] });
      expect(res.status, path).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'attachment_refused' });
    }
    writeFileSync(join(work, 'private.txt'), 'root only', { mode: 0o600 });
    const own = await call('POST', '/v1/sessions/att/messages', { message: 'hi', attachments: [{ path: 'private.txt' }] });
    expect(own.status).toBe(403);
    expect(await own.json()).toMatchObject({ code: 'attachment_refused', detail: expect.stringContaining("cannot be read by the agent user 'nobody'") });
    writeFileSync(join(work, 'notes.txt'), 'shared', { mode: 0o644 });
    const got = await turn('att', 'echo with a file', { attachments: [{ path: 'notes.txt' }] });
    expect(got.some((e) => e.type === 'turn.ended')).toBe(true);
    await stillStanding('att');
  }, 60_000);
});
