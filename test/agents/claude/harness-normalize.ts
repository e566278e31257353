// Normalisation of a recorded Claude Code stream-json transcript: the values that differ from run to
// run (or from machine to machine) become placeholders, numbered in order of first appearance and
// consistent within one file, so a recording can be compared exactly with a committed one.
// Everything else is kept verbatim, in the CLI's order. Found by recording every scenario repeatedly
// (and with a sandbox under a longer TMPDIR) and diffing.
//
//   ids       session ids (the value of any `session_id`, wherever else the same UUID appears)
//             <session-1>; any other UUID (message `uuid`s, the CLI's control request ids)
//             <uuid-1>; the fake model's message, tool-use and request ids (msg_…, toolu_…, req_…)
//             <msg-1>, <toolu-1>, <req-1>: deterministic for a seed, but what matters is which
//             line refers to which. Substrings too (api_message_id, tool_result ids …).
//   times     ISO timestamps (`timestamp`, `written_at`) <time>; every numeric field named `…_ms`: durations and
//             latencies (duration_ms, duration_api_ms, ttft_ms, ttft_stream_ms, time_to_request_ms,
//             first_content_frame_ms, thinking_duration_ms: 1 or 2 ms) and the retry delay
//             (retry_delay_ms: jittered, 1.0–1.25 s seen) <ms>
//   costs     total_cost_usd, costUSD -> 0 (they follow from the token counts below)
//   tokens    input_tokens / inputTokens <tokens>: the fake model counts a request's input as the
//             size of its body / 4, and the body holds the sandbox paths, the OS version and the
//             date. Output tokens are the fake's own answer and stay.
//   paths     the sandbox's work, home, tmp and root dirs <work>, <home>, <tmp>, <root>, and the
//             work dir as Claude Code's project slug (/a/b -> -a-b) <work-slug>
//   pid       the CLI's pid (initialize's `pid`, the messaging socket /…/<pid>.sock) <pid>
//   port      the fake model's port <port>
// Nothing is dropped or reordered: with one turn at a time and control requests answered the moment
// they arrive, the order of the lines was the same in every run.
import { realpathSync } from 'node:fs';
import type { Sandbox } from '../../support/sandbox.js';

/** One transcript line: a stdout line of the CLI (parsed), or `{$sent: …}` for what we wrote. */
export type TranscriptLine = Record<string, unknown>;

export interface NormalizeContext {
  sandbox: Pick<Sandbox, 'root' | 'home' | 'work'>;
  port: number;
  /** The CLI's pid. */
  pid: number;
}

type Kind = 'session' | 'uuid' | 'msg' | 'toolu' | 'req';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const IS_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids in the Anthropic style the fake model issues: msg_01…, toolu_01…, req_01…. */
const API_ID = /\b(msg|toolu|req)_01[0-9A-Za-z]{20,}/g;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\b/g;
/** Timings: every numeric `…_ms` field of 2.1.337's output is a duration, latency or delay. */
const MS_KEY = /_ms$/;
const COST_KEYS = new Set(['total_cost_usd', 'costUSD']);
const TOKEN_KEYS = new Set(['input_tokens', 'inputTokens']);

/** Claude Code's project directory name for a path (~/.claude/projects/<slug>). */
export const projectSlug = (path: string) => path.replace(/[^a-zA-Z0-9]/g, '-');

export function normalizeClaudeTranscript(lines: TranscriptLine[], ctx: NormalizeContext): TranscriptLine[] {
  const ids = new Map<string, string>();
  const counters = new Map<Kind, number>();
  const idFor = (raw: string, kind: Kind): string => {
    let p = ids.get(raw);
    if (!p) {
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      p = `<${kind}-${n}>`;
      ids.set(raw, p);
    }
    return p;
  };

  const paths: Array<[string, string]> = [];
  const addPath = (path: string, placeholder: string) => {
    const variants = new Set([path]);
    try {
      variants.add(realpathSync(path));
    } catch {
      /* already removed: the plain path is enough */
    }
    for (const v of variants) paths.push([v, placeholder]);
    for (const v of variants) paths.push([projectSlug(v), placeholder === '<work>' ? '<work-slug>' : `${placeholder.slice(0, -1)}-slug>`]);
  };
  const root = ctx.sandbox.root;
  addPath(ctx.sandbox.work, '<work>');
  addPath(ctx.sandbox.home, '<home>');
  addPath(`${root}/tmp`, '<tmp>');
  addPath(root, '<root>'); // last: the others start with it
  const socket = new RegExp(`/${ctx.pid}\\.sock\\b`, 'g');

  // Pass 1: session ids by field, so a session UUID is <session-n> wherever it appears.
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) collect(v);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === 'session_id' && typeof v === 'string' && IS_UUID.test(v)) idFor(v.toLowerCase(), 'session');
      collect(v);
    }
  };

  // Pass 2: rewrite.
  const str = (s: string): string => {
    let out = s;
    for (const [path, p] of paths) if (out.includes(path)) out = out.split(path).join(p);
    out = out.replace(UUID, (u) => idFor(u.toLowerCase(), 'uuid'));
    out = out.replace(API_ID, (id, kind: Kind) => idFor(id, kind));
    out = out.replace(ISO_TIME, '<time>');
    out = out.replace(socket, '/<pid>.sock');
    out = out.split(`127.0.0.1:${ctx.port}`).join('127.0.0.1:<port>').split(`localhost:${ctx.port}`).join('localhost:<port>');
    return out;
  };
  const rewrite = (value: unknown, key: string | undefined): unknown => {
    if (Array.isArray(value)) return value.map((v) => rewrite(v, key));
    if (typeof value === 'string') return str(value);
    if (typeof value === 'number' && key !== undefined) {
      if (MS_KEY.test(key)) return '<ms>';
      if (COST_KEYS.has(key)) return 0;
      if (TOKEN_KEYS.has(key)) return '<tokens>';
      if (key === 'pid' && value === ctx.pid) return '<pid>';
      return value;
    }
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = rewrite(v, k);
    return out;
  };

  for (const l of lines) collect(l);
  return lines.map((l) => rewrite(l, undefined) as TranscriptLine);
}
