// Normalisation of a recorded ACP transcript (Gemini CLI, Qwen Code): the values that differ from
// run to run (or machine to machine) become placeholders, numbered in order of first appearance and
// consistent within one file, so a recording can be compared exactly with a committed one.
// Everything else is kept verbatim. Found by recording every scenario repeatedly and diffing.
//
//   ids       UUIDs (session ids, Qwen's branch-point records) <uuid-1>; tool call ids <tool-1>
//             (Gemini's hold the call's epoch milliseconds)
//   paths     the sandbox's work, home, tmp and root dirs <work>, <home>, <tmp>, <root>; the fake
//             model's port <port>
//   numbers   token counts of the input (the fake counts a request's size, and the request holds
//             sandbox paths and the date) <tokens>; durations <ms>; a command's process (group) id
//             <pid>
//   moved     available_commands_update, which both CLIs send from a timer once the session
//             exists: it raced our first session/prompt. It is placed directly after the
//             session/new answer. Nothing else is dropped or reordered. (It can also come too
//             late to be recorded at all, so harness-clis.ts compares without it.)
import type { Sandbox } from '../../support/sandbox.js';

/** One transcript entry: a message received from the CLI, or one we sent. */
export type AcpEntry = { received: unknown } | { sent: unknown };

export interface NormalizeContext {
  sandbox: Pick<Sandbox, 'root' | 'home' | 'work'>;
  port: number;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TOKEN_KEYS = new Set(['input_tokens', 'inputTokens', 'totalTokens', 'total_tokens', 'cachedReadTokens']);
const MS_KEYS = new Set(['durationMs', 'duration_ms']);
const PID_KEYS = new Set(['pid', 'pgid']);
const PGID = /(Process Group PGID: )\d+/g;

export function normalizeAcpTranscript(entries: AcpEntry[], ctx: NormalizeContext): string[] {
  const ids = new Map<string, string>();
  const counters = new Map<string, number>();
  const idFor = (raw: string, kind: string) => {
    let p = ids.get(raw);
    if (!p) {
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      p = `<${kind}-${n}>`;
      ids.set(raw, p);
    }
    return p;
  };
  const paths: [string, string][] = [
    [`${ctx.sandbox.root}/tmp`, '<tmp>'],
    [ctx.sandbox.work, '<work>'],
    [ctx.sandbox.home, '<home>'],
    [ctx.sandbox.root, '<root>'],
  ];
  const text = (s: string) => {
    let out = s.replace(UUID, (u) => idFor(u.toLowerCase(), 'uuid'));
    for (const [from, to] of paths) out = out.split(from).join(to);
    return out.split(`127.0.0.1:${ctx.port}`).join('127.0.0.1:<port>').replace(PGID, '$1<pid>');
  };
  const walk = (v: unknown, key = ''): unknown => {
    if (typeof v === 'string') return key === 'toolCallId' ? idFor(v, 'tool') : text(v);
    if (typeof v === 'number') {
      if (TOKEN_KEYS.has(key)) return '<tokens>';
      if (MS_KEYS.has(key)) return '<ms>';
      if (PID_KEYS.has(key)) return '<pid>';
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return placeCommands(entries).map((e) => JSON.stringify('sent' in e ? { $sent: walk(e.sent) } : walk(e.received)));
}

const isCommandsUpdate = (e: AcpEntry) =>
  'received' in e && (e.received as { params?: { update?: { sessionUpdate?: string } } })?.params?.update?.sessionUpdate === 'available_commands_update';

/** available_commands_update right after the session/new answer (see the header). */
function placeCommands(entries: AcpEntry[]): AcpEntry[] {
  const newId = entries.find((e) => 'sent' in e && (e.sent as { method?: string }).method === 'session/new');
  const id = newId && 'sent' in newId ? (newId.sent as { id?: unknown }).id : undefined;
  const answerAt = entries.findIndex((e) => 'received' in e && (e.received as { id?: unknown; method?: string }).id === id && !(e.received as { method?: string }).method);
  if (answerAt < 0) return entries;
  const moved = entries.filter(isCommandsUpdate);
  const rest = entries.filter((e) => !isCommandsUpdate(e));
  const at = rest.indexOf(entries[answerAt]!) + 1;
  return [...rest.slice(0, at), ...moved, ...rest.slice(at)];
}
