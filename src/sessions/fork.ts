// POST …/fork (docs/queue-steer-fork.md): where a session branches and what its fork starts from.
// The branch point is always just after a turn: the `turn.ended` at sequence `at`, or the parent's
// last one. The fork gets a copy of the parent's events up to there (its log reads as the whole
// conversation), the parent's settings, and an agent that holds the same conversation natively:
// the driver forks the parent's native session (ForkOptions), at its end (capability fork) or at
// an earlier turn (forkAtTurn). Nothing of the parent changes.
import type { AgentDriver, ForkOptions } from '../agents/types.js';
import { ApiError } from '../errors.js';
import type { ForkRequest } from '../schema/delivery.js';
import type { UniversalEvent } from '../schema/events.js';
import type { SessionSnapshot } from '../store/event-store.js';
import type { Session } from './session.js';
import type { ResolvedCreateRequest } from './session-parts.js';

export interface ForkPlan {
  /** The fork's create request: the parent's, with where it came from and how its agent forks. */
  request: ResolvedCreateRequest;
  /** The parent's events up to the branch point (with raw), to copy into the fork's log. */
  events: UniversalEvent[];
  /** The fork's normalizer state after the copy: no turn running, `turns` turns so far. */
  snapshot: SessionSnapshot;
  /** The parent's turn the fork branches after (null: before any). */
  atTurn: string | null;
}

export function planFork(parent: Session, driver: AgentDriver, body: ForkRequest): ForkPlan {
  const sessionId = parent.id;
  const all = parent.log.read(0, Infinity, true); // 410 events_evicted when the memory store let some go
  const ends = all.filter((e) => e.type === 'turn.ended');
  let at: number;
  if (body.at !== undefined) {
    if (!ends.some((e) => e.sequence === body.at)) {
      throw new ApiError('invalid_fork_point', `Event ${body.at} of session '${sessionId}' is not a turn.ended; fork at the sequence of a turn.ended event, or leave \`at\` out to fork after the last turn.`, {
        sessionId,
        at: body.at,
      });
    }
    at = body.at;
  } else {
    if (parent.status === 'running' || parent.status === 'waiting') {
      throw new ApiError('turn_in_progress', `Session '${sessionId}' is ${parent.status}; fork once the turn has ended, or pass \`at\` (a turn.ended sequence) to branch after an earlier turn.`, {
        sessionId,
        sessionStatus: parent.status,
      });
    }
    // After the last turn; a session that ended is forked after its last turn, not its end.
    at = parent.status === 'ended' ? (ends.at(-1)?.sequence ?? 0) : parent.log.lastSequence;
  }
  const endedTurn = [...ends].reverse().find((e) => e.sequence <= at);
  const turns = turnNumber(endedTurn) ?? 0;
  const parentTurns = parent.turns;
  const events = all.filter((e) => e.sequence <= at);
  // The fork's budget is its parent's as set (raises its approvals made are the parent's own).
  const request: ResolvedCreateRequest = { ...parent.request, budget: parent.budgetSet, forkedFrom: { sessionId, sequence: at } };
  delete request.nativeSessionId;
  delete request.fork;
  if (turns > 0) request.fork = forkOptions(parent, driver, events, turns, parentTurns);
  // Its totals are what its copied log says was spent: the conversation it holds cost that.
  const usage = events.findLast((e) => e.type === 'usage.updated')?.data;
  const snapshot: SessionSnapshot = { turnId: null, turnAnnounced: true, turnCount: turns, permissions: [], questions: [], openItems: [], ...(usage && 'totals' in usage ? { usage: usage.totals } : {}) };
  return { request, events, snapshot, atTurn: endedTurn?.data.turn_id ?? null };
}

/** How the driver forks: refused (409) when the agent cannot fork there, saying where it can. */
function forkOptions(parent: Session, driver: AgentDriver, events: UniversalEvent[], turns: number, parentTurns: number): ForkOptions {
  // A fork whose agent has not named its own session yet (no turn since) forks what it was forked from.
  const own = parent.log.currentNativeSessionId ?? parent.request.nativeSessionId;
  const inherited = own ? undefined : parent.request.fork;
  const nativeSessionId = own ?? inherited?.nativeSessionId;
  const nativeTurns = inherited?.parentTurns ?? parentTurns;
  const atEnd = turns === nativeTurns;
  const { fork, forkAtTurn } = driver.capabilities;
  const context = { sessionId: parent.id, agent: driver.id, fork, forkAtTurn };
  if (!(atEnd ? fork : forkAtTurn)) {
    const can = forkAtTurn ? 'at any turn' : fork ? 'only after the last turn (leave `at` out, with no turn running)' : 'not at all';
    throw new ApiError('fork_unsupported', `The ${driver.id} agent cannot fork ${atEnd ? 'a conversation' : 'at an earlier turn'}; it forks ${can}.`, context);
  }
  if (!nativeSessionId) {
    throw new ApiError('fork_unsupported', `Session '${parent.id}' has no native ${driver.id} session to fork yet.`, context);
  }
  let point: string | undefined;
  if (driver.forkPoint) {
    point = driver.forkPoint(events, turns);
    if (point === undefined) {
      throw new ApiError('fork_unsupported', `The ${driver.id} agent's events up to that turn do not say where its own session would branch.`, context);
    }
  }
  return { nativeSessionId, turns, parentTurns: nativeTurns, ...(point !== undefined ? { point } : {}) };
}

/** N of a turn.ended's `turn_N` (the daemon numbers turns from 1). */
function turnNumber(event: UniversalEvent | undefined): number | undefined {
  if (event?.type !== 'turn.ended') return undefined;
  const n = /^turn_(\d+)$/.exec(event.data.turn_id ?? '');
  return n ? Number(n[1]) : undefined;
}
