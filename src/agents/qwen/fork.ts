// How Qwen Code forks a session (capabilities fork and forkAtTurn; docs/qwen.md): its own ACP
// extension `qwen/control/session/branch {sessionId, atRecordId?}`, answered with
// `{newSessionId, title, displayName}`; the new session is a copy of the parent's transcript file,
// which the driver then resumes (src/agents/acp/fork.ts). It does not answer ACP's session/fork.
//
// Where: every session/prompt answer of a completed turn carries
// `_meta["qwen.branchPoint"] = {assistantRecordUuid, checkpointUuid}`, and `atRecordId` = a turn's
// checkpointUuid copies the conversation up to the end of that turn (its assistantRecordUuid is
// refused, -32009). That answer is the `raw` of the turn's turn.ended, so the branch point is the
// checkpoint of the daemon's turn N, at the end as well as earlier. A turn that did not complete
// (interrupted, failed) has none: a fork there is refused (409 fork_unsupported) rather than
// branched somewhere else. Checkpoints keep their ids in a branch, so a fork forks again.
import type { UniversalEvent } from '../../schema/events.js';
import { isObject } from '../../util/is-object.js';
import type { AcpForkMethod } from '../acp/definition.js';

export const QWEN_BRANCH = 'qwen/control/session/branch';

export const qwenFork: AcpForkMethod = {
  point: (events, turns) => checkpointOf(events, `turn_${turns}`),
  request: (fork) => ({ method: QWEN_BRANCH, params: { sessionId: fork.nativeSessionId, ...(fork.point ? { atRecordId: fork.point } : {}) } }),
  sessionId: (result) => (isObject(result) && typeof result.newSessionId === 'string' && typeof result.displayName === 'string' ? result.newSessionId : undefined),
};

/** The checkpointUuid in the session/prompt answer that ended the daemon's turn `turnId`. */
function checkpointOf(events: readonly UniversalEvent[], turnId: string): string | undefined {
  const ended = events.find((e) => e.type === 'turn.ended' && e.data.turn_id === turnId);
  const raw = ended?.raw;
  const result = isObject(raw) && isObject(raw.result) ? raw.result : undefined;
  const meta = result && isObject(result._meta) ? result._meta['qwen.branchPoint'] : undefined;
  return isObject(meta) && typeof meta.checkpointUuid === 'string' && meta.checkpointUuid !== '' ? meta.checkpointUuid : undefined;
}
