// The session side of POST /stream (docs/stream.md): a chat backend's dispatch becomes one turn of
// a session. A fresh session is created with the dispatch's options and its first message carries
// the earlier turns as a marked preamble (no agent can be handed an arbitrary history natively:
// fork copies a native session agentwire already holds, not a transcript); a dispatch naming a
// session agentwire holds continues it natively and sends only the new message. Nobody on the
// stream can answer a permission or a question, so the dispatch's policy does (hitl-policy.ts's
// rules). A session the dispatch created ends with the stream unless the caller keeps it.
import { ApiError } from '../errors.js';
import type { CreateSessionRequest } from '../schema/api.js';
import type { ChatMessage, StreamPermissions, StreamRequest } from '../schema/sandbox-stream.js';
import { HitlPolicyRunner, type PermissionPolicy } from './hitl-policy.js';
import type { Session } from './session.js';
import type { SessionManager } from './session-manager.js';

export interface StreamDispatch {
  readonly session: Session;
  /** This dispatch created the session (and ends it, unless `keep`). */
  readonly created: boolean;
  /** The text the agent gets: the new message, after the preamble on a fresh session. */
  readonly message: string;
  /** Sends the message: the turn starts (throws the client's error when it cannot). */
  send(): Promise<void>;
  /** The stream is over (its terminal line written, or the caller gone): end what it started. */
  close(aborted: boolean): Promise<void>;
  /** The turn never started (send threw): undo what the dispatch did, and nothing else. */
  undo(): Promise<void>;
}

const PREAMBLE_START = '[agentwire: the conversation so far, oldest first. It is context: do not answer it; answer the new message after it.]';
const PREAMBLE_END = '[agentwire: end of the conversation so far. The new message follows.]';

/** The earlier turns as a clearly marked block before the new message (docs/stream.md, "History"). */
export function withPreamble(history: readonly ChatMessage[], message: string): string {
  if (history.length === 0) return message;
  const turns = history.map((m) => `<${m.role}>\n${m.content}\n</${m.role}>`);
  return [PREAMBLE_START, ...turns, PREAMBLE_END, '', message].join('\n');
}

/** `daemon` is the daemon's own policy; its `ask` is deny here, since nobody can be asked. */
export function streamPolicy(permissions: StreamPermissions | undefined, daemonPolicy: PermissionPolicy): 'allow' | 'deny' {
  const policy = permissions === undefined || permissions === 'daemon' ? daemonPolicy : permissions;
  return policy === 'allow' ? 'allow' : 'deny';
}

export async function openStreamDispatch(sessions: SessionManager, body: StreamRequest, daemonPolicy: PermissionPolicy): Promise<StreamDispatch> {
  const last = body.messages.at(-1)!;
  if (last.role !== 'user' || last.content.trim() === '') {
    throw new ApiError('invalid_request', 'The last of `messages` is the new message: it must have role "user" and some content.', { field: 'body.messages' });
  }
  const policy = streamPolicy(body.permissions, daemonPolicy);
  if (body.sessionId !== undefined) return continued(sessions.get(body.sessionId), body, last.content, policy);
  if (body.agent === undefined) throw new ApiError('invalid_request', 'Say which `agent` runs a fresh session (or name a `sessionId` to continue).', { field: 'body.agent' });
  const { messages, sessionId, keepSession, permissions, ...options } = body;
  const request: CreateSessionRequest = { ...options, agent: body.agent, permissionPolicy: policy };
  const session = await sessions.create(undefined, request);
  const message = withPreamble(messages.slice(0, -1), last.content);
  return {
    session,
    created: true,
    message,
    send: async () => void (await session.send({ message })),
    close: async (aborted) => {
      if (!keepSession) return session.terminate();
      if (aborted) await interruptRunning(session);
    },
    undo: () => session.terminate(),
  };
}

/** A session agentwire holds: the new message only; its own policy stands, but an `ask` is answered by the dispatch's. */
function continued(session: Session, body: StreamRequest, message: string, policy: 'allow' | 'deny'): StreamDispatch {
  if (body.agent !== undefined && body.agent !== session.request.agent) {
    throw new ApiError('invalid_request', `Session '${session.id}' runs ${session.request.agent}, not ${body.agent}.`, { field: 'body.agent', sessionId: session.id });
  }
  let stop = (): void => {};
  if (session.info().permissionPolicy === 'ask') {
    const runner = new HitlPolicyRunner({ policy, timeoutMs: 0 }, {
      permission: (id, reply, reason) => void session.replyPermission(id, reply, reason).catch(() => {}),
      question: (id, answers, reason) => void session.replyQuestion(id, answers, reason).catch(() => {}),
    });
    stop = session.log.listen((event) => runner.observe(event));
  }
  return {
    session,
    created: false,
    message,
    send: async () => void (await session.send({ message })),
    close: async (aborted) => {
      stop();
      // The caller went away: its turn stops, the session (not this dispatch's) stays.
      if (aborted) await interruptRunning(session);
    },
    // Refused (a turn of someone else's running, say): that turn is none of this dispatch's business.
    undo: async () => stop(),
  };
}

async function interruptRunning(session: Session): Promise<void> {
  if (session.status === 'running' || session.status === 'waiting') await session.interrupt().catch(() => {}); // it may have just ended
}
