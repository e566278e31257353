// The docs stand alone: every relative link in the repository's markdown names a file the
// repository has, and none leaves it. A reader of a clone (or of the files on GitHub) has nothing
// else, so a reference to a file beside the repository is a dead end for them. Paths written as code
// (`docs/amp.md`) count too: that is how these docs name files, and how the dead ends got in.
// The same holds for the comments of the code: a path a comment names (`docs/events.md`,
// `src/sessions/normalize.ts`, `test/agents/golden.test.ts`) is a file of the repository, so the
// documents the code relies on are in docs/, never only beside the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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

/** Source files whose comments are checked: the daemon, the client, the inspector, tests, scripts, benchmarks. */
const CODE_DIRS = ['src', 'client/src', 'client/bin', 'inspector/src', 'test', 'scripts', 'bench', 'examples'];

function codeFiles(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...codeFiles(path));
    else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * A repository path written in prose: it starts at one of the repository's top-level folders (or
 * at a folder documents beside the repository use, `spec/`, `shared/`, which must not be cited),
 * possibly after `../`, and ends in a file name with an extension. Placeholders (`<agent>`) and
 * globs (`*`) end the match, so `src/agents/<agent>/driver.ts` is not a path.
 */
const PATH = /(?<=^|[\s(`'"[,;:])((?:\.\.\/)*(?:src|docs|test|client|inspector|scripts|bench|examples|bin|spec|shared)\/[\w.\/-]*\w\.(?:ts|tsx|js|mjs|cjs|md|json|jsonl|css|sh|html))(?=$|[\s)`'".,;:#\]])/gm;

/** The text of a source file's comments (line comments, block comments), in order. */
export function commentsOf(text: string): string {
  return [...text.matchAll(/(?<![\w'"`])\/\*[\s\S]*?\*\/|(?<![:\w'"`])\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
}

/** The paths of the repository a piece of prose names (see PATH), and any absolute path into /work. */
export function pathsIn(prose: string): string[] {
  const found = [...prose.matchAll(PATH)].map((m) => m[1]!);
  for (const m of prose.matchAll(/\/work\/[\w.\/-]+/g)) found.push(m[0]);
  return found;
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

/** What is wrong with a path named in prose of `file`: resolved from the repository's root or from the file, `.js` standing for its `.ts`. */
function pathProblem(file: string, path: string, root = ROOT): string | undefined {
  if (isAbsolute(path)) return 'is an absolute path, outside the repository';
  const candidates = [resolve(root, path), resolve(dirname(file), path)].flatMap((c) => [c, c.replace(/\.js$/, '.ts'), c.replace(/\.js$/, '.tsx')]);
  const inside = candidates.filter((c) => !relative(root, c).startsWith('..'));
  if (inside.length === 0) return 'points outside the repository';
  if (!inside.some((c) => existsSync(c))) return 'names a file the repository does not have';
  return undefined;
}

describe('links in the documentation', () => {
  it('the checker finds links and code paths, and refuses what leaves the repository or does not exist', () => {
    const doc = join(ROOT, 'docs/example.md');
    const text = [
      'See [events](events.md), [the readme](../README.md#quick-start), [web](https://example.com), [here](#top).',
      'The rules are in `../shared/design.md` and `spec/universal-schema-spec.md`; recorded in `test/agents/README.md`.',
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
      { kind: 'code', target: 'test/agents/README.md', problem: undefined },
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
  it('finds the paths comments and prose name, and refuses those that leave the repository or do not exist', () => {
    const code = [
      '// The rules of docs/conversion.md (spec/conversion.md before), see src/sessions/normalize.ts.',
      "const url = 'http://127.0.0.1/docs/x.md'; // one per src/agents/<agent>/driver.ts, test/*-e2e*.test.ts",
      '/** From /work/shared/spec/amp-stream-json.md and `shared/spec/amp-stream-json.md`. */',
    ].join('\n');
    const found = pathsIn(commentsOf(code)).map((path) => ({ path, problem: pathProblem(join(ROOT, 'src/x.ts'), path) }));
    expect(found).toEqual([
      { path: 'docs/conversion.md', problem: undefined },
      { path: 'spec/conversion.md', problem: 'names a file the repository does not have' },
      { path: 'src/sessions/normalize.ts', problem: undefined },
      { path: 'shared/spec/amp-stream-json.md', problem: 'names a file the repository does not have' },
      { path: '/work/shared/spec/amp-stream-json.md', problem: 'is an absolute path, outside the repository' },
    ]);
    // `.js` in an import-style path names the .ts source.
    expect(pathProblem(join(ROOT, 'src/x.ts'), 'src/schema/events.js')).toBeUndefined();
  });

  it('every repository path named in a comment of the code, or in the prose of a markdown file, exists', () => {
    const broken: string[] = [];
    let checked = 0;
    const sources = CODE_DIRS.flatMap((d) => codeFiles(join(ROOT, d)));
    expect(sources.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['src/sessions/normalize.ts', 'client/src/client.ts', 'test/agents/golden.test.ts']));
    const texts = [
      ...sources.map((file) => ({ file, prose: commentsOf(readFileSync(file, 'utf8')) })),
      ...markdownFiles().map((file) => ({ file, prose: readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '') })),
    ];
    for (const { file, prose } of texts) {
      for (const path of pathsIn(prose)) {
        checked++;
        const why = pathProblem(file, path);
        if (why) broken.push(`${relative(ROOT, file)}: ${path} ${why}`);
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(broken).toEqual([]);
  });
  it('cites the rules of the house by name: no rule number, and every (rule: …) is a rule of ARCHITECTURE.md', () => {
    const architecture = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    const section = architecture.slice(architecture.indexOf('## The rules'), architecture.indexOf('\n## ', architecture.indexOf('## The rules') + 1));
    const names = [...section.matchAll(/^- \*\*(.+?)\.\*\*/gm)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(['Pure converters', 'One stamp', 'Normalize once', 'Commit before serve', 'Untrusted agent, untrusted web', 'Schema is the type']));
    const texts = [
      ...CODE_DIRS.flatMap((d) => codeFiles(join(ROOT, d))).map((file) => ({ file, prose: commentsOf(readFileSync(file, 'utf8')) })),
      ...markdownFiles().map((file) => ({ file, prose: readFileSync(file, 'utf8') })),
    ];
    const wrong: string[] = [];
    for (const { file, prose } of texts) {
      for (const m of prose.matchAll(/\b(?:design )?rules? #?\d+\b/gi)) wrong.push(`${relative(ROOT, file)}: "${m[0]}" cites a rule by number`);
      for (const m of prose.matchAll(/\(rule: ([^)]+)\)/g)) {
        const cited = m[1]!.replace(/\s*\n\s*(?:\/\/|\*)?\s*/g, ' ');
        if (!names.some((n) => cited.startsWith(n))) wrong.push(`${relative(ROOT, file)}: "(rule: ${cited})" is no rule of ARCHITECTURE.md`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
