// Opening a session as a fork of another (POST …/fork, docs/queue-steer-fork.md), for an ACP agent
// whose definition says how it forks (AcpForkMethod): ACP itself has no stable session/fork, and
// neither built-in agent answers the unstable one. The agent's own fork request works on a session
// it has open, so the fork's process opens the parent's first (resume or load, as for any resume;
// no prompt ever goes to it), asks for the fork, then opens the new session the same way. The
// parent's process is not involved: the agents keep their sessions on disk, where the fork reads it.
import type { JsonRpcPeer } from '../json-rpc.js';
import type { ForkOptions } from '../types.js';
import { openSession, type OpenedSession, type OpenRequest } from './connection.js';
import type { AcpForkMethod } from './definition.js';
import type { InitializeResult } from './native.js';

export async function openFork(
  rpc: JsonRpcPeer,
  init: InitializeResult,
  request: OpenRequest,
  fork: ForkOptions,
  how: AcpForkMethod | undefined,
  timeoutMs: number,
  replaying: (on: boolean) => void,
): Promise<OpenedSession> {
  // The daemon asks only when the capabilities say the agent forks (src/sessions/fork.ts).
  if (!how) throw new Error('the agent has no way to fork a session');
  await openSession(rpc, init, { ...request, nativeSessionId: fork.nativeSessionId }, timeoutMs, replaying);
  const { method, params } = how.request(fork);
  const answer = await rpc.request(method, params, timeoutMs);
  const sessionId = how.sessionId(answer);
  if (!sessionId) throw new Error(`${method} answered without a new session: ${JSON.stringify(answer).slice(0, 200)}`);
  return openSession(rpc, init, { ...request, nativeSessionId: sessionId }, timeoutMs, replaying);
}
