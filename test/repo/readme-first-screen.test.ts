// The README's first screen (issue 42): what agentwire is, then the two commands, before any list of
// features. A newcomer who reads 30 lines has `npm ci && npm start` and `npm test`, and knows the
// second goes in another terminal because the first keeps running.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const README = readFileSync(join(fileURLToPath(new URL('../..', import.meta.url)), 'README.md'), 'utf8');
const lines = README.split('\n');

describe("README's first screen", () => {
  it('is the description, then the quick start with the two commands, within 30 lines', () => {
    const quick = lines.indexOf('## Quick start');
    expect(quick, 'a "## Quick start" heading').toBeGreaterThan(0);
    expect(lines.slice(0, quick).filter((l) => l.startsWith('## ')), 'no section before the quick start').toEqual([]);
    const open = lines.indexOf('```sh', quick);
    const close = lines.indexOf('```', open + 1);
    expect(close, 'the commands end on the first screen').toBeLessThan(30);
    const commands = lines.slice(open + 1, close).map((l) => l.replace(/\s+#.*$/, '').trim());
    expect(commands).toEqual(['npm ci && npm start', 'npm test']);
    const [start, test] = lines.slice(open + 1, close);
    expect(start).toMatch(/terminal 1/);
    expect(test).toMatch(/terminal 2 \(npm start holds the first\)/);
  });

  it('lists the features after the quick start', () => {
    expect(README.indexOf('## What it does')).toBeGreaterThan(README.indexOf('## Quick start'));
    expect(README.indexOf('| agent | how it runs |')).toBeGreaterThan(README.indexOf('## What it does'));
  });
});
