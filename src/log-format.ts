// The daemon's log as a person on a terminal reads it (docs/logging.md): each pino JSON line becomes
// one line, `02:41:07 info  <sentence> key=value…`. pino still builds every record, so the JSON
// format (`--log-format json`, or anything but a terminal with `auto`) is the same record for record;
// this only draws them. Ours rather than pino-pretty: that prints a record's fields as an indented
// block under it, several lines per event, and would bring its own dependencies into the bundle.
import { levelEnables, LogMessage } from './logging.js';

export type LogFormat = 'auto' | 'pretty' | 'json';

/** Where the log goes (stdout); `isTTY` when that is a terminal. */
export interface LogOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  on?(event: 'error', listener: (err: Error) => void): unknown;
}

export interface PrettyOptions {
  /** ANSI colours: only on a terminal, never with NO_COLOR set (no-color.org). */
  color: boolean;
  /** An error's stack under its line: at --log-level debug and below. */
  stacks: boolean;
}

/**
 * The stream the logger writes to: undefined keeps pino's own destination (JSON lines on stdout,
 * as always); `pretty`, or `auto` when stdout is a terminal, draws each line for a person there.
 */
export function logDestination(format: LogFormat, level: string, out: LogOutput = process.stdout, env: NodeJS.ProcessEnv = process.env): { write(line: string): void } | undefined {
  if (format === 'json' || (format === 'auto' && !out.isTTY)) return undefined;
  return prettyStream(out, { color: Boolean(out.isTTY) && !env.NO_COLOR, stacks: levelEnables(level, 'debug') });
}

/** A pino destination: each JSON line it is given is written to `out` as one human line. */
export function prettyStream(out: LogOutput, options: PrettyOptions): { write(line: string): void } {
  // A terminal closed, or a pipe whose reader went away (`… | head`), must not take the daemon
  // down: the log is lost from then on, the sessions are not. (pino's own JSON destination keeps
  // writing through its own handling.)
  out.on?.('error', () => {});
  return {
    write: (line) => {
      const text = prettyLine(line, options);
      if (text !== undefined) out.write(text);
    },
  };
}

type LogRecord = Record<string, unknown>;

/** One JSON log line as one human line (with its newline); undefined for a line not worth one. */
export function prettyLine(line: string, options: PrettyOptions): string | undefined {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    record = undefined;
  }
  if (typeof record !== 'object' || record === null) return `${clean(line.trimEnd())}\n`;
  const r = record as LogRecord;
  const msg = typeof r.msg === 'string' ? r.msg : '';
  // Fastify's own, one per address it listens on: the `listening` line after it says more.
  if (msg.startsWith('Server listening at ')) return undefined;
  const level = typeof r.level === 'number' ? r.level : 30;
  const used = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'v']);
  const take: Take = (key) => {
    used.add(key);
    return r[key];
  };
  const sentence = (SENTENCES[msg] ?? plain)(r, take);
  const err = errorOf(take('err'));
  const text = err && !sentence.includes(err.message) ? `${sentence}: ${err.message}` : sentence;
  // A request id tells which request failed; on every other line it is noise.
  if (level < 40) used.add('reqId');
  const extras = Object.entries(r).filter(([key, value]) => !used.has(key) && value !== undefined && value !== null && value !== false);
  const paint = painter(options.color);
  const head = `${paint(DIM, clock(r.time))} ${paint(LEVEL_COLORS[level] ?? '', (LEVEL_NAMES[level] ?? 'log').padEnd(5))}`;
  const tail = extras.length === 0 ? '' : ` ${paint(DIM, clean(extras.map(([key, value]) => `${key}=${shown(value)}`).join(' ')))}`;
  const stack = options.stacks && err?.stack ? `\n${paint(DIM, err.stack.split('\n').map((l) => `    ${clean(l.trim())}`).join('\n'))}` : '';
  return `${head} ${clean(text)}${tail}${stack}\n`;
}

type Take = (key: string) => unknown;
type Sentence = (r: LogRecord, take: Take) => string;

/** Any record: its message, after the session it is about. */
const plain: Sentence = (r, take) => {
  const session = take('sessionId');
  if (session === undefined) return String(r.msg ?? '');
  take('agent'); // every line of a session carries it; 'session started' names it once
  return `session ${String(session)}: ${String(r.msg ?? '')}`;
};

