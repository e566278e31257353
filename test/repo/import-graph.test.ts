// The daemon's layering (ARCHITECTURE.md, "Layers"): every top-level part of src/ (a folder or a
// file at the root) has a layer, and imports only from its own layer or the ones below. No import
// loop between parts, whatever its kind: a type-only import is knowledge of the other part too.
// Between files, no loop of value imports: one would make the load order decide what a module sees.
// A type-only import back to the file that owns a helper (session-agent.ts naming session.ts's
// SessionCore) is erased at compile time and stays inside one folder, so files may have those.
// The imports are read from the source text (`import … from`, `export … from`, `import '…'`,
// `import('…')`), which is how every module of src/ writes them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

/** Bottom first. A part may import its own layer and the layers before it, never one after it. */
const LAYERS: readonly (readonly string[])[] = [
  ['util/', 'errors.ts', 'config-error.ts', 'version.ts', 'logging.ts', 'log-format.ts'],
  ['schema/'],
  ['config.ts'],
  ['process/', 'store/'],
  ['agents/', 'metrics/'],
  ['sessions/'],
  ['acp-server/', 'http/'],
  ['openapi/'],
  ['app.ts', 'daemon-token.ts', 'startup-failure.ts', 'startup-warnings.ts', 'token-command.ts', 'install-command.ts', 'npm-launcher.ts', 'acp-command.ts', 'acp-bridge.ts', 'acp-bridge-resume.ts'],
  ['main.ts'],
];

interface Import {
  spec: string;
  /** `import type`, `export type`, or every name marked `type`: erased by the compiler. */
  typeOnly: boolean;
}

/** The imports one module's text declares. */
export function importsOf(text: string): Import[] {
  const out: Import[] = [];
  const statement = /^[ \t]*(import|export)\s+(type\s+)?([\w$]+\s*,\s*)?(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)\s+from\s+['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(statement)) {
    const names = m[4]!.startsWith('{') ? m[4]!.slice(1, -1).split(',').map((n) => n.trim()).filter(Boolean) : [];
    const allTyped = !m[3] && names.length > 0 && names.every((n) => n.startsWith('type '));
    out.push({ spec: m[5]!, typeOnly: Boolean(m[2]) || allTyped });
  }
  for (const m of text.matchAll(/^[ \t]*import\s+['"]([^'"]+)['"]/gm)) out.push({ spec: m[1]!, typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The file a relative specifier names (`./x.js` is `x.ts` in the sources), or undefined for a package. */
function target(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const path = resolve(dirname(from), spec);
  for (const candidate of [path.replace(/\.js$/, '.ts'), path, `${path}.ts`, join(path, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return path;
}

/** `agents/` for src/agents/acp/driver.ts, `config.ts` for src/config.ts. */
function partOf(file: string): string {
  const rel = relative(SRC, file).split('/');
  return rel.length > 1 ? `${rel[0]}/` : rel[0]!;
}

function layerOf(part: string): number {
  return LAYERS.findIndex((layer) => layer.includes(part));
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles()) {
    for (const imp of importsOf(readFileSync(file, 'utf8'))) {
      const to = target(file, imp.spec);
      if (to && !relative(SRC, to).startsWith('..')) out.push({ from: file, to, typeOnly: imp.typeOnly });
    }
  }
  return out;
}

/** The strongly connected components with more than one node (Tarjan): each is an import loop. */
export function loops(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

function graphOf(pairs: Iterable<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

const name = (file: string): string => relative(ROOT, file);

describe('the import graph of src/', () => {
  it('reads every kind of import statement, and tells type-only ones', () => {
    const text = [
      "import { a, b } from './a.js';",
      "import type { T } from '../t.js';",
      "import { type U, type V } from './u.js';",
      "import { type W, w } from './w.js';",
      'import {',
      '  x,',
      '  type Y,',
      "} from './x.js';",
      "import z, { type Z } from './z.js';",
      "import * as ns from './ns.js';",
      "export * from './all.js';",
      "export type { E } from './e.js';",
      "import './side-effect.js';",
      "const lazy = await import('./lazy.js');",
      "import { z } from 'zod';",
      "// import { not } from './a-comment.js' is text, not a statement",
    ].join('\n');
    expect(importsOf(text)).toEqual([
      { spec: './a.js', typeOnly: false },
      { spec: '../t.js', typeOnly: true },
      { spec: './u.js', typeOnly: true },
      { spec: './w.js', typeOnly: false },
      { spec: './x.js', typeOnly: false },
      { spec: './z.js', typeOnly: false },
      { spec: './ns.js', typeOnly: false },
      { spec: './all.js', typeOnly: false },
      { spec: './e.js', typeOnly: true },
      { spec: 'zod', typeOnly: false },
      { spec: './side-effect.js', typeOnly: false },
      { spec: './lazy.js', typeOnly: false },
    ]);
    expect(loops(graphOf([['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd'], ['d', 'd2']]))).toEqual([['a', 'b', 'c']]);
  });

  it('places every top-level part of src/ in exactly one layer', () => {
    const parts = new Set(sourceFiles().map(partOf));
    // The walk really found the daemon (a wrong root would find nothing and pass).
    expect([...parts]).toEqual(expect.arrayContaining(['schema/', 'http/', 'agents/', 'sessions/', 'store/', 'config.ts', 'main.ts']));
    const unplaced = [...parts].filter((p) => layerOf(p) < 0);
    expect(unplaced, 'parts of src/ missing from LAYERS here and from "Layers" in ARCHITECTURE.md').toEqual([]);
    const listed = LAYERS.flat();
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('has no upward import: each part imports only from its own layer or below', () => {
    const all = edges();
    expect(all.length).toBeGreaterThan(500);
    const upward = all
      .filter((e) => layerOf(partOf(e.to)) > layerOf(partOf(e.from)))
      .map((e) => `${name(e.from)} (${partOf(e.from)}) imports ${name(e.to)} (${partOf(e.to)}, a higher layer)`);
    expect(upward).toEqual([]);
  });

  it('keeps src/schema/ below the routes, the agents, the sessions, the store and the configuration', () => {
    const above = ['http/', 'agents/', 'sessions/', 'store/', 'config.ts'];
    const wrong = edges()
      .filter((e) => partOf(e.from) === 'schema/' && above.includes(partOf(e.to)))
      .map((e) => `${name(e.from)} imports ${name(e.to)}`);
    expect(wrong).toEqual([]);
  });

  it('has no import loop between top-level parts, type-only imports included', () => {
    const between = edges()
      .filter((e) => partOf(e.from) !== partOf(e.to))
      .map((e): [string, string] => [partOf(e.from), partOf(e.to)]);
    expect(loops(graphOf(between))).toEqual([]);
  });

  it('has no loop of value imports between files', () => {
    const values = edges()
      .filter((e) => !e.typeOnly)
      .map((e): [string, string] => [name(e.from), name(e.to)]);
    expect(loops(graphOf(values))).toEqual([]);
  });
});
