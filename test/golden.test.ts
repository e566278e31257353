// Walks every golden fixture of every agent: test/fixtures/<agent>/<case>.jsonl (native lines, with
// daemon actions interleaved as {"$daemon": …} lines, see test/fixtures/README.md) through the real
// converter, normalizer and event log with deterministic ids and clock, and compares the result with
// <case>.events.json exactly. UPDATE_GOLDEN=1 rewrites the expected files (review the diff!).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../src/agents/registry.js';
import type { AgentDriver } from '../src/agents/types.js';
import { AgentId } from '../src/schema/agents.js';
import { UniversalEvent } from '../src/schema/events.js';
import { EventLog } from '../src/sessions/event-log.js';
import { Normalizer, type Normalized } from '../src/sessions/normalize.js';
import { counterIds, steppingClock } from '../src/util/deps.js';

const root = new URL('./fixtures/', import.meta.url).pathname;
const registry = createRegistry({ maxLineChars: 1 << 20, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 20, stderrTailLines: 50 });

type DaemonAction =
  | { $daemon: 'turn'; message: string; attachments?: { path: string; mime?: string }[] }
  | { $daemon: 'permission_reply'; id: string; reply: 'once' | 'always' | 'reject' }
  | { $daemon: 'question_reply'; id: string; answers: string[][] | null }
  | { $daemon: 'exit'; exit_code: number | null; signal?: string | null; stderr?: string; requested?: boolean };

function replay(driver: AgentDriver, lines: string[]): UniversalEvent[] {
  const ids = counterIds();
  const log = new EventLog('golden', { maxEvents: 1e6, maxBytes: 1e9 }, ids, steppingClock());
  const normalizer = new Normalizer(driver.capabilities, ids);
  const append = (out: Normalized[]) => out.forEach((n) => log.append(n.event, n.raw, n.nativeSessionId));
  let state = driver.converter.initial();
  append(normalizer.sessionCreated({ agent: driver.id, cwd: '/workspace' }, null));
  for (const line of lines) {
    const parsed = parseLine(line);
    if (isAction(parsed)) {
      append(act(normalizer, parsed));
      continue;
    }
    const { state: next, events } = driver.converter.convert(state, parsed);
    state = next;
    append(normalizer.agent(events, parsed));
  }
  return log.read(0, Infinity, true);
}

function act(n: Normalizer, a: DaemonAction): Normalized[] {
  switch (a.$daemon) {
    case 'turn':
      return n.turnStarted({ message: a.message, attachments: a.attachments ?? [] }, { message: a.message });
    case 'permission_reply':
      return n.permissionReplied(a.id, a.reply, { reply: a.reply });
    case 'question_reply':
      return n.questionReplied(a.id, a.answers, { answers: a.answers });
    case 'exit': {
      const lines = a.stderr ? a.stderr.split('\n') : [];
      const stderr = { head: lines.join('\n'), truncated: false, total_lines: lines.length };
      return n.processExited({ exitCode: a.exit_code, signal: a.signal ?? null, stderr, requested: a.requested ?? false });
    }
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line; // non-JSON native output is part of what fixtures test
  }
}

function isAction(value: unknown): value is DaemonAction {
  return typeof value === 'object' && value !== null && '$daemon' in value;
}

// Agents whose converter exists have <case>.jsonl + .events.json pairs at the top of their folder;
// recorded transcripts waiting for a converter live in <agent>/recorded/ and are not walked here.
const agents = existsSync(root)
  ? readdirSync(root).filter((d) => AgentId.safeParse(d).success && readdirSync(join(root, d)).some((f) => f.endsWith('.jsonl')))
  : [];

describe.each(agents)('golden fixtures: %s', (agent) => {
  const dir = join(root, agent);
  const cases = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length));

  it('has fixtures and a driver', () => {
    expect(cases.length).toBeGreaterThan(0);
    expect(registry[agent as AgentId]).toBeDefined();
  });

  it.each(cases)('%s', (name) => {
    const lines = readFileSync(join(dir, `${name}.jsonl`), 'utf8').split('\n').filter((l) => l.trim() !== '');
    const events = replay(registry[agent as AgentId]!, lines);
    for (const e of events) expect(UniversalEvent.safeParse(e).success, JSON.stringify(e)).toBe(true);
    const expectedFile = join(dir, `${name}.events.json`);
    if (process.env.UPDATE_GOLDEN) writeFileSync(expectedFile, `${JSON.stringify(events, null, 2)}\n`);
    const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as UniversalEvent[];
    expect(events).toEqual(expected);
    // Parse failures are bugs, except in the fixture that is about them.
    if (!name.includes('unparsed')) expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  });
});
