// The agent/daemon boundary as pure functions: which variables an agent inherits, how the agent
// user is looked up and checked, and the start-up refusals of --token-file. The same boundary with
// real processes is test/daemon/agent-boundary.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config-error.js';
import { loadConfig, OPTIONS, redacted } from '../../../src/config.js';
import { agentEnv, agentProcessOptions, isDaemonVariable } from '../../../src/process/agent-env.js';
import { lookupUser, missingCapabilities, resolveAgentUser } from '../../../src/process/agent-user.js';

const DAEMON_ENV = {
  PATH: '/usr/bin:/bin',
  HOME: '/root',
  HTTPS_PROXY: 'http://proxy.test:3128',
  NO_PROXY: 'localhost',
  ANTHROPIC_BASE_URL: 'https://llm.test',
  OPENAI_API_KEY: 'sk-provider',
  AGENTWIRE_TOKEN: 'daemon-token-0123456789',
  AGENTWIRE_TOKEN_FILE: '/run/secrets/token',
  AGENTWIRE_PORT: '2468',
  LOG_LEVEL: 'debug',
};
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534, home: '/nonexistent' };

describe('agentEnv', () => {
  it("drops the daemon's own variables and keeps what an agent needs", () => {
    const env = agentEnv({ env: DAEMON_ENV });
    expect(Object.keys(env).filter((k) => k.startsWith('AGENTWIRE_') || k === 'LOG_LEVEL')).toEqual([]);
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/root',
      HTTPS_PROXY: 'http://proxy.test:3128',
      NO_PROXY: 'localhost',
      ANTHROPIC_BASE_URL: 'https://llm.test',
      OPENAI_API_KEY: 'sk-provider',
    });
  });

  it('treats every variable config.ts reads as the daemon’s own', () => {
    for (const o of Object.values(OPTIONS)) expect(isDaemonVariable(`AGENTWIRE_${o.env}`), o.env).toBe(true);
    expect(isDaemonVariable('LOG_LEVEL')).toBe(true);
    expect(isDaemonVariable('PATH')).toBe(false);
    expect(isDaemonVariable('agentwire_token')).toBe(false); // names are case-sensitive on Linux
  });

  it("adds the session's env last: it wins, and undefined removes a variable", () => {
    const env = agentEnv({ env: DAEMON_ENV }, { OPENAI_API_KEY: 'sk-session', MARKER: 'x', NO_PROXY: undefined });
    expect(env.OPENAI_API_KEY).toBe('sk-session');
    expect(env.MARKER).toBe('x');
    expect(env).not.toHaveProperty('NO_PROXY');
  });

  it("lets a client hand an AGENTWIRE_* variable over on purpose (the session's env is trusted)", () => {
    expect(agentEnv({ env: DAEMON_ENV }, { AGENTWIRE_TEST_MARKER: 'yes' }).AGENTWIRE_TEST_MARKER).toBe('yes');
  });

  it("with an agent user: that user's HOME, USER and LOGNAME unless the session sets HOME", () => {
    expect(agentEnv({ env: DAEMON_ENV, user: NOBODY })).toMatchObject({ HOME: '/nonexistent', USER: 'nobody', LOGNAME: 'nobody' });
    expect(agentEnv({ env: DAEMON_ENV, user: NOBODY }, { HOME: '/work/home' }).HOME).toBe('/work/home');
  });

  it('spawn options never extend the environment and switch uid/gid only with a user', () => {
    expect(agentProcessOptions({ env: DAEMON_ENV })).toEqual({ env: agentEnv({ env: DAEMON_ENV }), extendEnv: false });
    expect(agentProcessOptions({ env: DAEMON_ENV, user: NOBODY })).toMatchObject({ extendEnv: false, uid: 65534, gid: 65534 });
  });
});

