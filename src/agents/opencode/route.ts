// Which events of a server's stream belong to the session: its own, those naming no session (the
// instance's bootstrap events, which the converter ignores), and everything of its sub-agents'
// child sessions (the `task` tool runs a child session): their messages and tools, which the
// converter attributes to the sub-agent, and their permission and question requests, which would
// otherwise wait for an answer nobody could give. A child's own session.created is not passed (it
// would read as the session's start); the router learns the child from it.
import { isObject } from '../../util/is-object.js';

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
    return this.children.has(owner);
  }
}
