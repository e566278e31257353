// "Run it safely in a sandbox", agent side: whatever an agent prints (binary, endless lines, JSON
// of the wrong shape or depth, half a line at exit, floods) becomes agent.unparsed or error events,
// memory stays within the configured bounds, and the daemon carries on. The agent is the test-only
// garbage agent (garbage-agent.ts) behind the mock's converter, spawned through the real ChildProcess.
import { createHash } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNativeLine } from '../../src/agents/process-options.js';
import type { App } from '../../src/app.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { createGarbageDriver, DEEP_LEVELS, FLOOD_LINES, floodLine, WRONG_SHAPES, writeGarbageProgram, type GarbageDriver } from '../support/garbage-agent.js';
import { createMock, makeApp, post, types, waitFor } from '../support/helpers.js';
import { expectProblem } from '../support/http-problems.js';

const MAX_LINE = 1_000_000;
const MAX_BYTES = 8 * 1024 * 1024;
const MiB = 1024 * 1024;
/** What the daemon logs for every turn before the agent says anything (the mock echoes no user message). */
const PREAMBLE = ['turn.started', 'item.started', 'item.delta', 'item.completed'];

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'agentwire-garbage-')));
const binary = garbageBytes();
let app: App;
let driver: GarbageDriver;

/** Deterministic random bytes after a prefix of the classic invalid UTF-8 sequences; ends mid-character. */
function garbageBytes(): Buffer {
  let x = 0x9e3779b9;
  const random = Buffer.alloc(64 * 1024).map(() => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x & 0xff;
  });
  const nasty = [0x80, 0x0a, 0xc0, 0xaf, 0x0a, 0xe2, 0x82, 0x0a, 0xed, 0xa0, 0x80, 0x0a, 0xf5, 0xff, 0xfe, 0x0a, 0x0d, 0x0a, 0x00, 0x0a, 0xef, 0xbb, 0xbf, 0x0a];
  return Buffer.concat([Buffer.from(nasty), random, Buffer.from([0xe2, 0x82])]);
}

/** The line texts the daemon should see in `bytes` (what line-reader.ts delivers). */
function linesOf(bytes: Buffer): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl !== -1; start = nl + 1, nl = bytes.indexOf(0x0a, start)) {
    const text = bytes.subarray(start, nl).toString('utf8').replace(/\r$/, '');
    if (text !== '') lines.push(text);
  }
  return lines;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
/** The converter hashes the raw text, or the re-serialised JSON when the line parsed. */
function rawHash(line: string): string {
  const native = parseNativeLine(line, false);
  return sha(typeof native === 'string' ? native : JSON.stringify(native));
}

beforeAll(async () => {
  const program = writeGarbageProgram(dir, binary);
  driver = createGarbageDriver(program, { maxLineChars: MAX_LINE, killGraceMs: 1_000 });
  app = await makeApp({ config: { maxLineChars: MAX_LINE, maxBytesPerSession: MAX_BYTES, killGraceMs: 1_000 }, registry: { mock: driver }, baseDir: dir });
});

