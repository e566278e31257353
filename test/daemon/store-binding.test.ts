// Which SQLite the built daemon's store runs on (src/store/sqlite-binding.ts): on Node 22.13 and
// later Node's own node:sqlite, with no native addon mapped into the process; on Node 20 the
// better-sqlite3 addon. Either way a session's events are kept, and the daemon's stderr carries no
// ExperimentalWarning (Node 22.x prints one when node:sqlite loads; the daemon drops exactly that one).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasNodeSqlite } from '../../src/store/sqlite-binding.js';
import { call, events, killDaemons, removeInstall, setUpInstall, startDaemon } from '../support/daemon-process.js';
import { expectNoUnparsed, waitFor } from '../support/helpers.js';

let dataDir: string;

beforeAll(async () => {
  await setUpInstall();
  dataDir = mkdtempSync(join(tmpdir(), 'agentwire-binding-'));
}, 600_000);
afterEach(() => killDaemons());
afterAll(() => {
  removeInstall();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the store on this Node', () => {
  it(`runs on ${hasNodeSqlite() ? 'node:sqlite, no addon loaded' : 'the better-sqlite3 addon'}, and says nothing on stderr about it`, async () => {
    const { daemon, port } = await startDaemon(['--data-dir', dataDir]);
    await call(port, 'POST', '/v1/sessions/b', { agent: 'mock' });
    await call(port, 'POST', '/v1/sessions/b/messages', { message: 'echo kept' });
    await waitFor(async () => (await events(port, 'b')).some((e) => e.type === 'turn.ended'), 10_000, 'the turn');
    expectNoUnparsed(await events(port, 'b'));
    // What the process has mapped: a native addon is a shared object it loaded.
    const maps = readFileSync(`/proc/${daemon.pid}/maps`, 'utf8');
    expect(maps.includes('better_sqlite3.node'), 'better_sqlite3.node mapped into the daemon').toBe(!hasNodeSqlite());
    expect(daemon.stderr).not.toMatch(/ExperimentalWarning|experimental feature/i);
    // The events were committed to the file through that binding: a second daemon serves them.
    daemon.stop();
    await daemon.exited;
    const second = await startDaemon(['--data-dir', dataDir]);
    expect((await events(second.port, 'b')).some((e) => e.type === 'turn.ended')).toBe(true);
    expect(second.daemon.stderr).not.toMatch(/ExperimentalWarning|experimental feature/i);
  }, 60_000);
});
