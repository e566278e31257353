// A throwaway PostgreSQL server for the mirror's tests: the real server (Debian's `postgresql`,
// which .ci/run installs), initdb'd into a temp dir and started on a free loopback port, its unix
// socket in that dir too, so it never meets the machine's own cluster (the one the Debian package
// may have started on 5432). Torn down by stop(). initdb refuses to run as root, so as root the
// cluster is created and run as the `postgres` user (or `nobody`), owning the temp dir.
// Plain JavaScript (checked by tsc through JSDoc) so that the bench (bench/mirror.js) runs it too.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * @typedef {object} Postgres
 * @property {string} url postgres://…@127.0.0.1:<port>/postgres
 * @property {number} port
 * @property {number} pid the postmaster's; its children are the server's other processes
 * @property {(name: string) => Promise<string>} createDatabase a fresh, empty database on this server; its connection string
 * @property {() => Promise<void>} stop
 */
/** @typedef {{ uid: number, gid: number }} User */

/** The directory holding initdb and postgres: $PG_BIN, Debian's newest, or PATH. */
export function findServerBinaries() {
  /** @type {string[]} */
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  candidates.push(...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/local/bin');
  const dir = candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres')));
  if (!dir) {
    // A failure, never a skip: the mirror's guarantees are only tested against the real server.
    throw new Error(
      'PostgreSQL server binaries (initdb, postgres) not found in $PG_BIN, /usr/lib/postgresql/*/bin or PATH. ' +
        'Install them (Debian: apt-get install -y postgresql; .ci/run does) or point PG_BIN at their directory.',
    );
  }
  return dir;
}

/** Who runs the server: ourselves, or as root an unprivileged user that will own the cluster. */
/** @returns {User | undefined} */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':'));
  const entry = passwd.find(([name]) => name === 'postgres') ?? passwd.find(([name]) => name === 'nobody');
  if (!entry) throw new Error('running as root, and neither a postgres nor a nobody user exists to run the test PostgreSQL server as');
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * @param {string} bin @param {string[]} args @param {User | undefined} user
 * @returns {Promise<void>}
 */
function run(bin, args, user) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} exited ${code}:\n${output}`))));
  });
}

/**
 * Starts a fresh server; resolves once it accepts connections.
 * @returns {Promise<Postgres>}
 */
export async function startPostgres() {
  const bin = findServerBinaries();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  await run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], user);

  // A port taken between freePort() and the server's bind is retried with another one.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server = spawnServer(join(bin, 'postgres'), data, dir, port, user);
    try {
      await server.ready;
    } catch (error) {
      if (attempt < 3) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    return {
      url,
      port,
      pid: server.pid,
      async createDatabase(name) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE "${name}"`);
        } finally {
          await client.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      async stop() {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

/**
 * @param {string} bin @param {string} data @param {string} socketDir @param {number} port @param {User | undefined} user
 * @returns {{ ready: Promise<void>, pid: number, stop(): Promise<void> }}
 */
function spawnServer(bin, data, socketDir, port, user) {
  // fsync and full-page writes off: a throwaway cluster needs no crash safety of its own, and a
  // test's speed should not depend on how slow the shared disk is today.
  const args = ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir}`];
  args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=100');
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) });
  let log = '';
  /** @type {Promise<void>} */
  const exited = new Promise((resolve) => child.on('exit', () => resolve()));
  /** @type {Promise<void>} */
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`PostgreSQL did not start within 30 s:\n${log}`)), 30_000);
    /** @param {Buffer} chunk */
    const onData = (chunk) => {
      log += chunk.toString();
      if (log.includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL exited ${code} before it was ready:\n${log}`));
    });
  });
  ready.catch(() => {});
  return {
    ready,
    pid: /** @type {number} */ (child.pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT'); // fast shutdown: disconnects clients, no waiting for them
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
