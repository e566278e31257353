// Walks every golden fixture of every agent: test/agents/<agent>/fixtures/<case>.jsonl (native lines, with
// daemon actions interleaved as {"$daemon": …} lines, see test/agents/README.md) through the real
// converter, normalizer and event log with deterministic ids and clock, and compares the result with
// <case>.events.json exactly. UPDATE_GOLDEN=1 rewrites the expected files (review the diff!).
// Each fixture is replayed once: the agents in OWN_REPLAY have a convert test that replays their
// fixtures (adding structural checks of each case), so here they only show that the registry's driver
// converts with what that test replays through.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCapabilities } from '../../src/agents/claude/capabilities.js';
import { claudeConverter } from '../../src/agents/claude/convert.js';
import { codexCapabilities } from '../../src/agents/codex/capabilities.js';
import { codexConverter } from '../../src/agents/codex/convert.js';
import { opencodeCapabilities } from '../../src/agents/opencode/capabilities.js';
import { opencodeConverter } from '../../src/agents/opencode/convert.js';
import { createRegistry } from '../../src/agents/registry.js';
import { AgentId } from '../../src/schema/agents.js';
import { expectGolden, type Replayable } from '../support/golden-replay.js';

const root = new URL('./', import.meta.url).pathname;
const fixturesOf = (agent: string) => join(root, agent, 'fixtures');
// acp/fixtures/ is the generic ACP driver's (recorded from test/support/acp-test-agent.mjs): a
// configured ACP agent named `acp` carries it here; it is never started.
const acp = { name: 'acp', command: 'acp-test-agent', args: [] };
const registry = createRegistry({ maxLineChars: 1 << 20, killGraceMs: 100, startTimeoutMs: 1000, stderrHeadLines: 20, stderrTailLines: 50, acpAgents: [acp] });

/** Agents whose test/agents/<agent>/convert.test.ts replays their fixtures, through these. */
const OWN_REPLAY: Record<string, Pick<Replayable, 'capabilities' | 'converter'>> = {
  claude: { capabilities: claudeCapabilities, converter: claudeConverter },
  codex: { capabilities: codexCapabilities, converter: codexConverter },
  opencode: { capabilities: opencodeCapabilities, converter: opencodeConverter },
};

// Agents whose converter exists have <case>.jsonl + .events.json pairs at the top of their fixtures
// folder; recorded transcripts waiting for a converter live in fixtures/recorded/ and are not walked.
const agents = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory() && AgentId.safeParse(d.name).success && existsSync(fixturesOf(d.name)))
  .map((d) => d.name)
  .filter((agent) => readdirSync(fixturesOf(agent)).some((f) => f.endsWith('.jsonl')));

describe.each(agents)('golden fixtures: %s', (agent) => {
  const dir = fixturesOf(agent);
  const cases = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length));
  const own = OWN_REPLAY[agent];

  it('has fixtures and a driver', () => {
    expect(cases.length).toBeGreaterThan(0);
    expect(registry[agent as AgentId]).toBeDefined();
  });

  if (own) {
    it(`is replayed by test/agents/${agent}/convert.test.ts, through the registry driver's converter`, () => {
      expect(existsSync(join(root, agent, 'convert.test.ts'))).toBe(true);
      expect(registry[agent as AgentId]!.converter).toBe(own.converter);
      expect(registry[agent as AgentId]!.capabilities).toEqual(own.capabilities);
    });
    return;
  }

  it.each(cases)('%s', (name) => {
    const events = expectGolden(registry[agent as AgentId]!, dir, name);
    // Parse failures are bugs, except in the fixture that is about them.
    if (!name.includes('unparsed')) expect(events.filter((e) => e.type === 'agent.unparsed')).toEqual([]);
  });
});
