// The terminal log format (src/log-format.ts): records written by a real pino logger, as the
// daemon writes them, drawn as one line each; which format a daemon picks; colours only on a
// terminal and never with NO_COLOR.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { logDestination, prettyLine, prettyStream, type PrettyOptions } from '../../src/log-format.js';
import { LogMessage } from '../../src/logging.js';

const ESC = '\x1b[';

/** A pino logger at `level` whose lines come out drawn; returns it and the lines without their time. */
function pretty(options: Partial<PrettyOptions> = {}, level = 'debug') {
  const out: string[] = [];
  const stream = prettyStream({ write: (text: string) => out.push(text) }, { color: false, stacks: false, ...options });
  const log = pino({ level }, stream);
  return {
    log,
    out,
    lines: () => out.map((text) => text.replace(/^\d\d:\d\d:\d\d /, '')),
  };
}

describe('the pretty format, a line per event', () => {
  it('draws the start line with the address, data dir, inspector and token', () => {
    const { log, out, lines } = pretty();
    log.info({ version: '0.1.0', url: 'http://127.0.0.1:2468', inspector: 'http://127.0.0.1:2468/ui/', dataDir: '/root/.local/share/agentwire', token: 'generated', tokenFile: '/root/.local/share/agentwire/token' }, LogMessage.listening);
    log.info({ version: '0.1.0', url: 'http://127.0.0.1:9', inspector: 'http://127.0.0.1:9/ui/', dataDir: null, token: 'none' }, LogMessage.listening);
    log.info({ version: '0.1.0', url: 'http://127.0.0.1:9', inspector: 'http://127.0.0.1:9/ui/', dataDir: '/d', token: 'file' }, LogMessage.listening);
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d info  /);
    expect(lines()).toEqual([
      'info  agentwire 0.1.0 listening on http://127.0.0.1:2468 · data dir /root/.local/share/agentwire · inspector http://127.0.0.1:2468/ui/ · token in /root/.local/share/agentwire/token\n',
      'info  agentwire 0.1.0 listening on http://127.0.0.1:9 · in memory only (--persist off) · inspector http://127.0.0.1:9/ui/ · no token\n',
      'info  agentwire 0.1.0 listening on http://127.0.0.1:9 · data dir /d · inspector http://127.0.0.1:9/ui/ · token from --token-file\n',
    ]);
  });

  it("leaves out Fastify's own listening lines, which the start line replaces", () => {
    const { log, out } = pretty();
    log.info('Server listening at http://127.0.0.1:2468');
    log.info('Server listening at http://[::1]:2468');
    expect(out).toEqual([]);
  });

  it('draws a session started, its agent exiting and the session ended, with the fields of a session logger', () => {
    const { log, lines } = pretty();
    const session = log.child({ sessionId: 's1', agent: 'mock' });
    session.info({ cwd: '/work', agentPid: 4242, nativeSessionId: undefined, pooled: false }, LogMessage.sessionStarted);
    session.info({ agentPid: 4242, exitCode: null, signal: 'SIGTERM', requested: true }, LogMessage.agentExited);
    session.info({ reason: 'terminated', terminatedBy: 'daemon', exitCode: undefined, message: undefined }, LogMessage.sessionEnded);
    session.info({ cwd: '/w', agentPid: 7, pooled: true, nativeSessionId: 'n-1' }, LogMessage.sessionStarted);
    session.warn({ agentPid: 7, exitCode: 3, signal: null, requested: false }, LogMessage.agentExited);
    session.warn({ reason: 'error', terminatedBy: 'agent', exitCode: 3, message: 'The agent exited with code 3' }, LogMessage.sessionEnded);
    expect(lines()).toEqual([
      'info  session s1 started: mock, pid 4242 in /work\n',
      'info  session s1: agent pid 4242 exited on SIGTERM (asked to stop)\n',
      'info  session s1 (mock) ended: terminated, by the daemon\n',
      'info  session s1 started: mock, pid 7, a warm spare, native session n-1 in /w\n',
      'warn  session s1: agent pid 7 exited with code 3\n',
      'warn  session s1 (mock) ended: error, by the agent, exit code 3: The agent exited with code 3\n',
    ]);
  });

  it("never shows the daemon's own pid as an agent's", () => {
    const { log, lines } = pretty();
    log.child({ sessionId: 's2', agent: 'amp' }).info({ exitCode: 0, signal: null, requested: false }, LogMessage.agentExited);
    expect(lines()).toEqual(['info  session s2: agent exited with code 0\n']);
  });

  it('draws warnings and errors with their message, and the stack only at debug', () => {
    const quiet = pretty();
    quiet.log.warn({ agent: 'codex', failures: 2, retryInMs: 4000, why: 'exited 1' }, 'warm spare failed; starting another later');
    quiet.log.child({ reqId: 'req-9' }).error({ err: new Error('boom') }, 'request failed');
    quiet.log.warn({ agent: 'claude', version: '2.1.0', err: 'npm failed' }, 'agent install failed');
    expect(quiet.lines()).toEqual([
      'warn  warm spare failed; starting another later agent=codex failures=2 retryInMs=4000 why="exited 1"\n',
      'error request failed: boom reqId=req-9\n',
      'warn  agent install failed: npm failed agent=claude version=2.1.0\n',
    ]);
    const debug = pretty({ stacks: true });
    debug.log.error({ err: new Error('boom') }, 'request failed');
    const [line] = debug.lines();
    expect(line).toMatch(/^error request failed: boom\n {4}Error: boom\n {4}at /);
    expect(line!.trimEnd().split('\n').slice(1).every((l) => l.startsWith('    '))).toBe(true);
  });

  it('draws a request, at debug, as method, redacted URL, status, time and request id', () => {
    const { log, lines } = pretty();
    const req = log.child({ reqId: 'req-1' });
    req.debug({ req: { id: 'req-1', method: 'GET', url: '/v1/sessions/s1/events/sse?token=[redacted]', remoteAddress: '127.0.0.1' }, res: { statusCode: 200 }, responseTime: 12034.5, aborted: true }, LogMessage.request);
    req.debug({ req: { id: 'req-2', method: 'POST', url: '/v1/sessions/s1' }, res: { statusCode: 502 }, responseTime: 357.8 }, LogMessage.request);
    req.debug({ req: { id: 'req-3', method: 'GET', url: '/v1/health' }, res: { statusCode: 200 }, responseTime: 1.25 }, LogMessage.request);
    req.debug({ req: { id: 'req-4', method: 'GET', url: '/v1/sessions' }, responseTime: 3, aborted: true }, LogMessage.request);
    expect(lines()).toEqual([
      'debug GET /v1/sessions/s1/events/sse?token=[redacted] 200 12.0s (the client went away) req-1\n',
      'debug POST /v1/sessions/s1 502 358ms req-1\n',
      'debug GET /v1/health 200 1.3ms req-1\n',
      'debug GET /v1/sessions - 3.0ms (the client went away) req-1\n',
    ]);
  });

  it('keeps the configuration on one line, at debug', () => {
    const { log, lines } = pretty();
    log.debug({ config: { host: '127.0.0.1', token: '[redacted]', corsOrigins: [] }, version: '0.1.0', token: 'flag' }, LogMessage.configuration);
    expect(lines()).toEqual(['debug configuration {"host":"127.0.0.1","token":"[redacted]","corsOrigins":[]} version=0.1.0 token=flag\n']);
  });

  it('shows only the fields that add something, each on the same line', () => {
    const { log, lines } = pretty();
    log.child({ reqId: 'req-5' }).info({ agent: 'codex', reinstall: false, reused: null, created: ['/d', '/d/agentwire.db'], long: 'x'.repeat(500) }, 'agent install requested');
    const [line] = lines();
    expect(line).toBe(`info  agent install requested agent=codex created=["/d","/d/agentwire.db"] long=${'x'.repeat(200)}…\n`);
  });

  it('escapes control characters, so agent output cannot drive the terminal or split a line', () => {
    const { log, lines } = pretty();
    log.child({ sessionId: 's1', agent: 'mock' }).debug({ stderr: 'red\x1b[31m\nline\u009b2J' }, 'agent stderr');
    log.info('two\nlines\x07');
    expect(lines()).toEqual(['debug session s1: agent stderr stderr="red\\u001b[31m\\nline\\u009b2J"\n', 'info  two\\u000alines\\u0007\n']);
  });

  it('passes a line that is not JSON through as it is', () => {
    expect(prettyLine('not json\n', { color: false, stacks: false })).toBe('not json\n');
  });

  it('colours the time and the level only when asked to', () => {
    const plain = pretty();
    plain.log.warn('careful');
    expect(plain.out.join('')).not.toContain(ESC);
    const colored = pretty({ color: true });
    colored.log.warn({ n: 1 }, 'careful');
    expect(colored.out[0]).toMatch(/^\x1b\[2m\d\d:\d\d:\d\d\x1b\[0m \x1b\[33mwarn \x1b\[0m careful \x1b\[2mn=1\x1b\[0m\n$/);
  });
});

describe('the format a daemon picks (--log-format)', () => {
  const terminal = (out: string[]) => ({ isTTY: true, write: (text: string) => out.push(text) });
  const pipe = (out: string[]) => ({ write: (text: string) => out.push(text) });
  const record = `${JSON.stringify({ level: 30, time: Date.now(), pid: 1, hostname: 'h', msg: 'hello' })}\n`;

  it('auto: pretty on a terminal, with colours unless NO_COLOR is set', () => {
    const out: string[] = [];
    logDestination('auto', 'info', terminal(out), {})!.write(record);
    logDestination('auto', 'info', terminal(out), { NO_COLOR: '1' })!.write(record);
    logDestination('auto', 'info', terminal(out), { NO_COLOR: '' })!.write(record); // empty: not set (no-color.org)
    expect(out.map((line) => line.includes(ESC))).toEqual([true, false, true]);
    expect(out[1]).toMatch(/^\d\d:\d\d:\d\d info  hello\n$/);
  });

  it("auto elsewhere, and json anywhere: pino's own destination, JSON lines as before", () => {
    expect(logDestination('auto', 'info', pipe([]), {})).toBeUndefined();
    expect(logDestination('json', 'info', terminal([]), {})).toBeUndefined();
  });

  it('pretty: readable lines even into a pipe, never coloured there', () => {
    const out: string[] = [];
    logDestination('pretty', 'info', pipe(out), {})!.write(record);
    expect(out).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d info  hello\n$/)]);
  });

  it('shows stacks when the level is debug or below', () => {
    const err = `${JSON.stringify({ level: 50, time: Date.now(), msg: 'failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' } })}\n`;
    for (const [level, stacked] of [['info', false], ['debug', true], ['trace', true]] as const) {
      const out: string[] = [];
      logDestination('pretty', level, pipe(out), {})!.write(err);
      expect({ level, stacked: out[0]!.includes('\n    at f (x.js:1:1)') }).toEqual({ level, stacked });
    }
  });
});
