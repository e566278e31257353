// Normalisation of a recorded OpenCode transcript (the SSE events of GET /event and our HTTP calls):
// the values that differ from run to run (or machine to machine) become placeholders, numbered in
// order of first appearance and consistent within one file, and the events whose position races
// are put in one canonical place, so a recording can be compared exactly with a committed one.
// Everything else is kept verbatim. Found by recording every scenario ~80 times, alone, two at a
// time and with both cores busy, and diffing.
//
//   ids       ses_/msg_/prt_/per_/evt_/call_/que_ ids, wherever they appear (also inside paths):
//             <ses-1>, <msg-1>, <prt-1>, <per-1>, <evt-1>, <call-1> … The fake model's call ids are
//             deterministic for a seed, but the title request races for the id sequence.
//   slug      the session's random two-word slug: <slug>
//   times     epoch-ms numbers under time/created/updated/completed/start/end/next …: <time>; ISO
//             timestamps inside strings (the placeholder title "New session - <iso>"): <time>
//   paths     the sandbox's work, home, tmp and root dirs: <work>, <home>, <tmp>, <root>; OpenCode
//             also writes them relative to `/` (session `path`, permission `patterns`, a written
//             file's title, since the sandbox is no git project): <rel:work> …
//   ports     host:port of 127.0.0.1/localhost: <port>
//   tokens    input and total tokens (when > 0): <tokens>. The fake counts a request's input as its
//             size, and the body holds sandbox paths and the date. Output and reasoning tokens are
//             the fake's own answer and stay; so does cost (0: the fake model has no price).
//   dropped   server.heartbeat (every 10 s on an idle stream: present or not by timing). The
//             instance's bootstrap events, plugin.added (one per built-in plugin, 45 of them),
//             catalog.updated, reference.updated and integration.updated: published without a
//             session id by a background fiber loading plugins and the model catalog during the
//             first prompt; they interleave anywhere with the session's events, and a short turn
//             is over before all are out (25, 38, 47 or all 49 seen).
//   moved     see canonicalBackground() (title and per-step summaries race the turn) and
//             canonicalSnapshots() (a payload shows its object's later state).
import { realpathSync } from 'node:fs';
import type { Sandbox } from '../../support/sandbox.js';

/** One transcript entry: an SSE event's data, or one of our calls / its response. */
export type TranscriptEntry =
  | { $sent: { method: string; path: string; body?: unknown } }
  | { $response: { status: number; body: unknown } }
  | OpencodeEventEntry;
export type OpencodeEventEntry = { type: string; properties: Record<string, any>; [key: string]: unknown };

export interface NormalizeContext {
  sandbox: Pick<Sandbox, 'root' | 'home' | 'work'>;
  /** Ports to hide besides any host:port of 127.0.0.1 (none needed today). */
  ports?: number[];
}

export const DROPPED_EVENTS = new Set(['server.heartbeat']);
export const BOOTSTRAP_EVENTS = new Set(['plugin.added', 'catalog.updated', 'reference.updated', 'integration.updated']);

const ID = /\b(ses|msg|prt|per|evt|call|que)_[0-9A-Za-z]{10,}\b/g;
const ISO = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;
const TIME_KEYS = new Set(['time', 'created', 'updated', 'completed', 'start', 'end', 'next', 'compacting', 'archived', 'initialized']);
const TOKEN_KEYS = new Set(['input', 'total']);

