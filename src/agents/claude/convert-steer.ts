// Steered messages in Claude Code's stdout (docs/claude.md, "Queue, steer and fork"). The driver
// writes a steered message as a user line with a `uuid` while a turn runs; the CLI then prints
// `command_lifecycle` lines for it: `queued`, `started` (given to the model), `completed`, or
// `cancelled` (our interrupt's cancel_queued). Where it lands decides what the daemon sees:
//
//   - started before the turn's `result`: injected into the running turn (beside a tool result):
//     nothing to do, the turn goes on and ends at its `result`;
//   - still queued at the turn's `result` (the turn made no further model request): the CLI runs
//     it at once as a turn of its own. That `result` is held back (its open items complete, no
//     turn.ended) and the daemon's turn ends at the next one, so the answer to the steered message
//     is part of the turn it was steered into;
//   - cancelled: the model never saw it; an error says so;
//   - first heard of after the turn's `result` (the steer crossed the turn's end in the pipes): the
//     CLI runs it as a turn the daemon never started. Its output is dropped (it would land outside
//     a turn, or inside the next one), and an error at its end carries its answer.
//
// Pure, like the rest of the converter: a state and the drafts one line adds.
import type { Draft } from '../types.js';

export interface SteerState {
  /** A CLI turn runs: from its first line (system/init) to the `result` that ends it. */
  readonly busy: boolean;
  /** Steered messages the CLI queued during the running turn and has not given to the model. */
  readonly queued: readonly string[];
  /** Steered messages first heard of while no turn ran (the steer crossed the turn's end). */
  readonly late: readonly string[];
  /** The CLI is running a late steered message as its own turn: its output is dropped. */
  readonly orphan: boolean;
}

export const initialSteer: SteerState = { busy: false, queued: [], late: [], orphan: false };

/** A `command_lifecycle` line: where one steered message is. */
export function lifecycle(state: SteerState, uuid: string, phase: string): { state: SteerState; events: Draft[] } {
  const queued = state.queued.filter((u) => u !== uuid);
  const late = state.late.filter((u) => u !== uuid);
  const known = queued.length !== state.queued.length;
  const wasLate = late.length !== state.late.length;
  switch (phase) {
    case 'queued':
      if (known || wasLate) return { state, events: [] };
      return { state: state.busy ? { ...state, queued: [...state.queued, uuid] } : { ...state, late: [...state.late, uuid] }, events: [] };
    case 'started':
      // Late and unseen both mean the CLI runs it with no daemon turn behind it.
      if (wasLate || (!known && !state.busy)) return { state: { ...state, late, orphan: true }, events: [] };
      return { state: { ...state, queued }, events: [] };
    case 'cancelled':
      if (!known && !wasLate) return { state, events: [] };
      return { state: { ...state, queued, late }, events: [notDelivered()] };
    default:
      // completed, and any state a later CLI adds: nothing the stream needs.
      return { state, events: [] };
  }
}

/** At a `result`: whether the daemon's turn goes on (a steered message is about to run as the CLI's next turn). */
export function holdsTurn(state: SteerState): boolean {
  return !state.orphan && state.queued.length > 0;
}

/** The `result` of a late steered message's own turn: what it answered, as an error. */
export function orphanEnded(state: SteerState, answer: string | undefined): { state: SteerState; events: Draft[] } {
  const message =
    'A message steered into a turn reached Claude Code only after that turn had ended; Claude Code answered it as a turn of its own, ' +
    `which is not part of this session's turns. Its answer: ${answer ?? '(none)'}`;
  return { state: { ...state, busy: false, orphan: false }, events: [{ type: 'error', data: { message, code: 'claude_steer_late' } }] };
}

function notDelivered(): Draft {
  const message = 'A message steered into this turn was not delivered: the turn was interrupted before Claude Code gave it to the model.';
  return { type: 'error', data: { message, code: 'claude_steer_cancelled' } };
}
