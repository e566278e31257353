// The wire types the page renders: the client's (generated from openapi.json, the daemon's schemas).
import type { AgentInfo, EventOf, PermissionRequest, QuestionRequest } from 'agentwire-client';

export type {
  UniversalEvent,
  UniversalItem,
  ContentPart,
  SessionInfo,
  SessionStatus,
  AgentInfo,
  ModelsResponse,
  ModesResponse,
  CreateSessionRequest,
  Delivery,
  PermissionReply,
  FeedEntry,
  UsageTotals,
  Budget,
} from 'agentwire-client';
export type PermissionEventData = PermissionRequest;
export type QuestionEventData = QuestionRequest;
export type SessionEndedData = EventOf<'session.ended'>['data'];
export type QueuedData = EventOf<'message.queued'>['data'];
export type SubagentStartedData = EventOf<'subagent.started'>['data'];
export type SubagentEndedData = EventOf<'subagent.ended'>['data'];
export type Capabilities = NonNullable<AgentInfo['capabilities']>;
