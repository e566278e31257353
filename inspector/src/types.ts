// The wire types the page renders: the client's (generated from openapi.json, the daemon's schemas).
import type { EventOf, PermissionRequest, QuestionRequest } from 'agentwire-client';

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
  PermissionReply,
  FeedEntry,
} from 'agentwire-client';
export type PermissionEventData = PermissionRequest;
export type QuestionEventData = QuestionRequest;
export type SessionEndedData = EventOf<'session.ended'>['data'];
