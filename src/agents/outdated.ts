// `npm run agents:outdated` (scripts/agents-outdated.js): each pinned agent CLI (versions.ts) beside
// the newest version published on the npm registry, as a plain table. It only reports: re-pinning
// means re-recording fixtures and re-running every e2e suite, a decision for a person. The registry
// lookup is a parameter so the table's format is tested offline (test/unit/agents/outdated.test.ts).
import { INSTALLABLE_AGENTS, PINNED_AGENTS, type InstallableAgentId } from './versions.js';

/** The newest published version of an npm package (`npm view <pkg> version`); throws when unknown. */
export type PublishedLookup = (pkg: string) => Promise<string>;

export interface OutdatedRow {
  agent: InstallableAgentId;
  package: string;
  pinned: string;
  /** undefined when the lookup failed (`error` says why). */
  published: string | undefined;
  status: 'current' | 'behind' | 'unknown';
  error?: string;
}

/** One row per pinned agent, looked up one after the other (a handful of small registry calls). */
export async function outdatedRows(lookup: PublishedLookup): Promise<OutdatedRow[]> {
  const rows: OutdatedRow[] = [];
  for (const agent of INSTALLABLE_AGENTS) {
    const { package: pkg, version: pinned } = PINNED_AGENTS[agent];
    try {
      const published = (await lookup(pkg)).trim();
      rows.push({ agent, package: pkg, pinned, published, status: published === pinned ? 'current' : 'behind' });
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
      rows.push({ agent, package: pkg, pinned, published: undefined, status: 'unknown', error: message });
    }
  }
  return rows;
}

const STATUS: Record<OutdatedRow['status'], string> = {
  current: 'up to date',
  behind: 'newer published',
  unknown: 'lookup failed',
};

/** The rows as an aligned text table, then one summary line (and one line per failed lookup). */
export function formatOutdated(rows: readonly OutdatedRow[]): string {
  const table = [
    ['agent', 'package', 'pinned', 'published', 'status'],
    ...rows.map((r) => [r.agent, r.package, r.pinned, r.published ?? '?', STATUS[r.status]]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((cells) => cells[i]!.length)));
  const lines = table.map((cells) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  const behind = rows.filter((r) => r.status === 'behind');
  lines.push('');
  lines.push(
    behind.length === 0
      ? 'All pinned agents are the newest published versions.'
      : `${behind.length} of ${rows.length} pinned agents have a newer release (${behind.map((r) => r.agent).join(', ')}): edit src/agents/versions.ts, re-record the fixtures and run every e2e suite (docs/testing.md).`,
  );
  for (const r of rows) if (r.status === 'unknown') lines.push(`${r.agent}: could not ask the registry about ${r.package}: ${r.error}`);
  return `${lines.join('\n')}\n`;
}
