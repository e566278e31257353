// Normalisation of a recorded Codex app-server transcript: the values that differ from run to run
// (or from machine to machine) become placeholders, numbered in order of first appearance and
// consistent within one file, so a recording can be compared exactly with a committed one.
// Everything else is kept verbatim. Found by recording every scenario repeatedly and diffing.
//
//   ids       thread / turn / item ids by the field they appear in: <thread-1>, <turn-1>, <item-1>;
//             installationId <installation-1>; any other UUID <uuid-1>. Item ids include the
//             fake model's (msg_…, call_…, rs_…): deterministic for a seed, but what matters is
//             which item refers to which. Substrings too (the rollout path holds the thread id).
//   times     *At / *AtMs / emittedAtMs epoch values <time>; durationMs <ms> (a number only: null
//             stays null, it says the value is not known yet)
//   paths     the sandbox's work, home, tmp and root dirs <work>, <home>, <tmp>, <root>; the
//             rollout file's date directories and timestamp <date>, <stamp>
//   host      remoteControl/status/changed serverName (the hostname) <host>; the OS part of
//             initialize's userAgent <os>; the fake model's port <port>
//   processId the pid of a command's process <pid>
//   tokens    inputTokens and totalTokens <tokens>: the fake counts a request's input as its size,
//             and the body holds sandbox paths, the date and the host's timezone. outputTokens
//             are the fake's own answer and stay.
//   dropped   the configWarning that bubblewrap is not on PATH: present or not depending on the
//             host, not on Codex or the scenario.
//   moved     remoteControl/status/changed, which app-server emits on its own once initialize is
//             answered, concurrently with our `initialized` and thread/start: in repeated runs it
//             landed before either, or after both. When it arrives before the thread/start
//             response it is placed directly after the initialize response.
//             A response to one of our requests is placed directly after the request: app-server
//             writes it from another task than the notifications the request sets off, so they
//             race (seen for turn/start: its response came before, between or after the turn's
//             thread/status/changed and turn/started). Nothing else is dropped or reordered.
import { hostname } from 'node:os';
import { realpathSync } from 'node:fs';
import type { Sandbox } from '../../support/sandbox.js';

/** One transcript entry: a message received from app-server, or one we sent. */
export type TranscriptEntry = { received: unknown } | { sent: unknown };

export interface NormalizeContext {
  sandbox: Pick<Sandbox, 'root' | 'home' | 'work'>;
  port: number;
}

type Kind = 'thread' | 'turn' | 'item' | 'installation' | 'approval' | 'uuid';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ROLLOUT = /\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-/g;
const TIME_KEY = /[a-z](?:At|AtMs)$/; // createdAt, startedAtMs, emittedAtMs, sectionEnteredAt …
const TOKEN_KEYS = new Set(['inputTokens', 'totalTokens']);
/** Keys whose string value is an id of that kind wherever they appear. */
const ID_KEYS: Record<string, Kind> = {
  threadId: 'thread',
  sessionId: 'thread', // the thread's session id: the same UUID as its id on 0.171.0
  parentThreadId: 'thread',
  forkedFromId: 'thread',
  turnId: 'turn',
  rootTurnId: 'turn',
  parentTurnId: 'turn',
  itemId: 'item',
  installationId: 'installation',
  approvalId: 'approval',
};
/** The kind of the `id` field of an object found under this key (or in an array under it). */
const ID_OF_PARENT: Record<string, Kind> = { thread: 'thread', turn: 'turn', turns: 'turn', item: 'item', items: 'item' };

const HOST_BUBBLEWRAP = 'Codex could not find bubblewrap on PATH';

