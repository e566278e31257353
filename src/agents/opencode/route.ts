// Which events of a server's stream belong to the session: its own, those naming no session (the
// instance's bootstrap events, which the converter ignores), and the permission and question
// requests of its subagents' child sessions (the `task` tool runs a child session whose requests
// would otherwise wait for an answer nobody could give). The rest of a child's conversation stays
// out: its session.idle would end the parent's turn.
import { isObject } from '../../util/is-object.js';

const CHILD_HITL = new Set(['permission.asked', 'permission.replied', 'question.asked', 'question.replied', 'question.rejected']);
/** Child sessions remembered (a subagent can start subagents); more are not followed. */
const MAX_CHILDREN = 1_000;

/** The session id an event belongs to, if it names one. */
export function sessionOf(event: unknown): string | undefined {
  if (!isObject(event) || !isObject(event.properties)) return undefined;
  const p = event.properties;
  if (typeof p.sessionID === 'string') return p.sessionID;
  if (isObject(p.info) && typeof p.info.sessionID === 'string') return p.info.sessionID;
  if (isObject(p.part) && typeof p.part.sessionID === 'string') return p.part.sessionID;
  return undefined;
}

export class SessionRouter {
  private readonly children = new Set<string>();

  constructor(private readonly sessionId: string) {}

  /** True when the session's converter should see the event. */
  accepts(event: unknown): boolean {
    const owner = sessionOf(event);
    if (owner === undefined || owner === this.sessionId) return true;
    if (!isObject(event)) return false;
    if (event.type === 'session.created' && isObject(event.properties) && isObject(event.properties.info)) {
      const parent = event.properties.info.parentID;
      if ((parent === this.sessionId || this.children.has(String(parent))) && this.children.size < MAX_CHILDREN) this.children.add(owner);
      return false;
    }
    return this.children.has(owner) && typeof event.type === 'string' && CHILD_HITL.has(event.type);
  }
}
