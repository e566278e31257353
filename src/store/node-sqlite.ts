// The store's SQLite through Node's own `node:sqlite` (Node 22.13 and later): no native addon to
// download or compile. The store is written against the part of better-sqlite3's API it uses
// (sqlite-binding.ts: prepare/run/get/all/pluck, transaction, pragma, exec, close); this file gives
// that part over `DatabaseSync`, with better-sqlite3's meanings where the two differ:
// - `run(array)` binds the array's items as positional parameters (node:sqlite would read an
//   array as named ones); `run()` answers `{ changes, lastInsertRowid }` in both.
// - An error carries better-sqlite3's `code` (`SQLITE_FULL`, `SQLITE_BUSY`, `SQLITE_IOERR_WRITE`…)
//   instead of node:sqlite's `ERR_SQLITE_ERROR`: the write batcher reports it and start-up names it.
// - `transaction(fn)` runs BEGIN … COMMIT (ROLLBACK when fn or the COMMIT throws) with prepared
//   statements, and a nested one as a SAVEPOINT, as better-sqlite3 does.
// - The page cache is better-sqlite3's (its build sets 16 MB; SQLite's own default is 2 MB).
// - Integers are read as JS numbers (the store's sequences and cursors are far below 2^53).
// Node 22.x prints an ExperimentalWarning when node:sqlite is first loaded; that one warning
// (and no other) is kept out of the daemon's output.
import { createRequire } from 'node:module';
import { sqliteCodeName } from './sqlite-codes.js';

const require = createRequire(import.meta.url);

/** The part of node:sqlite used here (@types/node 20 does not describe the module). */
interface NativeStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}
interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  exec(sql: string): void;
  close(): void;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NativeDatabase;
}

/** What `run()` answers, as better-sqlite3's. */
export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

const PAGE_CACHE_KIB = 16_000;
const EXPERIMENTAL = 'SQLite is an experimental feature';

let module: NodeSqliteModule | undefined;

/** Loads node:sqlite once, dropping exactly its ExperimentalWarning (Node 22.x prints it then). */
export function loadNodeSqlite(): NodeSqliteModule {
  if (module) return module;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest[0])) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return (module = require('node:sqlite') as NodeSqliteModule);
  } finally {
    process.emitWarning = emit;
  }
}

/** node:sqlite's own warning: `emitWarning(message, 'ExperimentalWarning')` or with `{ type }`. */
export function isSqliteExperimentalWarning(warning: string | Error, typeOrOptions: unknown): boolean {
  const type = typeof typeOrOptions === 'string' ? typeOrOptions : (typeOrOptions as { type?: unknown } | undefined)?.type;
  const name = typeof warning === 'string' ? type : warning.name;
  const message = typeof warning === 'string' ? warning : warning.message;
  return name === 'ExperimentalWarning' && message.startsWith(EXPERIMENTAL);
}

export class NodeSqliteStatement {
  private plucking = false;

  constructor(private readonly native: NativeStatement) {}

  run(...params: unknown[]): RunResult {
    try {
      const r = this.native.run(...positional(params));
      return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
    } catch (err) {
      throw withSqliteCode(err);
    }
  }

  get(...params: unknown[]): unknown {
    let row: Record<string, unknown> | undefined;
    try {
      row = this.native.get(...positional(params));
    } catch (err) {
      throw withSqliteCode(err);
    }
    return this.plucking && row ? firstColumn(row) : row;
  }

  all(...params: unknown[]): unknown[] {
    let rows: Record<string, unknown>[];
    try {
      rows = this.native.all(...positional(params));
    } catch (err) {
      throw withSqliteCode(err);
    }
    return this.plucking ? rows.map(firstColumn) : rows;
  }

  /** Rows become their first column's value (better-sqlite3's `pluck()`). */
  pluck(on = true): this {
    this.plucking = on;
    return this;
  }
}

export class NodeSqliteDatabase {
  private readonly native: NativeDatabase;
  private isOpen = true;
  private depth = 0;
  private configured = false;
  /** BEGIN, COMMIT… prepared at the first transaction: preparing reads the schema, which takes a
   *  lock, and opening must not (another daemon's lock is found by the store's first statement). */
  private controls: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', NativeStatement> | undefined;

  constructor(path: string, options: { readonly?: boolean } = {}) {
    try {
      this.native = new (loadNodeSqlite().DatabaseSync)(path, { readOnly: options.readonly === true });
    } catch (err) {
      throw withSqliteCode(err);
    }
  }

  get open(): boolean {
    return this.isOpen;
  }

  prepare(sql: string): NodeSqliteStatement {
    try {
      this.configure();
      return new NodeSqliteStatement(this.native.prepare(sql));
    } catch (err) {
      throw withSqliteCode(err);
    }
  }

  exec(sql: string): this {
    try {
      this.configure();
      this.native.exec(sql);
    } catch (err) {
      throw withSqliteCode(err);
    }
    return this;
  }

  /** `PRAGMA <source>`: its rows, or with `simple` the first column of the first row. */
  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    const statement = this.prepare(`PRAGMA ${source}`);
    return options.simple ? statement.pluck().get() : statement.all();
  }

  /** `fn` wrapped in a transaction: committed when it returns, rolled back when it throws. */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A): R => {
      const nested = this.depth > 0;
      const c = this.control();
      run(nested ? c.savepoint : c.begin);
      this.depth++;
      try {
        const result = fn(...args);
        run(nested ? c.release : c.commit);
        return result;
      } catch (err) {
        // SQLite may have rolled back already (a full disk at COMMIT): then there is nothing to undo.
        if (nested) ignore(() => (run(c.rollbackTo), run(c.release)));
        else ignore(() => run(c.rollback));
        throw err;
      } finally {
        this.depth--;
      }
    };
  }

  /** better-sqlite3's page cache, set before the first statement: not in the constructor, since
   *  it reads the file, and a file another connection holds must fail at the store's first
   *  statement (SQLITE_BUSY, which it reports as "in use"), not at open. */
  private configure(): void {
    if (this.configured) return;
    this.native.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
    this.configured = true;
  }

  private control() {
    if (this.controls) return this.controls;
    const p = (sql: string) => guard(() => this.native.prepare(sql));
    return (this.controls = { begin: p('BEGIN'), commit: p('COMMIT'), rollback: p('ROLLBACK'), savepoint: p('SAVEPOINT nested'), release: p('RELEASE nested'), rollbackTo: p('ROLLBACK TO nested') });
  }

  close(): this {
    if (this.isOpen) this.native.close();
    this.isOpen = false;
    return this;
  }
}

function run(statement: NativeStatement): void {
  guard(() => statement.run());
}

function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw withSqliteCode(err);
  }
}

function ignore(fn: () => void): void {
  try {
    fn();
  } catch {
    // nothing to undo
  }
}

/** better-sqlite3 binds one array argument's items as the positional parameters. */
function positional(params: unknown[]): unknown[] {
  return params.length === 1 && Array.isArray(params[0]) ? (params[0] as unknown[]) : params;
}

function firstColumn(row: Record<string, unknown>): unknown {
  for (const key in row) return row[key];
  return undefined;
}

/** node:sqlite's error (`ERR_SQLITE_ERROR` with the result code in `errcode`) given SQLite's name for its code. */
function withSqliteCode(err: unknown): unknown {
  const e = err as { code?: unknown; errcode?: unknown };
  if (e && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') e.code = sqliteCodeName(e.errcode);
  return err;
}
