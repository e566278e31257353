// How a Claude Code session is forked (docs/queue-steer-fork.md, docs/claude.md): natively, by
// `--resume <parent> --fork-session`, which copies the parent's transcript into a new session (its
// entries keep their uuids, so a fork of a fork works the same way) and leaves the parent as it was.
// `--resume-session-at <uuid>` (hidden on 2.1.337) cuts the copy after that transcript entry: the
// uuid of the last `assistant` line of the turn to branch after (not its `result`'s, not the user
// message's). Without --fork-session it would cut the parent's own transcript, so the two always go
// together here. The converter keeps that uuid on each turn.ended (metadata.assistant_uuid).
import { randomUUID } from 'node:crypto';
import type { UniversalEvent } from '../../schema/events.js';
import type { ForkOptions } from '../types.js';

/** The fork's arguments. The cut is passed even at the parent's end: a fork restarted before its
 *  first turn forks the parent again, which may have gone on since. `--session-id` names the new
 *  session up front; Claude reports it with its first turn (system/init), as after a resume. */
export function claudeArgsFork(fork: ForkOptions): string[] {
  const args = ['--resume', fork.nativeSessionId, '--fork-session', '--session-id', randomUUID()];
  if (fork.point) args.push('--resume-session-at', fork.point);
  return args;
}

/** The uuid to branch after the daemon's turn `turn_<turns>`: its turn.ended's assistant_uuid.
 *  Undefined (the fork is refused) when that turn printed no assistant line, e.g. one interrupted
 *  before the model answered. */
export function claudeForkPoint(events: readonly UniversalEvent[], turns: number): string | undefined {
  const turnId = `turn_${turns}`;
  const ended = events.find((e) => e.type === 'turn.ended' && e.data.turn_id === turnId);
  if (ended?.type !== 'turn.ended') return undefined;
  const uuid = ended.data.metadata.assistant_uuid;
  return typeof uuid === 'string' && uuid.length > 0 ? uuid : undefined;
}