export function normalizeOpencodeTranscript(entries: TranscriptEntry[], ctx: NormalizeContext): string[] {
  const kept = entries.filter((e) => !(isEvent(e) && (DROPPED_EVENTS.has(e.type) || BOOTSTRAP_EVENTS.has(e.type))));
  const canonical = canonicalBackground(canonicalSnapshots(kept));

  const ids = new Map<string, string>();
  const counters = new Map<string, number>();
  const id = (raw: string, kind: string) => {
    let out = ids.get(raw);
    if (!out) {
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      out = `<${kind}-${n}>`;
      ids.set(raw, out);
    }
    return out;
  };
  const paths = pathReplacements(ctx.sandbox);
  const ports = ctx.ports ?? [];
  const str = (s: string): string => {
    let out = s;
    for (const [from, to] of paths) out = out.split(from).join(to);
    out = out.replace(/(127\.0\.0\.1|localhost):\d+/g, '$1:<port>');
    for (const port of ports) out = out.split(`:${port}`).join(':<port>');
    out = out.replace(ISO, '<time>');
    return out.replace(ID, (m, kind: string) => id(m, kind));
  };
  const walk = (value: unknown, key: string | undefined, parentKey: string | undefined): unknown => {
    if (typeof value === 'string') return key === 'slug' ? '<slug>' : str(value);
    if (typeof value === 'number') {
      if (key && TIME_KEYS.has(key) && value > 1e12) return '<time>';
      if (key && parentKey === 'tokens' && TOKEN_KEYS.has(key) && value > 0) return '<tokens>';
      return value;
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, undefined, key));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, k, key);
      return out;
    }
    return value;
  };
  return canonical.map((entry) => JSON.stringify(walk(entry, undefined, undefined)));
}

const isEvent = (entry: TranscriptEntry): entry is OpencodeEventEntry => 'type' in entry && typeof entry.type === 'string';
const infoOf = (entry: TranscriptEntry): Record<string, any> => (isEvent(entry) ? (entry.properties.info ?? {}) : {});
const withInfo = (event: OpencodeEventEntry, info: Record<string, any>): OpencodeEventEntry => ({ ...event, properties: { ...event.properties, info } });
const isPrompt = (entry: TranscriptEntry) => {
  const sent = (entry as { $sent?: { path?: unknown } }).$sent;
  return typeof sent?.path === 'string' && /\/session\/[^/]+\/(prompt_async|message)$/.test(sent.path);
};
const is = (entry: TranscriptEntry, type: string): entry is OpencodeEventEntry => isEvent(entry) && entry.type === type;
const isUserSummary = (e: TranscriptEntry) => is(e, 'message.updated') && infoOf(e).role === 'user' && infoOf(e).summary !== undefined;

/**
 * Snapshots. OpenCode publishes the live object (an assistant message, a text part) and the stream
 * serialises it when it writes the event, not when it was published; when the writer lags (a
 * loaded machine), the payload shows the object's later state. Seen: an assistant message's first
 * message.updated (its creation) already completed, with tokens, finish and time.completed. Its
 * canonical form is the message as created: tokens and cost 0, no finish, error or time.completed.
 * The same holds for a text or reasoning part's first message.part.updated, which is published
 * empty and then grows by deltas: canonically text "" and no time.end.
 */
function canonicalSnapshots(entries: TranscriptEntry[]): TranscriptEntry[] {
  const seen = new Set<string>();
  return entries.map((entry) => {
    if (is(entry, 'message.updated') && infoOf(entry).role === 'assistant') {
      const info = infoOf(entry);
      if (seen.has(`msg:${info.id}`)) return entry;
      seen.add(`msg:${info.id}`);
      if (info.finish === undefined && info.time?.completed === undefined && info.error === undefined) return entry;
      const { finish: _finish, error: _error, ...rest } = info;
      const { completed: _completed, ...time } = info.time ?? {};
      return withInfo(entry, { ...rest, cost: 0, tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }, time });
    }
    if (is(entry, 'message.part.updated')) {
      const part = entry.properties.part ?? {};
      if ((part.type !== 'text' && part.type !== 'reasoning') || seen.has(`prt:${part.id}`)) return entry;
      seen.add(`prt:${part.id}`);
      const grows = entries.some((e) => is(e, 'message.part.delta') && e.properties.partID === part.id);
      if (!grows || (part.text === '' && part.time?.end === undefined)) return entry;
      const { end: _end, ...time } = part.time ?? {};
      return { ...entry, properties: { ...entry.properties, part: { ...part, text: '', time } } };
    }
    return entry;
  });
}

