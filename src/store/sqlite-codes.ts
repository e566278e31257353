// SQLite's result codes by name, as better-sqlite3 names its errors (`SQLITE_FULL`,
// `SQLITE_IOERR_WRITE`…): node:sqlite gives only the number (node-sqlite.ts). The names are what
// the write batcher reports for a failing store and what start-up checks for (src/startup-failure.ts).

// sqlite3.h: a primary code in the low byte, an extended one adding n << 8.
const PRIMARY = [
  'OK', 'ERROR', 'INTERNAL', 'PERM', 'ABORT', 'BUSY', 'LOCKED', 'NOMEM', 'READONLY', 'INTERRUPT', 'IOERR', 'CORRUPT', 'NOTFOUND', 'FULL', 'CANTOPEN',
  'PROTOCOL', 'EMPTY', 'SCHEMA', 'TOOBIG', 'CONSTRAINT', 'MISMATCH', 'MISUSE', 'NOLFS', 'AUTH', 'FORMAT', 'RANGE', 'NOTADB', 'NOTICE', 'WARNING',
];
const EXTENDED: Record<string, string[]> = {
  ERROR: ['', 'MISSING_COLLSEQ', 'RETRY', 'SNAPSHOT'],
  IOERR: [
    '', 'READ', 'SHORT_READ', 'WRITE', 'FSYNC', 'DIR_FSYNC', 'TRUNCATE', 'FSTAT', 'UNLOCK', 'RDLOCK', 'DELETE', 'BLOCKED', 'NOMEM', 'ACCESS', 'CHECKRESERVEDLOCK', 'LOCK', 'CLOSE',
    'DIR_CLOSE', 'SHMOPEN', 'SHMSIZE', 'SHMLOCK', 'SHMMAP', 'SEEK', 'DELETE_NOENT', 'MMAP', 'GETTEMPPATH', 'CONVPATH', 'VNODE', 'AUTH', 'BEGIN_ATOMIC', 'COMMIT_ATOMIC',
    'ROLLBACK_ATOMIC', 'DATA', 'CORRUPTFS', 'IN_PAGE',
  ],
  LOCKED: ['', 'SHAREDCACHE', 'VTAB'],
  BUSY: ['', 'RECOVERY', 'SNAPSHOT', 'TIMEOUT'],
  CANTOPEN: ['', 'NOTEMPDIR', 'ISDIR', 'FULLPATH', 'CONVPATH', 'DIRTYWAL', 'SYMLINK'],
  CORRUPT: ['', 'VTAB', 'SEQUENCE', 'INDEX'],
  READONLY: ['', 'RECOVERY', 'CANTLOCK', 'ROLLBACK', 'DBMOVED', 'CANTINIT', 'DIRECTORY'],
  ABORT: ['', '', 'ROLLBACK'],
  CONSTRAINT: ['', 'CHECK', 'COMMITHOOK', 'FOREIGNKEY', 'FUNCTION', 'NOTNULL', 'PRIMARYKEY', 'TRIGGER', 'UNIQUE', 'VTAB', 'ROWID', 'PINNED', 'DATATYPE'],
  NOTICE: ['', 'RECOVER_WAL', 'RECOVER_ROLLBACK', 'RBU'],
  WARNING: ['', 'AUTOINDEX'],
  AUTH: ['', 'USER'],
};

/** `SQLITE_FULL`, `SQLITE_IOERR_WRITE`…: the names better-sqlite3 gives its errors. */
export function sqliteCodeName(code: number): string {
  const primary = PRIMARY[code & 0xff] ?? 'UNKNOWN';
  const extended = EXTENDED[primary]?.[code >> 8];
  return `SQLITE_${primary}${extended ? `_${extended}` : ''}`;
}
