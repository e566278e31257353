// No function in src/agents/ runs over MAX_LINES lines (issue 27: drivers with visible state).
// A long function there has been a closure over mutable state changed from nested callbacks; the
// state belongs in a session object a test can read. Counted with the TypeScript compiler's own
// parse: every function, method, accessor and arrow, from its first line to its last.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 60;
const ROOT = new URL('../../src/agents/', import.meta.url).pathname;

/** Known exceptions (`<file> <name>` → the reason it may be longer); none today. The test also
 *  fails when a listed one is no longer long, so the list only shrinks. */
const EXCEPTIONS: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function nameOf(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  if (node.name) return node.name.getText(sf);
  // An arrow or function expression is named by what it is assigned to.
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(sf);
  return `<${ts.SyntaxKind[node.kind]}>`;
}

/** `<file relative to src/agents> <name>` → its length in lines, for every function over MAX_LINES. */
function longFunctions(): Map<string, number> {
  const found = new Map<string, number>();
  for (const file of sourceFiles(ROOT)) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > MAX_LINES) found.set(`${relative(ROOT, file)} ${nameOf(node, sf)}`, last - first + 1);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

describe(`functions in src/agents/ (at most ${MAX_LINES} lines)`, () => {
  const found = longFunctions();

  it('has none over the limit but the listed exceptions', () => {
    const unlisted = [...found].filter(([name]) => !(name in EXCEPTIONS)).map(([name, lines]) => `${name} (${lines} lines)`);
    expect(unlisted, `split these, or list them with a reason in EXCEPTIONS`).toEqual([]);
  });

  it('lists no exception that is no longer over the limit', () => {
    expect(Object.keys(EXCEPTIONS).filter((name) => !found.has(name))).toEqual([]);
  });
});
