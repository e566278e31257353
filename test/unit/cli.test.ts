// The `agentwire` command line as a new user meets it: help, typos, and what --help promises about
// the flags. main() runs in-process (the daemon-shutdown tests run the built bin as a process);
// nothing here reaches `listen`.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flagHelp, loadConfig } from '../../src/config.js';
import { main } from '../../src/main.js';

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs main(argv) and returns what it printed and the exit code it set. */
async function run(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void stdout.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void stderr.push(a.join(' ')));
  await main(argv);
  const code = process.exitCode ?? 0;
  process.exitCode = undefined;
  return { stdout: stdout.join('\n'), stderr: stderr.join('\n'), code };
}

describe('agentwire <command>', () => {
  it('says "unknown command" for a typo, on stderr with the usage, and exits 2', async () => {
    const r = await run('serve');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^agentwire: unknown command "serve" \(did you mean "server"\?\)\n/);
    expect(r.stderr).toContain('Usage: agentwire server [flags]');
  });

  it('says "unknown command" for any other word, even with --help after it', async () => {
    for (const argv of [['start'], ['sever', '--port', '8080'], ['frobnicate', '--help']]) {
      const r = await run(...argv);
      expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code: 2, stdout: '' });
      expect(r.stderr).toMatch(new RegExp(`^agentwire: unknown command "${argv[0]}"`));
    }
  });

  it('points at the missing command when flags come first', async () => {
    const r = await run('--port', '8080');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^agentwire: unknown command "--port" \(the command comes first: agentwire server \[flags\]\)/);
  });

  it('prints the usage on stdout and exits 0 when help is asked for', async () => {
    for (const argv of [[], ['help'], ['--help'], ['-h'], ['server', '--help'], ['server', '-h']]) {
      const r = await run(...argv);
      expect({ argv, code: r.code, stderr: r.stderr }).toEqual({ argv, code: 0, stderr: '' });
      expect(r.stdout).toContain('Usage: agentwire server [flags]');
      expect(r.stdout).toContain('--token <v>');
    }
  });

  it('--help states the token length the parser enforces', async () => {
    const { stdout } = await run('--help');
    const stated = /--token <v>.*at least (\d+) characters/.exec(stdout)?.[1];
    expect(stated, flagHelp()).toBeDefined();
    const n = Number(stated);
    expect(() => loadConfig(['--token', 'x'.repeat(n - 1)], {})).toThrow(new RegExp(`--token .*${n} characters`));
    expect(loadConfig(['--token', 'x'.repeat(n)], {}).token).toBe('x'.repeat(n));
  });
});
