// The store's SQLite binding (src/store/sqlite-binding.ts): the part of better-sqlite3's API the
// store uses behaves the same on the binding this Node loads (node:sqlite through
// src/store/node-sqlite.ts on 22.13+, better-sqlite3 12 on Node 20), on a real file; and an install
// that leaves Node 20 without the addon fails loudly (scripts/check-sqlite.js) with the same fix the
// daemon names at start.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSqliteExperimentalWarning } from '../../../src/store/node-sqlite.js';
import { sqliteCodeName } from '../../../src/store/sqlite-codes.js';
import { addonFix, hasNodeSqlite, openDatabase, SQLITE_BINDING, sqliteDatabase, type Database } from '../../../src/store/sqlite-binding.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
let db: Database;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agentwire-binding-'));
  db = openDatabase(join(dir, 'b.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER)');
});
afterAll(() => {
  if (db?.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the binding on Node ${process.versions.node}: ${SQLITE_BINDING}`, () => {
  it('is node:sqlite from Node 22.13 (23.4 on 23), better-sqlite3 before', () => {
    expect(SQLITE_BINDING).toBe(hasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3');
    expect(['20.19.0', '20.20.2', '22.12.0', '23.3.0'].map((v) => hasNodeSqlite(v))).toEqual([false, false, false, false]);
    expect(['22.13.0', '22.20.1', '23.4.0', '24.0.0', '24.21.0', '26.1.0'].map((v) => hasNodeSqlite(v))).toEqual([true, true, true, true, true, true]);
  });

  it('run() answers changes and lastInsertRowid; an array binds positionally; get/all/pluck read rows', () => {
    const insert = db.prepare('INSERT INTO t (name, n) VALUES (?, ?)');
    expect(insert.run('a', 1)).toEqual({ changes: 1, lastInsertRowid: 1 });
    expect(insert.run(['b', 2])).toEqual({ changes: 1, lastInsertRowid: 2 });
    expect(db.prepare('UPDATE t SET n = n + 1').run().changes).toBe(2);
    expect({ ...(db.prepare('SELECT name, n FROM t WHERE id = ?').get(2) as object) }).toEqual({ name: 'b', n: 3 });
    expect(db.prepare('SELECT name FROM t WHERE id = ?').get(99)).toBeUndefined();
    expect(db.prepare('SELECT name FROM t ORDER BY id').pluck().all()).toEqual(['a', 'b']);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2);
    expect(db.prepare('SELECT name FROM t WHERE id = 99').pluck().get()).toBeUndefined();
    expect(typeof db.prepare('SELECT n FROM t').pluck().get()).toBe('number');
  });

  it('pragma() answers rows, or with simple the first value', () => {
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    db.pragma('user_version = 7');
    expect(db.pragma('user_version', { simple: true })).toBe(7);
    expect((db.pragma('table_info(t)') as { name: string }[]).map((c) => c.name)).toEqual(['id', 'name', 'n']);
  });

  it('transaction() commits, rolls back on a throw, and nests as a savepoint', () => {
    const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
    const count = db.prepare('SELECT count(*) FROM t').pluck();
    const before = count.get() as number;
    expect(db.transaction((a: string, b: string) => (insert.run(a), insert.run(b), 'done'))('c', 'd')).toBe('done');
    expect(count.get()).toBe(before + 2);
    expect(() => db.transaction(() => (insert.run('e'), insert.run('a')))()).toThrow(); // 'a' is taken
    expect(count.get()).toBe(before + 2);
    const outer = db.transaction(() => {
      insert.run('f');
      expect(() => db.transaction(() => (insert.run('g'), insert.run('a')))()).toThrow();
      insert.run('h');
    });
    outer();
    expect(db.prepare("SELECT name FROM t WHERE name IN ('f', 'g', 'h') ORDER BY name").pluck().all()).toEqual(['f', 'h']);
  });

  it("errors carry SQLite's code name, as better-sqlite3's", () => {
    const err = (() => {
      try {
        db.prepare('INSERT INTO t (name) VALUES (?)').run('a');
      } catch (e) {
        return e as { code?: string };
      }
    })();
    expect(err?.code).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect([13, 5, 10 | (3 << 8), 19 | (6 << 8), 8 | (4 << 8), 1].map(sqliteCodeName)).toEqual([
      'SQLITE_FULL', 'SQLITE_BUSY', 'SQLITE_IOERR_WRITE', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_READONLY_DBMOVED', 'SQLITE_ERROR',
    ]);
  });

  it('opens read-only, and closes once', () => {
    const Database = sqliteDatabase();
    const ro = new Database(join(dir, 'b.db'), { readonly: true });
    expect(ro.prepare('SELECT count(*) FROM t').pluck().get()).toBeGreaterThan(0);
    expect(() => ro.exec("INSERT INTO t (name) VALUES ('x')")).toThrow(expect.objectContaining({ code: 'SQLITE_READONLY' }) as Error);
    expect(ro.open).toBe(true);
    ro.close();
    expect(ro.open).toBe(false);
  });

  it("drops exactly node:sqlite's ExperimentalWarning (how Node 22 emits it), no other warning", () => {
    const text = 'SQLite is an experimental feature and might change at any time';
    expect(isSqliteExperimentalWarning(text, 'ExperimentalWarning')).toBe(true);
    expect(isSqliteExperimentalWarning(text, { type: 'ExperimentalWarning' })).toBe(true);
    expect(isSqliteExperimentalWarning(Object.assign(new Error(text), { name: 'ExperimentalWarning' }), undefined)).toBe(true);
    expect(isSqliteExperimentalWarning('WASI is an experimental feature and might change at any time', 'ExperimentalWarning')).toBe(false);
    expect(isSqliteExperimentalWarning(text, 'DeprecationWarning')).toBe(false);
    expect(isSqliteExperimentalWarning('something else', undefined)).toBe(false);
  });
});

describe('an install without the addon Node 20 needs (scripts/check-sqlite.js, the postinstall)', () => {
  const run = promisify(execFile);
  const script = (cwd: string, env: Record<string, string> = {}) =>
    run(process.execPath, [join(cwd, 'scripts/check-sqlite.js')], { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env } }).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );

  it('is what npm runs after installing agentwire, and ships in the package', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; files: string[]; optionalDependencies: Record<string, string> };
    expect(pkg.scripts.postinstall).toBe('node scripts/check-sqlite.js');
    expect(pkg.files).toContain('scripts/check-sqlite.js');
    expect(Object.keys(pkg.optionalDependencies)).toEqual(['better-sqlite3']);
  });

  it('passes silently in this checkout', async () => {
    expect(await script(ROOT)).toEqual({ code: 0, stderr: '' });
  });

  it(hasNodeSqlite() ? 'passes with no addon at all on this Node (node:sqlite)' : 'fails the install, naming the fix the daemon names, when the addon is missing', async () => {
    // The script alone, where no node_modules holds better-sqlite3: what npm leaves when it drops it.
    const bare = join(dir, 'bare');
    mkdirSync(join(bare, 'scripts'), { recursive: true });
    copyFileSync(join(ROOT, 'scripts/check-sqlite.js'), join(bare, 'scripts/check-sqlite.js'));
    const result = await script(bare);
    if (hasNodeSqlite()) return expect(result).toEqual({ code: 0, stderr: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^agentwire: on Node \S+ the SQLite store needs the better-sqlite3 addon, and this install has none that works\n\(Cannot find module 'better-sqlite3'/);
    // The two commands, as addonFix() gives them to the daemon's start-up failure line.
    const commands = [...addonFix().matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    expect(commands).toHaveLength(2);
    for (const command of commands) expect(result.stderr).toContain(`\n  ${command}\n`);
    expect(await script(bare, { AGENTWIRE_SQLITE_CHECK: 'off' })).toEqual({ code: 0, stderr: '' });
  });
});
