// The docs stand alone: every relative link in the repository's markdown names a file the
// repository has, and none leaves it. A reader of a clone (or of the files on GitHub) has nothing
// else, so a reference to a file beside the repository is a dead end for them. Paths written as code
// (`docs/amp.md`) count too: that is how these docs name files, and how the dead ends got in.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every markdown file of the repository: the README, ARCHITECTURE.md, docs/, and the READMEs beside the tests. */
function markdownFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // Installed packages and build output are not ours; dot-directories are tooling (.git, .ci).
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

interface Ref {
  kind: 'link' | 'code';
  target: string;
}

/** Links (`[t](x)`, `![t](x)`, `[t]: x`) and path-like code spans naming a .md file, outside fenced code blocks. */
function references(text: string): Ref[] {
  const prose = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  const refs: Ref[] = [];
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) refs.push({ kind: 'link', target: m[1]! });
  for (const m of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) refs.push({ kind: 'link', target: m[1]! });
  for (const m of prose.matchAll(/`([^`\s]+\.md)(?:#[^`\s]*)?`/g)) refs.push({ kind: 'code', target: m[1]! });
  return refs;
}

/** What is wrong with one reference of `file`, or undefined when it names a file inside the repository. */
function problem(file: string, ref: Ref, root = ROOT): string | undefined {
  // Web addresses (any scheme) and anchors within the page are not files.
  if (/^[a-z][a-z0-9+.-]*:/i.test(ref.target) || ref.target.startsWith('#')) return undefined;
  const path = decodeURIComponent(ref.target.replace(/[?#].*$/, ''));
  if (path === '') return undefined;
  if (isAbsolute(path)) return 'is an absolute path, which names nothing in a clone';
  // A link is relative to its document; a code span may also be written from the repository's root.
  const candidates = ref.kind === 'link' ? [resolve(dirname(file), path)] : [resolve(dirname(file), path), resolve(root, path)];
  const inside = candidates.filter((c) => !relative(root, c).startsWith('..') && !isAbsolute(relative(root, c)));
  if (inside.length === 0) return 'points outside the repository';
  if (!inside.some((c) => existsSync(c))) return 'names a file the repository does not have';
  return undefined;
}

describe('links in the documentation', () => {
  it('the checker finds links and code paths, and refuses what leaves the repository or does not exist', () => {
    const doc = join(ROOT, 'docs/example.md');
    const text = [
      'See [events](events.md), [the readme](../README.md#quick-start), [web](https://example.com), [here](#top).',
      'The rules are in `../shared/design.md` and `spec/universal-schema-spec.md`; recorded in `test/fixtures/README.md`.',
      '[out]: ../../elsewhere/notes.md',
      '```sh',
      'cat [not a link](nowhere.md)',
      '```',
    ].join('\n');
    const found = references(text).map((ref) => ({ ...ref, problem: problem(doc, ref) }));
    expect(found).toEqual([
      { kind: 'link', target: 'events.md', problem: undefined },
      { kind: 'link', target: '../README.md#quick-start', problem: undefined },
      { kind: 'link', target: 'https://example.com', problem: undefined },
      { kind: 'link', target: '#top', problem: undefined },
      { kind: 'link', target: '../../elsewhere/notes.md', problem: 'points outside the repository' },
      { kind: 'code', target: '../shared/design.md', problem: 'names a file the repository does not have' },
      { kind: 'code', target: 'spec/universal-schema-spec.md', problem: 'names a file the repository does not have' },
      { kind: 'code', target: 'test/fixtures/README.md', problem: undefined },
    ]);
    expect(problem(doc, { kind: 'link', target: '/etc/passwd' })).toBe('is an absolute path, which names nothing in a clone');
  });

  it('every relative link and file path in README.md, ARCHITECTURE.md, docs/ and the test READMEs resolves inside the repository', () => {
    const files = markdownFiles();
    const names = files.map((f) => relative(ROOT, f));
    // The documents this is about are really read (a wrong root would find nothing and pass).
    expect(names).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'docs/events.md', 'docs/http-api.md', 'docs/amp.md']));
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const ref of references(readFileSync(file, 'utf8'))) {
        checked++;
        const why = problem(file, ref);
        if (why) broken.push(`${relative(ROOT, file)}: ${ref.target} ${why}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
