import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { flagHelp, loadConfig, OPTIONS, redacted } from '../../src/config.js';

describe('loadConfig', () => {
  it('takes flags over AGENTWIRE_* env over defaults', () => {
    expect(loadConfig([], {})).toMatchObject({ host: '127.0.0.1', port: 2468, maxSessions: 100, permissionPolicy: 'ask' });
    expect(loadConfig([], { AGENTWIRE_PORT: '9000' }).port).toBe(9000);
    expect(loadConfig(['--port', '9001'], { AGENTWIRE_PORT: '9000' }).port).toBe(9001);
    expect(loadConfig(['--port=9002']).port).toBe(9002);
  });

  it('accepts LOG_LEVEL, with AGENTWIRE_LOG_LEVEL winning', () => {
    expect(loadConfig([], { LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(loadConfig([], { LOG_LEVEL: 'debug', AGENTWIRE_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
  });

  it('repeats list flags and splits list env vars on commas', () => {
    expect(loadConfig(['--cors-origin', 'https://a.test', '--cors-origin', 'https://b.test']).corsOrigins).toEqual(['https://a.test', 'https://b.test']);
    expect(loadConfig([], { AGENTWIRE_CORS_ORIGIN: 'https://a.test, https://b.test' }).corsOrigins).toEqual(['https://a.test', 'https://b.test']);
    expect(loadConfig([]).corsOrigins).toEqual([]);
  });

  it('stops with one clear line naming the flag and its variable', () => {
    expect(() => loadConfig(['--port', 'eighty'])).toThrow(ConfigError);
    expect(() => loadConfig(['--port', 'eighty'])).toThrow(/^--port \(AGENTWIRE_PORT\): /);
    expect(() => loadConfig(['--max-sessions', '0'])).toThrow(/--max-sessions/);
    expect(() => loadConfig(['--permission-policy', 'maybe'])).toThrow(/--permission-policy/);
    expect(() => loadConfig(['--bogus', '1'])).toThrow(/unknown flag --bogus/);
    expect(() => loadConfig(['--port'])).toThrow(/needs a value/);
    expect(() => loadConfig(['serve'])).toThrow(/unexpected argument/);
    expect(() => loadConfig(['--token', 'short'])).toThrow(/--token .*16 characters/);
  });

  it('takes a non-loopback host without a token flag (the CLI then makes one: daemon-token.test.ts), or with --no-token and the flag that says so', () => {
    expect(loadConfig(['--host', '0.0.0.0']).token).toBeUndefined();
    expect(loadConfig(['--host', '0.0.0.0', '--token', 'a-long-enough-token']).host).toBe('0.0.0.0');
    expect(loadConfig(['--host', '0.0.0.0', '--no-token', '--token', 'a-long-enough-token']).host).toBe('0.0.0.0'); // a token wins
    expect(loadConfig(['--host', '0.0.0.0', '--no-token', '--allow-unauthenticated-network']).noToken).toBe(true);
    expect(loadConfig(['--host', '0.0.0.0'], { AGENTWIRE_NO_TOKEN: '1', AGENTWIRE_ALLOW_UNAUTHENTICATED_NETWORK: '1' }).noToken).toBe(true);
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', 'agentwire.localhost']) expect(loadConfig(['--host', host, '--no-token']).noToken).toBe(true);
    expect(loadConfig(['--host', '127.0.0.2']).host).toBe('127.0.0.2');
    expect(loadConfig(['--host', '::1']).host).toBe('::1');
  });

  it('refuses --no-token on an address other machines reach, unless --allow-unauthenticated-network says so (issue 39)', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'agentwire.lan']) {
      expect(() => loadConfig(['--host', host, '--no-token'])).toThrow(
        `--no-token with --host ${host}: every machine that reaches that address could drive this daemon (and run commands through its agents) with no token; drop --no-token (the daemon then makes a token), listen on 127.0.0.1, or add --allow-unauthenticated-network if that is what you want`,
      );
    }
    expect(() => loadConfig(['--host', '0.0.0.0'], { AGENTWIRE_NO_TOKEN: '1' })).toThrow(/--allow-unauthenticated-network/);
  });

  it('refuses a --cors-origin that is not exactly an origin', () => {
    for (const bad of ['https://app.test/', 'https://app.test/path', 'app.test', 'https://APP.test', 'https://app.test:443', 'https://user@app.test', 'null', 'https://app.test?x=1']) {
      expect(() => loadConfig(['--cors-origin', bad]), bad).toThrow(/--cors-origin \(AGENTWIRE_CORS_ORIGIN\): .* is not an origin/);
    }
    expect(() => loadConfig([], { AGENTWIRE_CORS_ORIGIN: 'https://ok.test,https://bad.test/' })).toThrow(/bad\.test\/' is not an origin/);
    const ok = ['*', 'https://app.test', 'http://localhost:5173', 'http://[::1]:8080', 'chrome-extension://abcdefghijklmnop', 'tauri://localhost'];
    expect(loadConfig(ok.flatMap((o) => ['--cors-origin', o])).corsOrigins).toEqual(ok);
  });

  it('reads --allowed-host (repeatable) and refuses what is not a host name', () => {
    expect(loadConfig(['--allowed-host', 'agentwire.internal', '--allowed-host', '*.example.com']).allowedHosts).toEqual(['agentwire.internal', '*.example.com']);
    expect(loadConfig([], { AGENTWIRE_ALLOWED_HOST: '*' }).allowedHosts).toEqual(['*']);
    expect(loadConfig(['--allowed-host', '10.0.0.5', '--allowed-host', '[fd00::1]', '--allowed-host', 'fd00::2']).allowedHosts).toHaveLength(3);
    expect(loadConfig([]).allowedHosts).toEqual([]);
    for (const bad of ['http://agentwire.internal', 'agentwire.internal:2468', 'a b', 'a/b', '*example.com', 'a.*.com']) {
      expect(() => loadConfig(['--allowed-host', bad]), bad).toThrow(/--allowed-host \(AGENTWIRE_ALLOWED_HOST\): .* is not a host name/);
    }
  });

  it('redacts the token in the logged config', () => {
    const config = loadConfig(['--token', 'a-long-enough-token']);
    expect(redacted(config).token).toBe('[redacted]');
    expect(JSON.stringify(redacted(config))).not.toContain('a-long-enough-token');
  });

  it('documents every option with its variable and default in --help', () => {
    const help = flagHelp();
    for (const o of Object.values(OPTIONS)) {
      expect(help).toContain(`--${o.flag}`);
      expect(help).toContain(`AGENTWIRE_${o.env}`);
    }
    expect(help).toMatch(/--port <v>\s+listen port .*\(default: 2468\)/);
    // A duration's default reads as a user writes it, and it parses back to the same value.
    expect(help).toMatch(/--retention <v>.*\(default: 7d\)/);
    expect(loadConfig(['--retention', '7d']).retentionMs).toBe(loadConfig([]).retentionMs);
  });
});

describe('docs/configuration.md', () => {
  it('lists every option with its variable', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const o of Object.values(OPTIONS)) {
      expect(doc).toContain(`\`--${o.flag}`);
      expect(doc).toContain(`\`AGENTWIRE_${o.env}\``);
    }
  });
});
