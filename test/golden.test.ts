// Walks every golden fixture of every agent: test/fixtures/<agent>/<case>.jsonl (native lines, with
// daemon actions interleaved as {"$daemon": …} lines, see test/fixtures/README.md) through the real
// converter, normalizer and event log with deterministic ids and clock, and compares the result with
// <case>.events.json exactly. UPDATE_GOLDEN=1 rewrites the expected files (review the diff!).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../src/agents/registry.js';
import { AgentId } from '../src/schema/agents.js';
import { UniversalEvent } from '../src/schema/events.js';
import { replay } from './golden-replay.js';

const root = new URL('./fixtures/', import.meta.url).pathname;
const registry = createRegistry({ maxLineChars: 1 << 20, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 20, stderrTailLines: 50 });

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
