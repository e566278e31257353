// `always` answers kept per session, for sessions on a server that other sessions may share.
//
// OpenCode 1.18.33 keeps an `always` grant in its instance: once one session answers `always`, the
// rule lets later requests of the same kind through unasked for EVERY session on that server
// (observed with the shared e2e test). So on a shareable server the driver never sends `always`:
// it sends `once` and keeps the grant here, for its own session only, and when a later request of
// that session is covered by one of its grants the driver answers it `once` itself and shows
// neither the request nor its reply, which is what the session would see from OpenCode's own rule
// on a server of its own (docs/opencode.md, "Shared servers").
//
// A grant is the request's `always` patterns under its permission (`edit: ["*"]`, `bash: ["git
// log *"]`). A request is covered when each of its `patterns` matches one of them, where `*`
// matches any run of characters and everything else only itself. OpenCode's own matching knows
// more (`?`, an optional trailing " *"); matching less only means asking again, never approving a
// request OpenCode would have asked about.
import { isObject } from '../../util/is-object.js';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** A `permission.asked` request, as the grants need it. */
export interface Ask {
  id: string;
  permission: string;
  patterns: string[];
  always: string[];
}

/** The request a `permission.asked` event carries, if it is one. */
export function askOf(event: unknown): Ask | undefined {
  if (!isObject(event) || event.type !== 'permission.asked' || !isObject(event.properties)) return undefined;
  const p = event.properties;
  if (typeof p.id !== 'string' || typeof p.permission !== 'string') return undefined;
  return { id: p.id, permission: p.permission, patterns: strings(p.patterns), always: strings(p.always) };
}

/** The request id a `permission.replied` event settles, if it is one. */
export function repliedOf(event: unknown): string | undefined {
  if (!isObject(event) || event.type !== 'permission.replied' || !isObject(event.properties)) return undefined;
  return typeof event.properties.requestID === 'string' ? event.properties.requestID : undefined;
}

const regexes = new Map<string, RegExp>();
function matches(value: string, pattern: string): boolean {
  let re = regexes.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    if (regexes.size < 1_000) regexes.set(pattern, re);
  }
  return re.test(value);
}

/** Requests remembered while they wait for an answer (more are not granted by a later `always`). */
const MAX_PENDING = 1_000;

export class SessionGrants {
  private readonly rules = new Map<string, string[]>();
  private readonly pending = new Map<string, Ask>();
  /** Requests answered by a grant: their `permission.replied` is not shown either. */
  private readonly silent = new Set<string>();

  /** True when a grant covers the request: the caller answers it `once` and does not show it. */
  covers(ask: Ask): boolean {
    const rules = this.rules.get(ask.permission);
    if (!rules || ask.patterns.length === 0) return false;
    return ask.patterns.every((value) => rules.some((rule) => matches(value, rule)));
  }

  /** A request shown to the client (it waits for an answer). */
  asked(ask: Ask): void {
    if (this.pending.size < MAX_PENDING) this.pending.set(ask.id, ask);
  }

  /** A request the caller answers itself (covered): its reply event is dropped. */
  answeredSilently(id: string): void {
    this.silent.add(id);
  }

  /** Whether the reply event of request `id` is shown; the request is settled either way. */
  showReply(id: string): boolean {
    this.pending.delete(id);
    return !this.silent.delete(id);
  }

  /**
   * The client answered `id` with `always`: its patterns become a grant of this session. Returns
   * the other requests still waiting that the grant now covers (OpenCode answers those too).
   */
  grant(id: string): Ask[] {
    const ask = this.pending.get(id);
    if (!ask || ask.always.length === 0) return [];
    this.rules.set(ask.permission, [...(this.rules.get(ask.permission) ?? []), ...ask.always]);
    return [...this.pending.values()].filter((other) => other.id !== id && this.covers(other));
  }
}
