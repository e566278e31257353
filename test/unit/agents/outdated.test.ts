// `npm run agents:outdated`'s table against a stubbed registry (no network): the format, the summary
// line, a failed lookup, and that every pinned agent is asked about exactly once.
import { describe, expect, it } from 'vitest';
import { formatOutdated, outdatedRows } from '../../../src/agents/outdated.js';
import { INSTALLABLE_AGENTS, PINNED_AGENTS } from '../../../src/agents/versions.js';

const pinned = (agent: (typeof INSTALLABLE_AGENTS)[number]) => PINNED_AGENTS[agent].version;

describe('agents:outdated', () => {
  it('asks the registry once per pinned package and prints an aligned table with a summary', async () => {
    const asked: string[] = [];
    const published: Record<string, string> = Object.fromEntries(INSTALLABLE_AGENTS.map((a) => [PINNED_AGENTS[a].package, `${pinned(a)}\n`]));
    published['@anthropic-ai/claude-code'] = '99.0.0\n';
    published['@openai/codex'] = '98.1.0\n';
    const rows = await outdatedRows(async (pkg) => {
      asked.push(pkg);
      return published[pkg]!;
    });
    expect(asked).toEqual(INSTALLABLE_AGENTS.map((a) => PINNED_AGENTS[a].package));
    const text = formatOutdated(rows);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^agent +package +pinned +published +status$/);
    // Every column starts at the same offset on every row.
    const column = (line: string, n: number) => [...line.matchAll(/(?<=  |^)\S/g)][n]?.index;
    for (const line of lines.slice(1, 1 + INSTALLABLE_AGENTS.length)) for (const n of [1, 2, 3, 4]) expect(column(line, n), line).toBe(column(lines[0]!, n));
    expect(lines[1]).toMatch(new RegExp(`^claude +@anthropic-ai/claude-code +${pinned('claude')} +99\\.0\\.0 +newer published$`));
    expect(lines[2]).toMatch(new RegExp(`^codex +@openai/codex +${pinned('codex')} +98\\.1\\.0 +newer published$`));
    expect(lines[3]).toMatch(new RegExp(`^opencode +opencode-ai +${pinned('opencode')} +${pinned('opencode')} +up to date$`));
    expect(lines[1 + INSTALLABLE_AGENTS.length]).toBe('');
    expect(lines[2 + INSTALLABLE_AGENTS.length]).toBe(
      `2 of ${INSTALLABLE_AGENTS.length} pinned agents have a newer release (claude, codex): edit src/agents/versions.ts, re-record the fixtures and run every e2e suite (docs/testing.md).`,
    );
    expect(text.endsWith('\n')).toBe(true);
  });

  it('says so when every pin is current', async () => {
    const text = formatOutdated(await outdatedRows(async (pkg) => INSTALLABLE_AGENTS.map((a) => PINNED_AGENTS[a]).find((p) => p.package === pkg)!.version));
    expect(text.trimEnd().split('\n').at(-1)).toBe('All pinned agents are the newest published versions.');
    expect(text).not.toContain('newer published');
  });

  it('a failed lookup is a "?" row and a line naming the package, not a crash', async () => {
    const rows = await outdatedRows(async (pkg) => {
      if (pkg === 'opencode-ai') throw new Error('npm error code E404\nnpm error 404 Not Found');
      return INSTALLABLE_AGENTS.map((a) => PINNED_AGENTS[a]).find((p) => p.package === pkg)!.version;
    });
    const text = formatOutdated(rows);
    expect(text).toMatch(new RegExp(`\\nopencode +opencode-ai +${pinned('opencode')} +\\? +lookup failed\\n`));
    expect(text).toContain('opencode: could not ask the registry about opencode-ai: npm error code E404\n');
  });
});
