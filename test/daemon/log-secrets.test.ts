// Nothing secret in the daemon's output (docs/security.md, "What the log never holds"): one real
// daemon at --log-level trace, given a secret in every place a user puts one (the token, on the
// command line and in the query under any spelling of its key; a configured agent's arguments; a
// session's env; an MCP server's env), runs a scenario, and then its whole stdout and stderr are
// searched for every secret.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, redacted } from '../../src/config.js';
import { redactUrl } from '../../src/logging.js';
import type { UniversalEvent } from '../../src/schema/events.js';
import { call, events, killDaemons, removeInstall, setUpInstall, startDaemon, type DaemonProcess } from '../support/daemon-process.js';
import { waitFor } from '../support/helpers.js';

const AGENT = new URL('../support/acp-test-agent.mjs', import.meta.url).pathname;
const SECRETS = {
  token: 'tok3nSecretValue0123456789abcdef',
  acpArg: 'sk-acpArgumentSecret0123456789',
  sessionEnv: 'sessionEnvSecret0123456789',
  mcpEnv: 'mcpServerEnvSecret0123456789',
};
let store: string;
let daemon: DaemonProcess;
let port: number;

beforeAll(async () => {
  await setUpInstall();
  store = mkdtempSync(join(tmpdir(), 'aw-log-secrets-'));
  ({ daemon, port } = await startDaemon(
    ['--persist', 'off', '--log-level', 'trace', '--token', SECRETS.token, '--acp-agent', `tester='${process.execPath}' '${AGENT}' --api-key ${SECRETS.acpArg}`],
    { ACP_TEST_STORE: store },
  ));
}, 300_000);
afterAll(() => {
  killDaemons();
  removeInstall();
  rmSync(store, { recursive: true, force: true });
});

/** A GET whose status is all that matters; a stream is cut once its headers arrived. */
async function status(path: string, headers: Record<string, string> = {}): Promise<number> {
  const controller = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: controller.signal });
  controller.abort();
  return res.status;
}

/** The same for a request target sent as it is (fetch drops everything after a `#`). */
function rawStatus(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.on('error', reject).end();
  });
}

describe('the log of a scenario with secrets everywhere', () => {
  it('holds none of them, and still logs every request', async () => {
    await call(port, 'POST', '/v1/sessions/s1', {
      agent: 'tester',
      cwd: store,
      env: { PROVIDER_API_KEY: SECRETS.sessionEnv },
      mcp: { probe: { command: process.execPath, args: ['-e', '0'], env: { MCP_TOKEN: SECRETS.mcpEnv } } },
    });
    await call(port, 'POST', '/v1/sessions/s1/messages', { message: 'hello' });
    await waitFor(async () => (await events(port, 's1')).some((e: UniversalEvent) => e.type === 'turn.ended'), 15_000, 'the turn');
    expect((await events(port, 's1')).filter((e) => e.type === 'agent.unparsed')).toEqual([]);

    // The token in the query, under every spelling the query parser reads as `token`, and some it
    // does not (refused, but logged all the same).
    const sse = '/v1/sessions/s1/events/sse';
    expect(await status(`${sse}?token=${SECRETS.token}`)).toBe(200);
    expect(await status(`${sse}?%74oken=${SECRETS.token}`)).toBe(200);
    expect(await status(`${sse}?offset=0&%74%6F%6B%65%6E=${SECRETS.token}`)).toBe(200);
    expect(await status(`${sse}?TOKEN=${SECRETS.token}`)).toBe(401);
    expect(await status(`/v1/sessions?Tok%65n=${SECRETS.token}`)).toBe(401);
    // After a `#` in a raw request target (a browser never sends one; a client can): the router
    // reads its query from the first `?` or `#`, so the first is a valid token to auth.
    expect(await rawStatus(`${sse}#token=${SECRETS.token}`)).toBe(200);
    await rawStatus(`/v1/sessions?x=1#&token=${SECRETS.token}`);
    await rawStatus(`/v1/sessions?x=1#token=${SECRETS.token}`);
    expect(await status('/v1/sessions', { authorization: `Bearer ${SECRETS.token}` })).toBe(200);
    expect(await status('/v1/sessions', { authorization: `Bearer ${SECRETS.token}x` })).toBe(401);

    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const output = `${daemon.logs.map((l) => JSON.stringify(l)).join('\n')}\n${daemon.stderr}`;
    for (const [where, secret] of Object.entries(SECRETS)) expect(output.includes(secret), `the ${where} secret is in the log`).toBe(false);
    // Not a vacuous search: the requests are there, each with its query, the token's value hidden.
    const urls = daemon.logs.map((l) => (l as { req?: { url?: string } }).req?.url).filter((u): u is string => u !== undefined);
    expect(urls).toEqual(
      expect.arrayContaining([
        `${sse}?token=[redacted]`,
        `${sse}?%74oken=[redacted]`,
        `${sse}?offset=0&%74%6F%6B%65%6E=[redacted]`,
        `${sse}?TOKEN=[redacted]`,
        '/v1/sessions?Tok%65n=[redacted]',
        `${sse}#token=[redacted]`,
        '/v1/sessions?x=1#&token=[redacted]',
        '/v1/sessions?x=1#token=[redacted]',
      ]),
    );
    expect(output).toContain('"command":');
    expect(output).toContain('--token on the command line');
  }, 60_000);
});

describe('redactUrl and the logged config', () => {
  it('hides the value of every query key the parser reads as token, whatever its spelling', () => {
    expect(redactUrl('/a?token=s3cret')).toBe('/a?token=[redacted]');
    expect(redactUrl('/a?x=1&%74oken=s3cret&y=2')).toBe('/a?x=1&%74oken=[redacted]&y=2');
    expect(redactUrl('/a?ToKeN=s3cret#t')).toBe('/a?ToKeN=[redacted]#t');
    expect(redactUrl('/a?to+ken=1&tokens=2&atoken=3')).toBe('/a?to+ken=1&tokens=2&atoken=3');
    expect(redactUrl('/a?%E0%A4%A=s3cret')).toBe('/a?%E0%A4%A=[redacted]'); // undecodable: hidden
    expect(redactUrl('/v1/sessions')).toBe('/v1/sessions');
    // The router's query starts at the first `?` or `#` and runs to the end.
    expect(redactUrl('/a#token=s3cret')).toBe('/a#token=[redacted]');
    expect(redactUrl('/a?x=1#&token=s3cret')).toBe('/a?x=1#&token=[redacted]');
    expect(redactUrl('/a?x=1#token=s3cret&y=2')).toBe('/a?x=1#token=[redacted]&y=2');
  });

  it('shows a configured agent by name and command, never its arguments or env values', () => {
    const config = loadConfig(['--acp-agent', 'x=run-agent --api-key sk-in-args'], {});
    const shown = JSON.stringify(redacted(config));
    expect(shown).not.toContain('sk-in-args');
    expect(shown).toContain('"command":"run-agent"');
    expect(shown).toContain('"args":["[redacted]","[redacted]"]');
  });
});
