// Opening a session as a fork of another (POST …/fork, docs/queue-steer-fork.md). Two ways:
//
//   definition  the agent's own fork request (AcpForkMethod, e.g. Qwen Code's branch extension),
//               which works on a session the agent has open: the fork's process opens the
//               parent's first (resume or load, as for any resume; no prompt ever goes to it), asks
//               for the fork, then opens the new session the same way
//   session/fork ACP's own (unstable), for an agent that announced sessionCapabilities.fork: the
//               whole session, so only after the parent's last turn (capability fork, not
//               forkAtTurn); its answer is a session/new's, which the converter reads as usual
//
// The parent's process is not involved: the agents keep their sessions in their own store, where
// the fork reads it.
import type { JsonRpcPeer } from '../json-rpc.js';
import type { ForkOptions } from '../types.js';
import { openSession, type OpenedSession, type OpenRequest } from './connection.js';
import type { AcpForkMethod } from './definition.js';
import { NewSessionResult, type InitializeResult } from './native.js';

export async function openFork(
  rpc: JsonRpcPeer,
  init: InitializeResult,
  request: OpenRequest,
  fork: ForkOptions,
  own: AcpForkMethod | undefined,
  timeoutMs: number,
  replaying: (on: boolean) => void,
): Promise<OpenedSession> {
  if (!own) return acpFork(rpc, init, request, fork, timeoutMs);
  await openSession(rpc, init, { ...request, nativeSessionId: fork.nativeSessionId }, timeoutMs, replaying);
  const { method, params } = own.request(fork);
  const answer = await rpc.request(method, params, timeoutMs);
  const sessionId = own.sessionId(answer);
  if (!sessionId) throw new Error(`${method} answered without a new session: ${JSON.stringify(answer).slice(0, 200)}`);
  return openSession(rpc, init, { ...request, nativeSessionId: sessionId }, timeoutMs, replaying);
}

async function acpFork(rpc: JsonRpcPeer, init: InitializeResult, request: OpenRequest, fork: ForkOptions, timeoutMs: number): Promise<OpenedSession> {
  // The daemon asks only when the capabilities say the agent forks (src/sessions/fork.ts); the
  // agent announced them in an earlier process, so this one checks again.
  if (init.agentCapabilities?.sessionCapabilities?.fork == null) throw new Error('the agent does not announce sessionCapabilities.fork');
  if (fork.turns !== fork.parentTurns) throw new Error('session/fork forks a whole session, not at an earlier turn');
  const answer = NewSessionResult.safeParse(await rpc.request('session/fork', { sessionId: fork.nativeSessionId, cwd: request.cwd, mcpServers: request.mcpServers }, timeoutMs));
  if (!answer.success) throw new Error('session/fork answered without a sessionId');
  return { sessionId: answer.data.sessionId, setup: answer.data, how: 'fork' };
}
