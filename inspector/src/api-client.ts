// The Api the page uses, implemented by agentwire-client on the page's own origin. The token (when
// the daemon wants one) goes in the Authorization header of every call, streams included: the
// client reads streams with fetch, never EventSource, so no token ever appears in a URL.
import { createClient, type AgentId } from 'agentwire-client';
import type { Api } from './api.js';
import { RequestLog } from './requests.js';

export function createApi(token: string | undefined): Api {
  const log = new RequestLog();
  const client = createClient({ baseUrl: '', ...(token ? { token } : {}), fetch: log.fetch });
  const session = (id: string) => client.sessions.handle(id);
  return {
    log,
    health: () => client.health(),
    agents: () => client.agents.list(),
    install: (agent) => client.agents.install(agent as AgentId),
    models: (agent) => client.agents.models(agent as AgentId),
    modes: (agent) => client.agents.modes(agent as AgentId),
    sessions: () => client.sessions.list(),
    feedHead: async () => (await client.eventsPage({ limit: 1 })).lastCursor,
    feed: (after, { types, signal }) => client.events({ after, types, signal }),
    create: async (body) => (await client.sessions.create(body)).id,
    info: (id) => session(id).info(),
    // The page keeps following after session.ended (a terminate from elsewhere, a delete), and a
    // stream that is only quiet is not dropped: the daemon's keep-alives say it is alive.
    events: (id, { includeRaw, signal, onReconnect }) =>
      session(id).events({ includeRaw, signal, untilEnded: false, onReconnect: (info) => onReconnect(info.cursor) }),
    send: (id, text) => session(id).send(text),
    deliver: async (id, text, delivery) => {
      await session(id).send(text, { delivery });
    },
    cancelQueued: (id, messageId) => session(id).cancelQueued(messageId),
    fork: async (id, at) => (await session(id).fork({ at })).session.id,
    replyPermission: (id, permissionId, reply) => session(id).replyPermission(permissionId, reply),
    replyQuestion: (id, questionId, answers) => session(id).replyQuestion(questionId, answers),
    rejectQuestion: (id, questionId) => session(id).rejectQuestion(questionId),
    interrupt: (id) => session(id).interrupt(),
    terminate: (id) => session(id).terminate(),
    remove: (id) => client.sessions.delete(id),
  };
}

/**
 * What a daemon that wants a token answers a call without one (GET /v1/sessions): its 401 says
 * where the token is, which the Connect form shows when the page opened with no token at all
 * (nothing else has been refused yet). Undefined if the call succeeded.
 */
export async function answerWithoutToken(): Promise<unknown> {
  try {
    await createClient({ baseUrl: '' }).sessions.list();
    return undefined;
  } catch (err) {
    return err;
  }
}