/**
 * Background events. Per prompt, OpenCode runs session summaries in forked fibers: one when the
 * prompt's first step starts and one after every finished step; each publishes a session.updated
 * (a fresh read of the session: summary, tokens, title), a session.diff and a message.updated of
 * the user message with `summary`. On the session's first prompt the title (asked of the small
 * model in the background) arrives as a session.updated whose only change is `title`. Both land
 * anywhere from right after their start to after session.idle (a step-1 summary was seen after the
 * whole second step), and each session.updated shows whatever title and token counts were current.
 * The harness waits for all of them before the next prompt (see settle() in opencode.ts).
 * Canonical form, per prompt: the main flow in arrival order; directly after its session.idle the
 * summaries in order, each as [session.updated, session.diff, message.updated], then the title
 * event. Their session.updated show the session's final tokens and cost of that prompt (from the
 * last one received) and, before the title event, the placeholder title; the title event carries
 * the last summary's session with the new title. If the counts do not match (three events per
 * summary) the prompt is left as it was, so a change in OpenCode shows up as a diff.
 */
function canonicalBackground(entries: TranscriptEntry[]): TranscriptEntry[] {
  const created = entries.find((e) => is(e, 'session.created'));
  if (!created) return entries;
  const placeholder = infoOf(created).title as string;
  const titleEvent = entries.find((e) => is(e, 'session.updated') && infoOf(e).title !== placeholder) as OpencodeEventEntry | undefined;

  const starts = entries.flatMap((e, i) => (isPrompt(e) ? [i] : []));
  const out = entries.slice(0, starts[0] ?? entries.length);
  starts.forEach((start, k) => {
    const segment = entries.slice(start, starts[k + 1] ?? entries.length);
    out.push(...canonicalPrompt(segment, placeholder, titleEvent && segment.includes(titleEvent) ? titleEvent : undefined));
  });
  return out;
}

function canonicalPrompt(segment: TranscriptEntry[], placeholder: string, titleEvent: OpencodeEventEntry | undefined): TranscriptEntry[] {
  const busy = segment.findIndex((e) => is(e, 'session.status') && e.properties.status?.type === 'busy');
  if (busy < 0 || !segment.some((e) => is(e, 'session.idle'))) return segment;
  const sessions = segment.filter((e, i) => i > busy && is(e, 'session.updated') && e !== titleEvent) as OpencodeEventEntry[];
  const diffs = segment.filter((e) => is(e, 'session.diff'));
  const users = segment.filter((e, i) => i > busy && isUserSummary(e));
  if (sessions.length !== diffs.length || diffs.length !== users.length) return segment;

  const background = new Set<TranscriptEntry>([...sessions, ...diffs, ...users, ...(titleEvent ? [titleEvent] : [])]);
  const lastSnapshot = segment.filter((e) => background.has(e) && is(e, 'session.updated')).at(-1);
  const final = lastSnapshot ? infoOf(lastSnapshot) : {};
  const summaries: TranscriptEntry[] = [];
  sessions.forEach((session, i) => {
    const info: Record<string, any> = { ...infoOf(session), tokens: final.tokens, cost: final.cost };
    if (titleEvent) info.title = placeholder;
    summaries.push(withInfo(session, info), diffs[i] as TranscriptEntry, users[i] as TranscriptEntry);
  });
  if (titleEvent) {
    const base = sessions.length ? infoOf(summaries.at(-3) as TranscriptEntry) : { ...infoOf(titleEvent), tokens: final.tokens, cost: final.cost };
    summaries.push(withInfo(titleEvent, { ...base, title: infoOf(titleEvent).title }));
  }
  const main = segment.filter((e) => !background.has(e));
  const idle = main.findIndex((e) => is(e, 'session.idle'));
  return [...main.slice(0, idle + 1), ...summaries, ...main.slice(idle + 1)];
}

/** Sandbox dirs, absolute and (as OpenCode also writes them) relative to `/`, longest first. */
function pathReplacements(sandbox: NormalizeContext['sandbox']): [string, string][] {
  const pairs: [string, string][] = [];
  const add = (dir: string, name: string) => {
    for (const form of new Set([dir, safeRealpath(dir)])) {
      pairs.push([form, `<${name}>`]);
      pairs.push([form.replace(/^\//, ''), `<rel:${name}>`]);
    }
  };
  add(sandbox.work, 'work');
  add(sandbox.home, 'home');
  add(`${sandbox.root}/tmp`, 'tmp');
  add(sandbox.root, 'root');
  return pairs.sort((a, b) => b[0].length - a[0].length);
}

function safeRealpath(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