describe('the agent user', () => {
  const passwd = ['root:x:0:0:root:/root:/bin/bash', 'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin', 'agent:x:10001:10001::/home/agent:/bin/sh', ''].join('\n');
  const root = { passwd, uid: 0, procStatus: 'Name:\tnode\nCapEff:\t000001ffffffffff\n' };

  it('is found by name or uid in /etc/passwd', () => {
    expect(lookupUser('agent', passwd)).toEqual({ name: 'agent', uid: 10001, gid: 10001, home: '/home/agent' });
    expect(lookupUser('10001', passwd)?.name).toBe('agent');
    expect(lookupUser('ghost', passwd)).toBeUndefined();
    expect(lookupUser('4242', passwd)).toBeUndefined();
  });

  it('needs CAP_SETUID, CAP_SETGID, CAP_KILL and CAP_CHOWN in the effective set', () => {
    expect(missingCapabilities('CapEff:\t000001ffffffffff')).toEqual([]);
    expect(missingCapabilities('CapEff:\t00000000000000e1')).toEqual([]); // exactly bits 0, 5, 6, 7
    expect(missingCapabilities('CapEff:\t00000000000000c0')).toEqual(['CAP_CHOWN', 'CAP_KILL']);
    expect(missingCapabilities('CapEff:\t0000000000000000')).toEqual(['CAP_CHOWN', 'CAP_KILL', 'CAP_SETGID', 'CAP_SETUID']);
    expect(missingCapabilities('')).toHaveLength(4);
  });

  it('refuses, with a message that says what to do, an unknown user, root, itself, or no capability', () => {
    expect(resolveAgentUser('agent', root)).toMatchObject({ uid: 10001 });
    expect(() => resolveAgentUser('ghost', root)).toThrow(ConfigError);
    expect(() => resolveAgentUser('ghost', root)).toThrow(/--agent-user ghost: no such user/);
    expect(() => resolveAgentUser('root', root)).toThrow(/that is root/);
    expect(() => resolveAgentUser('agent', { ...root, uid: 10001 })).toThrow(/the daemon's own user/);
    expect(() => resolveAgentUser('agent', { ...root, uid: 1000, procStatus: 'CapEff:\t0000000000000000\n' })).toThrow(
      /cannot switch users; run it as root or give it CAP_SETUID, CAP_SETGID, CAP_KILL and CAP_CHOWN \(it runs as uid 1000, without CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID\)/,
    );
  });
});

describe('--token-file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentwire-token-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };

  it('reads the token, trimmed, from the file or AGENTWIRE_TOKEN_FILE, and redacts it', () => {
    const path = file('ok', '  a-token-from-a-file-0123\n');
    const config = loadConfig(['--token-file', path], {});
    expect(config.token).toBe('a-token-from-a-file-0123');
    expect(loadConfig([], { AGENTWIRE_TOKEN_FILE: path }).token).toBe('a-token-from-a-file-0123');
    expect(JSON.stringify(redacted(config))).not.toContain('a-token-from-a-file-0123');
    // A non-loopback host is satisfied by a token from a file.
    expect(loadConfig(['--host', '0.0.0.0', '--token-file', path], {}).host).toBe('0.0.0.0');
  });

  it('refuses --token with it, a short or empty token, and a file it cannot read', () => {
    const path = file('ok2', 'a-token-from-a-file-0123');
    expect(() => loadConfig(['--token-file', path, '--token', 'another-long-token-0123'], {})).toThrow(/--token and --token-file .* both set/);
    expect(() => loadConfig(['--token-file', path], { AGENTWIRE_TOKEN: 'another-long-token-0123' })).toThrow(/both set/);
    expect(() => loadConfig(['--token-file', file('short', 'short\n')], {})).toThrow(/the token in it is refused: use at least 16 characters/);
    expect(() => loadConfig(['--token-file', file('empty', '\n')], {})).toThrow(/refused: use at least 16/);
    expect(() => loadConfig(['--token-file', join(dir, 'missing')], {})).toThrow(/cannot read it \(ENOENT\)/);
  });

  it('--agent-user takes a token, --no-token on purpose, or neither (the CLI then makes one: daemon-token.test.ts)', () => {
    expect(loadConfig(['--agent-user', 'nobody'], {}).token).toBeUndefined();
    expect(loadConfig(['--agent-user', 'nobody', '--no-token'], {}).agentUser).toBe('nobody');
    expect(loadConfig(['--agent-user', 'nobody', '--token-file', file('ok3', 'a-token-from-a-file-0123')], {}).agentUser).toBe('nobody');
  });
});
