// createClient(): the entry point. `agents` and `sessions` group the REST calls; a session's own
// calls (messages, events, turns, replies) live on its Session handle.
import { feedQuery, followFeed, type FeedOptions, type FeedPageOptions } from './feed-stream.js';
import { sandboxStream, type StreamOptions } from './sandbox-stream.js';
import { Session } from './session.js';
import { CREATE_TIMEOUT_MS, Transport, type ClientOptions } from './transport.js';
import type {
  AgentId,
  AgentInfo,
  CallOptions,
  CreateSessionRequest,
  FeedEntry,
  FeedResponse,
  HealthResponse,
  InstallAgentRequest,
  ModelsResponse,
  ModesResponse,
  SessionInfo,
  StreamLine,
  StreamRequest,
} from './types.js';

export { CREATE_TIMEOUT_MS } from './transport.js';
/** An install downloads a CLI from the npm registry. */
export const INSTALL_TIMEOUT_MS = 600_000;

export interface AgentwireClient {
  readonly baseUrl: string;
  health(options?: CallOptions): Promise<HealthResponse>;
  /**
   * The daemon-wide feed: every session's events and deletions in commit order, from a cursor,
   * resumed across dropped connections and daemon restarts (Last-Event-ID): see FeedOptions.
   */
  events(options?: FeedOptions): AsyncGenerator<FeedEntry, void, undefined>;
  /** One page of the feed (GET /v1/events): `cursor` is where it ends, `lastCursor` the feed's last entry. */
  eventsPage(options?: FeedPageOptions): Promise<FeedResponse>;
  /**
   * POST /stream: one turn of a chat dispatch (the recent turns, the new message last, the agent
   * and its options, or a sessionId), as its log, step, result and error lines; it ends after the
   * result or error line. Abort `signal` (or leave the loop) to stop the turn (docs/stream.md).
   */
  stream(body: StreamRequest, options?: StreamOptions): AsyncGenerator<StreamLine, void, undefined>;
  agents: {
    list(options?: CallOptions): Promise<AgentInfo[]>;
    install(agent: AgentId, request?: InstallAgentRequest & CallOptions): Promise<void>;
    models(agent: AgentId, options?: CallOptions): Promise<ModelsResponse>;
    modes(agent: AgentId, options?: CallOptions): Promise<ModesResponse>;
  };
  sessions: {
    /** The daemon picks the id (`sess_…`). */
    create(request: CreateSessionRequest, options?: CallOptions): Promise<Session>;
    /** You pick the id; 409 `session_exists` if it is taken. */
    create(id: string, request: CreateSessionRequest, options?: CallOptions): Promise<Session>;
    /** A handle for an existing session (checked: 404 `session_not_found` otherwise). */
    get(id: string, options?: CallOptions): Promise<Session>;
    /** A handle without asking the daemon anything. */
    handle(id: string): Session;
    /** Every session, newest first. */
    list(options?: CallOptions): Promise<SessionInfo[]>;
    delete(id: string, options?: CallOptions): Promise<void>;
  };
}

export function createClient(options: ClientOptions): AgentwireClient {
  const transport = new Transport(options);
  const handle = (id: string) => new Session(transport, id);

  async function create(idOrRequest: string | CreateSessionRequest, second?: CreateSessionRequest | CallOptions, third?: CallOptions): Promise<Session> {
    if (typeof idOrRequest === 'string') {
      const call = { timeoutMs: CREATE_TIMEOUT_MS, ...third };
      await transport.call('post', '/v1/sessions/{id}', { id: idOrRequest }, { ...call, body: second as CreateSessionRequest });
      return handle(idOrRequest);
    }
    const call = { timeoutMs: CREATE_TIMEOUT_MS, ...(second as CallOptions | undefined) };
    const info = await transport.call('post', '/v1/sessions', {}, { ...call, body: idOrRequest });
    return handle(info.sessionId);
  }

  return {
    baseUrl: transport.baseUrl,
    health: (call) => transport.call('get', '/v1/health', {}, call),
    events: (feedOptions) => followFeed(transport, feedOptions),
    stream: (body, streamOptions) => sandboxStream(transport, body, streamOptions),
    eventsPage: ({ signal, timeoutMs, ...page } = {}) => transport.call('get', '/v1/events', {}, { signal, timeoutMs, query: feedQuery(page) }),
    agents: {
      list: async (call) => (await transport.call('get', '/v1/agents', {}, call)).agents,
      install: async (agent, request = {}) => {
        const { signal, timeoutMs, ...body } = request;
        await transport.call('post', '/v1/agents/{agent}/install', { agent }, { signal, timeoutMs: timeoutMs ?? INSTALL_TIMEOUT_MS, body });
      },
      models: (agent, call) => transport.call('get', '/v1/agents/{agent}/models', { agent }, call),
      modes: (agent, call) => transport.call('get', '/v1/agents/{agent}/modes', { agent }, call),
    },
    sessions: {
      create: create as AgentwireClient['sessions']['create'],
      get: async (id, call) => {
        await transport.call('get', '/v1/sessions/{id}', { id }, call);
        return handle(id);
      },
      handle,
      list: async (call) => (await transport.call('get', '/v1/sessions', {}, call)).sessions,
      delete: (id, call) => handle(id).delete(call),
    },
  };
}
