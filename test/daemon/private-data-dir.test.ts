// The private data dir (src/store/private-dir.ts, docs/persistence.md): created 0700, an existing
// one of the daemon's made 0700, anyone else's refused, the store's files 0600 whatever made
// them, the process umask untouched. In-process for the rules, then the built daemon as a process
// in the Docker case: a volume made 0755 before the daemon, agents as nobody. Root only (chown).
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { openStore } from '../../src/store/open-store.js';
import { prepareDataDir, privateFile, type PreparedDir } from '../../src/store/private-dir.js';
import { killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';

let scratch: string;
const mode = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'agentwire-private-'));
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('prepareDataDir', () => {
  it('creates the missing levels, the data dir itself 0700', () => {
    const dir = join(scratch, 'new', 'a', 'data');
    const prepared = prepareDataDir(dir);
    expect(prepared).toEqual({ dir, created: [join(scratch, 'new'), join(scratch, 'new', 'a'), dir], narrowed: [] });
    expect(mode(dir)).toBe('0700');
    expect(mode(join(scratch, 'new'))).toBe('0755');
  });

  it("makes an existing dir of the daemon's 0700, and says what it was", () => {
    const dir = join(scratch, 'volume');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    expect(prepareDataDir(dir).narrowed).toEqual([{ path: dir, mode: '0755' }]);
    expect(mode(dir)).toBe('0700');
    expect(prepareDataDir(dir).narrowed).toEqual([]); // nothing to do the second time
  });

  it("refuses one owned by another user, naming the owner and the fix", () => {
    expect(process.getuid?.(), 'chown needs root: run as root (CI does)').toBe(0);
    const dir = join(scratch, 'theirs');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 1000, 1000);
    expect(() => prepareDataDir(dir)).toThrow(new ConfigError(`--data-dir ${dir}: it is owned by uid 1000, not by this daemon's user (0); chown it to uid 0 or choose another --data-dir`));
    expect(mode(dir)).toBe('0700');
  });

  it('refuses /proc and /sys at once instead of spinning', () => {
    const started = performance.now();
    expect(() => prepareDataDir('/proc/x/y')).toThrow(/cannot create \/proc\/x \(ENOENT/);
    expect(() => prepareDataDir('/sys/x')).toThrow(/--data-dir \/sys\/x: cannot create it \((ENOENT|EACCES|EPERM|EROFS)/);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('narrows the named files that are open to others to 0600', () => {
    const dir = join(scratch, 'files');
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'agentwire.db'), '', { mode: 0o644 });
    writeFileSync(join(dir, 'agentwire.db-wal'), '', { mode: 0o640 });
    const prepared: PreparedDir = prepareDataDir(dir, ['agentwire.db', 'agentwire.db-wal', 'agentwire.db-shm']);
    expect(prepared.narrowed).toEqual([
      { path: join(dir, 'agentwire.db'), mode: '0644' },
      { path: join(dir, 'agentwire.db-wal'), mode: '0640' },
    ]);
    expect([mode(join(dir, 'agentwire.db')), mode(join(dir, 'agentwire.db-wal'))]).toEqual(['0600', '0600']);
  });
});

describe('privateFile', () => {
  it('creates a file 0600 whatever the umask, narrows an existing one, and refuses a symlink', () => {
    const dir = join(scratch, 'pf');
    mkdirSync(dir, { mode: 0o700 });
    privateFile(join(dir, 'token'), 'secret\n');
    expect(mode(join(dir, 'token'))).toBe('0600');
    writeFileSync(join(dir, 'wide'), 'x', { mode: 0o644 });
    privateFile(join(dir, 'wide'));
    expect(mode(join(dir, 'wide'))).toBe('0600');
    symlinkSync(join(scratch, 'elsewhere'), join(dir, 'link'));
    expect(() => privateFile(join(dir, 'link'), 'x')).toThrow(/ELOOP/);
    expect(existsSync(join(scratch, 'elsewhere'))).toBe(false);
  });
});

describe('openStore', () => {
  it('keeps the database, its WAL and SHM 0600 under a permissive umask, and leaves the umask alone', () => {
    const dir = join(scratch, 'store');
    const before = process.umask(0o002); // as on a desktop with user-private groups
    try {
      const store = openStore({ persist: 'on', dataDir: dir, fsync: 'normal' });
      store.createSession({ id: 's', agent: 'mock', request: {}, nativeSessionId: null, status: 'idle', snapshot: {} as never, createdAt: 't', updatedAt: 't', endedAt: null, lastSequence: 0 });
      store.flush();
      expect(process.umask()).toBe(0o002);
      const files = ['agentwire.db', 'agentwire.db-wal', 'agentwire.db-shm'].filter((f) => existsSync(join(dir, f)));
      expect(files).toContain('agentwire.db-wal');
      for (const f of files) expect({ f, mode: mode(join(dir, f)) }).toEqual({ f, mode: '0600' });
      expect(mode(dir)).toBe('0700');
      store.close();
    } finally {
      process.umask(before);
    }
  });

  it('with --persist off neither creates nor checks the data dir', () => {
    const dir = join(scratch, 'memory-only');
    openStore({ persist: 'off', dataDir: dir, fsync: 'normal' }).close();
    expect(existsSync(dir)).toBe(false);
  });
});

describe('the daemon on a volume made 0755 beforehand, agents as nobody', () => {
  beforeAll(async () => setUpInstall(), 600_000);
  afterEach(() => killDaemons());
  afterAll(() => removeInstall());

  it('makes it 0700, logs that it did, and keeps the store 0600', async () => {
    expect(process.getuid?.(), 'this test runs agents as nobody: run it as root (CI does)').toBe(0);
    const dir = join(scratch, 'docker-volume');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'agentwire.db'), '', { mode: 0o644 }); // an older daemon's, say
    const tokenFile = join(scratch, 'token');
    writeFileSync(tokenFile, 'private-dir-test-token-0123456789', { mode: 0o600 });
    const { daemon } = await startDaemon(['--data-dir', dir, '--agent-user', 'nobody', '--token-file', tokenFile]);
    expect(mode(dir)).toBe('0700');
    for (const f of ['agentwire.db', 'agentwire.db-wal']) if (existsSync(join(dir, f))) expect({ f, mode: mode(join(dir, f)) }).toEqual({ f, mode: '0600' });
    const messages = daemon.logs.map((l) => l.msg ?? '');
    expect(messages).toContain(`${dir} was 0755, open to other users; made it private (0700)`);
    expect(messages).toContain(`${join(dir, 'agentwire.db')} was 0644, open to other users; made it private (0600)`);
  });
});
