// docs/testing.md's map of the suite ("How the suite is organised") is complete: every test file
// under test/ is named there by its path from the repository root, and every test file the map
// names exists. A new test file fails here until its row says what it shows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HEADING = '## How the suite is organised';

/** The text of docs/testing.md from the map's heading to the next heading of its level. */
export function mapSection(markdown: string): string {
  const start = markdown.indexOf(`\n${HEADING}\n`);
  if (start < 0) throw new Error(`docs/testing.md has no "${HEADING}" section`);
  const rest = markdown.slice(start + HEADING.length + 2);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The test files a map names: every `test/….test.ts` in code spans. */
export function namedTestFiles(section: string): string[] {
  return [...section.matchAll(/`(test\/[^`\s]+\.test\.ts)`/g)].map((m) => m[1]!);
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

const section = mapSection(readFileSync(join(ROOT, 'docs/testing.md'), 'utf8'));
const named = new Set(namedTestFiles(section));
const files = testFiles(join(ROOT, 'test')).sort();

describe("docs/testing.md's map of the suite", () => {
  it('reads the map and finds the test files', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(named.size).toBeGreaterThan(50);
  });

  it('finds the paths a map names, and only those in its section', () => {
    const doc = `# T\n\nSee \`test/a/x.test.ts\`.\n\n${HEADING}\n\n| \`test/unit/y.test.ts\`, \`z.test.ts\` |\n\n## Next\n\n\`test/b.test.ts\`\n`;
    expect(namedTestFiles(mapSection(doc))).toEqual(['test/unit/y.test.ts']);
  });

  it.each(files)('names %s', (file) => {
    expect(named.has(file), `${file} is not in docs/testing.md's map ("${HEADING}"): add it to the row of its folder, saying what it shows`).toBe(true);
  });

  it('names no test file that does not exist', () => {
    expect([...named].filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });
});