afterAll(async () => {
  await app?.app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `command` to a fresh session; returns the events of that turn, straight from the log (a flood is more than a poll page). */
async function garbage(command: string, id = command): Promise<UniversalEvent[]> {
  await createMock(app, id);
  const session = app.sessions.get(id);
  const before = session.log.lastSequence;
  const res = await post(app, `/v1/sessions/${id}/messages`, { message: command });
  expect(res.statusCode, res.body).toBe(204);
  await waitFor(() => session.status === 'idle' || session.status === 'ended', 20_000, `'${command}' to finish`);
  return session.log.read(Math.max(before, session.log.oldestSequence - 1));
}

const unparsed = (events: UniversalEvent[]) => events.flatMap((e) => (e.type === 'agent.unparsed' ? [e.data] : []));

/** The raw payloads of a session's agent.unparsed events, as a client reads them over HTTP. */
async function rawsOverHttp(id: string): Promise<unknown[]> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}/events?include_raw=true&limit=10000` });
  expect(res.statusCode).toBe(200);
  return res.json<{ events: UniversalEvent[] }>().events.flatMap((e) => (e.type === 'agent.unparsed' ? [e.raw] : []));
}

function expectNoCrash(): void {
  expect(driver.crashes.splice(0).map(String)).toEqual([]);
}

function expectBounded(id: string): void {
  expect(app.sessions.get(id).log.size.bytes).toBeLessThanOrEqual(app.config.maxBytesPerSession);
}

describe('garbage on an agent stdout', () => {
  it('binary bytes, invalid UTF-8 included: one agent.unparsed per line, raw kept exactly', async () => {
    const events = await garbage('binary');
    const lines = linesOf(Buffer.concat([binary, Buffer.from('\n')]));
    expect(lines.length).toBeGreaterThan(200);
    expect(unparsed(events)).toEqual(lines.map((line) => ({ error: expect.any(String), location: 'mock.convert', raw_hash: rawHash(line) })));
    expect(types(events)).toEqual([...PREAMBLE, ...lines.map(() => 'agent.unparsed'), 'turn.ended']);
    expect(await rawsOverHttp('binary')).toEqual(lines.map((line) => parseNativeLine(line, false)));
    expectNoCrash();
  });

  it('a 10 MB line written in pieces, then a newline: one unparsed event, raw cut to maxLineChars', async () => {
    const events = await garbage('bigline');
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'turn.ended']);
    expect(unparsed(events)).toEqual([{ error: 'not JSON', location: 'mock.convert', raw_hash: sha('x'.repeat(MAX_LINE)) }]);
    const [raw] = await rawsOverHttp('bigline');
    expect(typeof raw === 'string' && raw.length === MAX_LINE && /^x+$/.test(raw)).toBe(true);
    expect(app.sessions.get('bigline').log.size.bytes).toBeLessThan(2 * MAX_LINE + 64 * 1024);
    expectNoCrash();
  });

  it('a 20 MB line that would be valid whole is unparsed, never half-read as a message', async () => {
    const events = await garbage('hugeline');
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'turn.ended']);
    const [raw] = await rawsOverHttp('hugeline');
    expect(typeof raw === 'string' && raw.length).toBe(MAX_LINE);
    expect(String(raw).startsWith('{"type":"text","id":"big","chunk":"yyy')).toBe(true);
    expectBounded('hugeline');
    expectNoCrash();
  });

  it('more big lines than the byte budget holds: the log evicts and stays under maxBytesPerSession', async () => {
    await garbage('manybig');
    const log = app.sessions.get('manybig').log;
    expect(log.size.evicted).toBeGreaterThan(0);
    expectBounded('manybig');
    // Session start, the preamble, 12 unparsed lines and turn.ended were all logged; the oldest are gone, visibly.
    expect(log.lastSequence).toBe(1 + PREAMBLE.length + 12 + 1);
    expectProblem(await app.app.inject({ method: 'GET', url: '/v1/sessions/manybig/events?offset=0' }), 410, 'events_evicted');
    const page = await app.app.inject({ method: 'GET', url: `/v1/sessions/manybig/events?offset=${log.oldestSequence - 1}` });
    expect(page.statusCode).toBe(200);
    expectNoCrash();
  });

  it('JSON of the wrong shape: one unparsed per line, saying what was wrong', async () => {
    const events = await garbage('shapes');
    expect(types(events)).toEqual([...PREAMBLE, ...WRONG_SHAPES.map(() => 'agent.unparsed'), 'turn.ended']);
    const data = unparsed(events);
    expect(data.map((d) => d.raw_hash)).toEqual(WRONG_SHAPES.map(rawHash));
    expect(data.every((d) => d.location === 'mock.convert' && d.error.length > 0 && d.error.length <= 200)).toBe(true);
    expect(data.slice(0, 2).map((d) => d.error)).toEqual(['missing type', 'unknown type "nope"']);
    expectNoCrash();
  });

  it(`an unbalanced ${DEEP_LEVELS}-deep [ line is unparsed`, async () => {
    const events = await garbage('deep');
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'turn.ended']);
    expect(unparsed(events)[0]).toMatchObject({ error: 'not JSON', raw_hash: sha('['.repeat(DEEP_LEVELS)) });
    expectNoCrash();
  });

  // JSON.parse takes any depth; JSON.stringify and String() in EventLog.append overflow the stack.
  // With the real mock driver this RangeError is an uncaughtException: the daemon dies.
  it(`a balanced ${DEEP_LEVELS}-deep array is unparsed too`, async () => {
    const events = await garbage('deepvalid');
    expectNoCrash();
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'turn.ended']);
  });

  it('a valid line with a too-deep payload becomes unparsed or error', async () => {
    const events = await garbage('deeppayload');
    expectNoCrash();
    expect(events.some((e) => e.type === 'agent.unparsed' || e.type === 'error')).toBe(true);
  });

  it(`a flood of ${FLOOD_LINES} invalid lines: as many unparsed events, in order, none dropped`, async () => {
    const started = Date.now();
    const events = await garbage('flood');
    expect(unparsed(events).map((d) => d.raw_hash)).toEqual(Array.from({ length: FLOOD_LINES }, (_, i) => sha(floodLine(i))));
    expect(events.at(-1)?.type).toBe('turn.ended');
    expect(Date.now() - started).toBeLessThan(10_000);
    expectBounded('flood');
    expectNoCrash();
  });
});

describe('garbage as an agent exits', () => {
  it('half a line, then exit 0: unparsed, then the turn and the session end', async () => {
    const events = await garbage('partial');
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'turn.ended', 'session.ended']);
    expect(await rawsOverHttp('partial')).toEqual(['{"type":"tex']);
    expect(events.find((e) => e.type === 'turn.ended')?.data).toMatchObject({ metadata: { reason: 'agent_exited' } });
    expect(events.at(-1)?.data).toMatchObject({ reason: 'completed', terminated_by: 'agent', exit_code: 0 });
    expect(app.sessions.get('partial').status).toBe('ended');
    expectNoCrash();
  });

  it('half a line and megabytes of stderr, then exit 3: unparsed, error, session.ended with bounded stderr', async () => {
    const events = await garbage('partialcrash');
    expect(types(events)).toEqual([...PREAMBLE, 'agent.unparsed', 'error', 'turn.ended', 'session.ended']);
    expect(events.find((e) => e.type === 'error')?.data).toMatchObject({ code: 'agent_exited', details: { exit_code: 3 } });
    const ended = events.at(-1);
    expect(ended?.type === 'session.ended' && ended.data).toMatchObject({ reason: 'error', terminated_by: 'agent', exit_code: 3 });
    const stderr = ended?.type === 'session.ended' ? ended.data.stderr : undefined;
    expect(stderr).toMatchObject({ truncated: true, total_lines: 10_002 });
    expect(stderr?.head).toContain('boom');
    expect(JSON.stringify(stderr).length).toBeLessThan(5 * MiB / 50);
    expectNoCrash();
  });
});

describe('after all that garbage', () => {
  it('the daemon is healthy, old sessions are readable and new ones work', async () => {
    const health = await app.app.inject({ method: 'GET', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });

    const normal = await garbage('normal', 'fresh');
    expect(unparsed(normal)).toEqual([]);
    expect(normal.find((e) => e.type === 'item.completed' && e.data.item.role === 'assistant')).toMatchObject({
      data: { item: { content: [{ type: 'text', text: 'all good' }] } },
    });

    // A session that took garbage still takes a good turn: the converter state was not poisoned.
    const flood = app.sessions.get('flood');
    const before = flood.log.lastSequence;
    expect((await post(app, '/v1/sessions/flood/messages', { message: 'normal' })).statusCode).toBe(204);
    await waitFor(() => flood.status === 'idle', 10_000, 'a normal turn after the flood');
    expect(unparsed(flood.log.read(before))).toEqual([]);

    const list = await app.app.inject({ method: 'GET', url: '/v1/sessions' });
    expect(list.statusCode).toBe(200);
    for (const { sessionId } of list.json<{ sessions: { sessionId: string }[] }>().sessions) {
      const log = app.sessions.get(sessionId).log;
      const page = await app.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}/events?offset=${log.oldestSequence - 1}&limit=100` });
      expect(page.statusCode, sessionId).toBe(200);
      expectBounded(sessionId);
    }
    expectNoCrash();
  });
});