export function normalizeCodexTranscript(entries: TranscriptEntry[], ctx: NormalizeContext): string[] {
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
    paths.push([path, placeholder]);
    try {
      const real = realpathSync(path);
      if (real !== path) paths.push([real, placeholder]);
    } catch {
      /* already removed: the plain path is enough */
    }
  };
  const root = ctx.sandbox.root;
  addPath(ctx.sandbox.work, '<work>');
  addPath(ctx.sandbox.home, '<home>');
  addPath(`${root}/tmp`, '<tmp>');
  addPath(root, '<root>'); // last: the others start with it
  const host = hostname();

  // Pass 1: ids by field, so numbering follows the order of first appearance.
  const collect = (value: unknown, key: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const v of value) collect(v, key);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (typeof v === 'string') {
        const kind = k === 'id' && key !== undefined ? ID_OF_PARENT[key] : ID_KEYS[k];
        if (kind) idFor(v, kind);
      } else collect(v, k);
    }
  };

  // Pass 2: rewrite.
  const str = (s: string): string => {
    let out = s;
    for (const [raw, p] of ids) if (out.includes(raw)) out = out.split(raw).join(p);
    for (const [path, p] of paths) if (out.includes(path)) out = out.split(path).join(p);
    out = out.replace(ROLLOUT, '/sessions/<date>/rollout-<stamp>-');
    out = out.replace(UUID, (u) => idFor(u, 'uuid'));
    out = out.split(`127.0.0.1:${ctx.port}`).join('127.0.0.1:<port>');
    return out;
  };
  const rewrite = (value: unknown, key: string | undefined): unknown => {
    if (Array.isArray(value)) return value.map((v) => rewrite(v, key));
    if (typeof value === 'string') {
      if (key === 'serverName' && value === host) return '<host>';
      if (key === 'userAgent') return str(value).replace(/^(\S+) \([^)]*\)/, '$1 (<os>)');
      if (key === 'processId') return '<pid>';
      return str(value);
    }
    if (typeof value === 'number') {
      if (key === 'processId') return '<pid>';
      if (key !== undefined && TIME_KEY.test(key)) return '<time>';
      if (key === 'durationMs') return '<ms>';
      if (key !== undefined && TOKEN_KEYS.has(key)) return '<tokens>';
      return value;
    }
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = rewrite(v, k);
    return out;
  };

  const kept = settleResponses(settleStartup(entries.filter((e) => !isHostWarning('received' in e ? e.received : undefined))));
  for (const e of kept) collect('received' in e ? e.received : e.sent, undefined);
  return kept.map((e) => JSON.stringify('received' in e ? rewrite(e.received, undefined) : { $sent: rewrite(e.sent, undefined) }));
}

/** See "moved" above. */
function settleStartup(entries: TranscriptEntry[]): TranscriptEntry[] {
  const sentId = (method: string) => {
    const e = entries.find((x) => 'sent' in x && (x.sent as { method?: string }).method === method);
    return e && 'sent' in e ? (e.sent as { id?: unknown }).id : undefined;
  };
  const responseAt = (id: unknown) =>
    id === undefined ? -1 : entries.findIndex((x) => 'received' in x && (x.received as { id?: unknown; method?: unknown }).id === id && (x.received as { method?: unknown }).method === undefined);
  const init = responseAt(sentId('initialize'));
  const threadStart = responseAt(sentId('thread/start'));
  if (init < 0 || threadStart < 0) return entries;
  const isStartup = (e: TranscriptEntry, i: number) =>
    i > init && i < threadStart && 'received' in e && (e.received as { method?: unknown }).method === 'remoteControl/status/changed';
  const moved = entries.filter(isStartup);
  const rest = entries.filter((e, i) => !isStartup(e, i));
  rest.splice(init + 1, 0, ...moved);
  return rest;
}

/** See "moved" above: each response to our request right after that request. */
function settleResponses(entries: TranscriptEntry[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  for (const e of entries) {
    const m = 'received' in e ? (e.received as { id?: unknown; method?: unknown }) : undefined;
    const request = m && m.method === undefined && m.id !== undefined
      ? out.findIndex((x) => 'sent' in x && (x.sent as { id?: unknown; method?: unknown }).id === m.id && (x.sent as { method?: unknown }).method !== undefined)
      : -1;
    if (request >= 0) out.splice(request + 1, 0, e);
    else out.push(e);
  }
  return out;
}

function isHostWarning(m: unknown): boolean {
  const msg = m as { method?: string; params?: { summary?: unknown } } | undefined;
  return msg?.method === 'configWarning' && typeof msg.params?.summary === 'string' && msg.params.summary.startsWith(HOST_BUBBLEWRAP);
}
