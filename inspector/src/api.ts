// The page's one way to the daemon: agentwire-client, behind the few calls the page makes. The
// client gets the page's recording fetch (requests.ts), so every request can be shown and copied
// as curl, and a dropped event stream is visible the moment it drops.
import type { AgentInfo, CreateSessionRequest, Delivery, FeedEntry, ModelsResponse, ModesResponse, PermissionReply, SessionInfo, UniversalEvent } from './types.js';
import type { RequestLog } from './requests.js';

export interface Health {
  status: string;
  version: string;
  uptimeMs: number;
}

export interface Api {
  readonly log: RequestLog;
  health(): Promise<Health>;
  agents(): Promise<AgentInfo[]>;
  install(agent: string): Promise<void>;
  models(agent: string): Promise<ModelsResponse>;
  modes(agent: string): Promise<ModesResponse>;
  sessions(): Promise<SessionInfo[]>;
  /** The daemon-wide feed's last cursor now (GET /v1/events?limit=1). */
  feedHead(): Promise<number>;
  /** The daemon-wide feed after `after`, only these entry types, live and resumed by itself. */
  feed(after: number, options: { types: readonly string[]; signal: AbortSignal }): AsyncIterable<FeedEntry>;
  /** Creates a session; its id. */
  create(body: CreateSessionRequest): Promise<string>;
  info(id: string): Promise<SessionInfo>;
  events(id: string, options: { includeRaw: boolean; signal: AbortSignal; onReconnect: (cursor: number) => void }): AsyncIterable<UniversalEvent>;
  send(id: string, text: string): Promise<void>;
  /** A message while a turn runs: queued as the next turn, or steered into the running one. */
  deliver(id: string, text: string, delivery: Delivery): Promise<void>;
  cancelQueued(id: string, messageId: string): Promise<void>;
  /** Forks the session after the turn whose turn.ended is at sequence `at`; the new session's id. */
  fork(id: string, at: number): Promise<string>;
  replyPermission(id: string, permissionId: string, reply: PermissionReply): Promise<void>;
  replyQuestion(id: string, questionId: string, answers: string[][]): Promise<void>;
  rejectQuestion(id: string, questionId: string): Promise<void>;
  interrupt(id: string): Promise<void>;
  terminate(id: string): Promise<void>;
  remove(id: string): Promise<void>;
}
