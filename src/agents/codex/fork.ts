// Where a Codex fork branches (AgentDriver.forkPoint, docs/codex.md "Queue, steer and fork"):
// `thread/fork {threadId, lastTurnId}` copies the thread up to and including that turn, so the
// point is the native turn id of the last turn Codex ran up to the daemon's turn `turns`. Pure.
//
// The converter keeps Codex's turn id as `native_turn_id` in turn.started's and turn.ended's
// metadata (convert.ts). A fork's turns keep their source's ids (0.171.0), so the events a fork
// copied from its parent name turns its own thread has: forks of forks work the same way.
import type { UniversalEvent } from '../../schema/events.js';

/** The native turn id to fork through, or undefined when no turn up to `turn_<turns>` reached
 *  Codex (then there is nothing to fork natively and the daemon refuses). */
export function codexForkPoint(events: readonly UniversalEvent[], turns: number): string | undefined {
  let point: string | undefined;
  for (const e of events) {
    if (e.type !== 'turn.started' && e.type !== 'turn.ended') continue;
    const id = e.data.metadata?.native_turn_id;
    // A daemon turn that never reached Codex (not delivered, cut by a restart before turn/start)
    // has no id: the conversation up to it is the one up to the turn before.
    if (typeof id === 'string' && id !== '') point = id;
    if (e.type === 'turn.ended' && e.data.turn_id === `turn_${turns}`) break;
  }
  return point;
}