/** Where the token came from, as the start line says it (src/daemon-token.ts, TokenSource). */
const TOKEN_HINTS: Record<string, string> = {
  flag: 'token from --token',
  env: 'token from AGENTWIRE_TOKEN',
  file: 'token from --token-file',
  generated: 'token made for this run (its URL is below)',
  none: 'no token',
};

/** The records that matter to a person, each drawn as a sentence from its fields. */
const SENTENCES: Record<string, Sentence> = {
  [LogMessage.listening]: (_r, take) => {
    const dataDir = take('dataDir');
    const [token, tokenFile] = [take('token'), take('tokenFile')];
    return [
      `agentwire ${String(take('version'))} listening on ${String(take('url'))}`,
      typeof dataDir === 'string' ? `data dir ${dataDir}` : 'in memory only (--persist off)',
      `inspector ${String(take('inspector'))}`,
      typeof tokenFile === 'string' ? `token in ${tokenFile}` : TOKEN_HINTS[String(token)],
    ]
      .filter(Boolean)
      .join(' · ');
  },
  [LogMessage.configuration]: (_r, take) => `configuration ${shown(take('config'), Infinity)}`,
  [LogMessage.request]: (_r, take) => {
    const req = (take('req') ?? {}) as { method?: string; url?: string };
    const res = take('res') as { statusCode?: number } | undefined;
    const aborted = take('aborted') === true ? ' (the client went away)' : '';
    return `${req.method} ${req.url} ${res?.statusCode ?? '-'} ${duration(take('responseTime'))}${aborted} ${String(take('reqId'))}`;
  },
  [LogMessage.sessionStarted]: (_r, take) => {
    const [pid, cwd, pooled, native] = [take('agentPid'), take('cwd'), take('pooled'), take('nativeSessionId')];
    const parts = [pid === undefined ? '' : `, pid ${pid}`, pooled === true ? ', a warm spare' : '', native ? `, native session ${String(native)}` : '', cwd ? ` in ${String(cwd)}` : ''];
    return `session ${String(take('sessionId'))} started: ${String(take('agent'))}${parts.join('')}`;
  },
  [LogMessage.sessionEnded]: (_r, take) => {
    const [code, message] = [take('exitCode'), take('message')];
    const parts = [`, by the ${String(take('terminatedBy'))}`, typeof code === 'number' ? `, exit code ${code}` : '', message ? `: ${String(message)}` : ''];
    return `session ${String(take('sessionId'))} (${String(take('agent'))}) ended: ${String(take('reason'))}${parts.join('')}`;
  },
  [LogMessage.agentExited]: (_r, take) => {
    const [pid, code, signal, requested] = [take('agentPid'), take('exitCode'), take('signal'), take('requested')];
    const how = typeof code === 'number' ? ` with code ${code}` : signal ? ` on ${String(signal)}` : '';
    take('agent');
    return `session ${String(take('sessionId'))}: agent${pid === undefined ? '' : ` pid ${pid}`} exited${how}${requested === true ? ' (asked to stop)' : ''}`;
  },
};

/** pino's serialized Error ({type, message, stack}), or undefined for anything else. */
function errorOf(value: unknown): { message: string; stack?: string } | undefined {
  if (typeof value === 'string') return { message: value };
  if (typeof value !== 'object' || value === null || typeof (value as { message?: unknown }).message !== 'string') return undefined;
  const { message, stack } = value as { message: string; stack?: unknown };
  return { message, ...(typeof stack === 'string' ? { stack } : {}) };
}

/** A field's value, on one line: bare when that reads unambiguously, JSON otherwise, cut at `max`. */
function shown(value: unknown, max = 200): string {
  const text = typeof value === 'string' && /^[^\s"'=]+$/.test(value) ? value : typeof value === 'object' || typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function duration(ms: unknown): string {
  if (typeof ms !== 'number') return '-';
  return ms < 10 ? `${ms.toFixed(1)}ms` : ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** Local wall-clock time, HH:MM:SS: a terminal session is read as it happens. */
function clock(time: unknown): string {
  const d = typeof time === 'number' ? new Date(time) : new Date();
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/**
 * Control characters shown escaped: what an agent prints reaches the log (its stderr, at debug),
 * and the agent is not trusted (rule: Untrusted agent, untrusted web), so it never gets to move
 * the cursor, retitle the window or break a record over two lines.
 */
function clean(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const DIM = '2';
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '1;31' };

function painter(color: boolean): (code: string, text: string) => string {
  return (code, text) => (color && code ? `\x1b[${code}m${text}\x1b[0m` : text);
}
