// Pending permission and question bookkeeping for one session: what is open, what was resolved,
// so replies can be checked (404 unknown, 409 already resolved) and nothing is left dangling
// when a turn or the session ends.
import type { PermissionEventData, QuestionEventData } from '../schema/events.js';

export type HitlState = 'pending' | 'resolved' | 'unknown';

/** The daemon's own permission ids (budget.ts: `budget_1`, `budget_2` …) start with this. */
export const DAEMON_PERMISSION_PREFIX = 'budget_';
/** What an agent's id that could be mistaken for the daemon's (or for an escaped one) gets in front. */
const AGENT_ESCAPE = 'agent~';

/**
 * An agent's permission or question id as the API shows it. An agent chooses its ids, so one that
 * starts like the daemon's own (or like an id already escaped) gets `agent~` in front: the
 * mapping is one to one, every other id is shown as the agent sent it, and no agent's id can
 * ever be one of the daemon's (docs/security.md, "Planted files and hostile agents").
 */
export function agentHitlId(native: string): string {
  return native.startsWith(DAEMON_PERMISSION_PREFIX) || native.startsWith(AGENT_ESCAPE) ? AGENT_ESCAPE + native : native;
}

/** The agent's own id for an id the API shows (agentHitlId's inverse): what its driver is told. */
export function nativeHitlId(id: string): string {
  return id.startsWith(AGENT_ESCAPE) ? id.slice(AGENT_ESCAPE.length) : id;
}

/** Resolved ids are remembered only up to this many, so a long session cannot grow them forever. */
const MAX_RESOLVED = 10_000;

export class HitlBook {
  readonly permissions = new Map<string, PermissionEventData>();
  readonly questions = new Map<string, QuestionEventData>();
  private readonly resolved = new Set<string>();

  get pendingCount(): number {
    return this.permissions.size + this.questions.size;
  }

  permissionState(id: string): HitlState {
    if (this.permissions.has(id)) return 'pending';
    return this.resolved.has(`p:${id}`) ? 'resolved' : 'unknown';
  }

  questionState(id: string): HitlState {
    if (this.questions.has(id)) return 'pending';
    return this.resolved.has(`q:${id}`) ? 'resolved' : 'unknown';
  }

  /** False when this request is a repeat of one already open or answered. */
  openPermission(data: PermissionEventData): boolean {
    if (this.permissionState(data.permission_id) !== 'unknown') return false;
    this.permissions.set(data.permission_id, data);
    return true;
  }

  openQuestion(data: QuestionEventData): boolean {
    if (this.questionState(data.question_id) !== 'unknown') return false;
    this.questions.set(data.question_id, data);
    return true;
  }

  /** Returns the request being closed, or undefined if it was not open. */
  closePermission(id: string): PermissionEventData | undefined {
    const open = this.permissions.get(id);
    this.permissions.delete(id);
    this.remember(`p:${id}`);
    return open;
  }

  closeQuestion(id: string): QuestionEventData | undefined {
    const open = this.questions.get(id);
    this.questions.delete(id);
    this.remember(`q:${id}`);
    return open;
  }

  private remember(key: string): void {
    this.resolved.add(key);
    if (this.resolved.size > MAX_RESOLVED) {
      const oldest = this.resolved.values().next().value;
      if (oldest !== undefined) this.resolved.delete(oldest);
    }
  }
}
