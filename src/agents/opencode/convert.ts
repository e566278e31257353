// The OpenCode converter: one event of the server's SSE stream (`GET /event`, `{id, type,
// properties}`) → draft events. Pure (rule: Pure converters). The driver passes only the events of its own
// session (and those without one); messages and parts are convert-parts.ts. Every event type of
// the pinned OpenAPI document is either converted here or listed in IGNORED with the reason, so a
// new type shows up as agent.unparsed instead of vanishing.
//
// Turns: the daemon opens a turn when it sends the prompt (nativeTurnStart false: `session.status`
// busy comes several times a turn); `session.idle` ends it, once (it follows `session.status` idle).
import { isAuthStatus, notAuthenticated } from '../auth-error.js';
import type { PermissionEventData, QuestionEventData } from '../../schema/events.js';
import type { Converter, Draft, DraftItem } from '../types.js';
import { unparsedDraft, guardedConverter } from '../unparsed.js';
import { complete, initialParts, messageUpdated, openMessages, partDelta, partUpdated, type PartsState } from './convert-parts.js';
import { childLifecycle, inChild, taskPartDrafts } from './convert-subagents.js';
import { sessionOf } from './route.js';
import {
  Envelope,
  MessageUpdated,
  PartDelta,
  PartUpdated,
  PermissionAsked,
  PermissionReplied,
  QuestionAsked,
  QuestionRejected,
  QuestionReplied,
  SessionCreated,
  SessionError,
  SessionStatus,
  ToolPart,
} from './native.js';

export const LOCATION = 'opencode.convert';

export interface OpencodeState {
  /** The session's own OpenCode id (from session.created or the resume): events of other
   *  sessions are its sub-agents' child sessions (convert-subagents.ts). */
  readonly self: string | null;
  readonly parts: PartsState;
  /** Open permission requests by id (the reply event names only the id). */
  readonly permissions: Readonly<Record<string, PermissionEventData>>;
  readonly questions: Readonly<Record<string, QuestionEventData>>;
  /** The running turn was aborted (MessageAbortedError): turn.ended says so instead of an error. */
  readonly aborted: boolean;
  /** The running turn had a session.error: messages still open at its end failed. */
  readonly failed: boolean;
  /** The server said busy since the last idle: it runs the prompt and will say idle when done. */
  readonly busy: boolean;
  /** Status items so far (keys `status:<n>`). */
  readonly statuses: number;
}

type Out = { state: OpencodeState; events: Draft[] };

const initial = (): OpencodeState => ({ self: null, parts: initialParts(), permissions: {}, questions: {}, aborted: false, failed: false, busy: false, statuses: 0 });

/** Not an OpenCode event: what the driver hands on when it resumes a session (the answer of
 *  GET /session/{id}, as `{type, properties: {sessionID, info}}`), since no session.created comes. */
export const RESUMED = 'agentwire.session.resumed';

/** Not an OpenCode event either: the driver names the session's MCP servers (`{servers: [...]}`)
 *  before anything else, so their tool calls can be tagged with server and tool. */
export const MCP_SERVERS = 'agentwire.mcp.servers';

/** Not an OpenCode event: the driver keeps this session's `always` answer itself and sent OpenCode
 *  `once` (`{requestID}`; grants.ts says why), so the request's resolution still says `always`. */
export const ALWAYS_KEPT = 'agentwire.permission.always_kept';

/** Event types dropped on purpose, with the reason. */
export const IGNORED: Readonly<Record<string, string>> = {
  'server.connected': 'first frame of the stream',
  'server.heartbeat': 'keep-alive every 10 s',
  'session.updated': 'title, summary and token bookkeeping; the turn and items carry what matters',
  'session.diff': "the session's git diff after each summary; file changes are already file_ref parts",
  'session.compacted': 'context compaction bookkeeping',
  'message.removed': 'reverts, which the daemon never asks for',
  'message.part.removed': 'reverts, which the daemon never asks for',
  'file.edited': 'the edit is already the tool part with its file_ref',
  'file.watcher.updated': 'file watcher notification',
  'todo.updated': 'the todowrite checklist; its tool part is already in the stream',
  'command.executed': 'slash commands, which the daemon never runs',
  'permission.v2.asked': 'the v2 API twin of permission.asked',
  'permission.v2.replied': 'the v2 API twin of permission.replied',
  'question.v2.asked': 'the v2 API twin of question.asked',
  'question.v2.replied': 'the v2 API twin of question.replied',
  'question.v2.rejected': 'the v2 API twin of question.rejected',
  'plugin.added': 'instance bootstrap',
  'catalog.updated': 'instance bootstrap',
  'reference.updated': 'instance bootstrap',
  'integration.updated': 'instance bootstrap',
  'integration.connection.updated': 'integration bookkeeping',
  'installation.updated': 'self-update bookkeeping (autoupdate is off)',
  'installation.update-available': 'self-update bookkeeping (autoupdate is off)',
  'project.updated': 'project bookkeeping',
  'project.directories.updated': 'project bookkeeping',
  'vcs.branch.updated': 'git branch bookkeeping',
  'lsp.updated': 'language server bookkeeping',
  'lsp.client.diagnostics': 'language server bookkeeping',
  'mcp.tools.changed': 'MCP tool list bookkeeping',
  'mcp.browser.open.failed': 'an MCP OAuth browser could not be opened (no browser here)',
  'pty.created': 'terminals, which the daemon never opens',
  'pty.updated': 'terminals, which the daemon never opens',
  'pty.exited': 'terminals, which the daemon never opens',
  'pty.deleted': 'terminals, which the daemon never opens',
  'workspace.ready': 'workspaces (experimental), never used',
  'workspace.failed': 'workspaces (experimental), never used',
  'workspace.status': 'workspaces (experimental), never used',
  'worktree.ready': 'worktrees, never used',
  'worktree.failed': 'worktrees, never used',
  'models-dev.refreshed': 'the models.dev catalogue was refetched',
  'tui.prompt.append': 'commands for the terminal UI, which is not running',
  'tui.command.execute': 'commands for the terminal UI, which is not running',
  'tui.toast.show': 'commands for the terminal UI, which is not running',
  'tui.session.select': 'commands for the terminal UI, which is not running',
  'global.disposed': 'instance shutdown; the process exit reports the end',
  'server.instance.disposed': 'instance shutdown; the process exit reports the end',
};
/** The experimental event system (`session.next.*`, off unless OPENCODE_EXPERIMENTAL_EVENT_SYSTEM) repeats the v1 events. */
const IGNORED_PREFIX = 'session.next.';

export const opencodeConverter: Converter<OpencodeState> = guardedConverter(LOCATION, initial, convertEvent);

function convertEvent(state: OpencodeState, native: unknown): Out {
  if (typeof native === 'string') return { state, events: [unparsed('not JSON', native)] };
  const envelope = Envelope.safeParse(native);
  if (!envelope.success) return { state, events: [unparsed('not an event {type, properties}', native)] };
  const { type, properties } = envelope.data;
  const owner = sessionOf(native);
  if (state.self !== null && owner !== undefined && owner !== state.self && type !== 'session.created' && type !== RESUMED) {
    // A sub-agent's child session: its work is the sub-agent's; its idle ends the sub-agent only.
    const own = childLifecycle(type, owner, properties);
    if (own) return { state, events: own };
    const out = convertTyped(state, type, properties, native);
    return { state: out.state, events: inChild(owner, out.events) };
  }
  return convertTyped(state, type, properties, native);
}

function convertTyped(state: OpencodeState, type: string, properties: Record<string, unknown>, native: unknown): Out {
  const bad = (issue = 'malformed properties'): Out => ({ state, events: [unparsed(`${type}: ${issue}`, native)] });
  const withParts = (out: { parts: PartsState; events: Draft[] } | undefined): Out => (out ? { state: { ...state, parts: out.parts }, events: out.events } : bad('malformed part'));
  if (HITL_EVENTS.has(type)) return hitlEvent(state, type, properties) ?? bad();
  switch (type) {
    case 'session.created':
    case RESUMED: {
      const p = SessionCreated.safeParse(properties);
      if (!p.success) return bad();
      const { id, directory, version, title } = p.data.info;
      const metadata = defined({ directory, version, title, resumed: type === RESUMED ? true : undefined });
      return { state: { ...state, self: state.self ?? id }, events: [{ type: 'session.started', native_session_id: id, data: { metadata } }] };
    }
    case MCP_SERVERS: {
      const servers = isStringArray((properties as { servers?: unknown } | undefined)?.servers);
      return servers ? { state: { ...state, parts: { ...state.parts, mcpServers: servers } }, events: [] } : bad();
    }
    case 'session.deleted':
      return { state, events: [{ type: 'session.ended', data: { reason: 'completed', terminated_by: 'agent' } }] };
    case 'message.updated': {
      const p = MessageUpdated.safeParse(properties);
      return p.success ? withParts(messageUpdated(state.parts, p.data.info)) : bad();
    }
    case 'message.part.updated': {
      const p = PartUpdated.safeParse(properties);
      if (!p.success) return bad();
      const out = withParts(partUpdated(state.parts, p.data.part));
      const task = p.data.part.type === 'tool' ? ToolPart.safeParse(p.data.part) : undefined;
      return task?.success ? { state: out.state, events: [...out.events, ...taskPartDrafts(task.data)] } : out;
    }
    case 'message.part.delta': {
      const p = PartDelta.safeParse(properties);
      if (!p.success) return bad();
      if (p.data.field !== 'text') return { state, events: [] }; // only text is streamed on 1.18.33; others arrive whole in part.updated
      return withParts(partDelta(state.parts, p.data.messageID, p.data.partID, p.data.delta));
    }
    case 'session.status':
      return sessionStatus(state, properties) ?? bad();
    case 'session.idle':
      return turnEnded(state);
    case 'session.error': {
      const p = SessionError.safeParse(properties);
      if (!p.success) return bad();
      const error = p.data.error;
      if (error?.name === 'MessageAbortedError') return { state: { ...state, aborted: true }, events: [] };
      const message = typeof error?.data?.message === 'string' ? error.data.message : (error?.name ?? 'unknown error');
      const code = `opencode_${error?.name ?? 'error'}`;
      const details = defined({ name: error?.name, ...error?.data });
      // ProviderAuthError: no key for the provider at all; an APIError with 401: the key was refused.
      const auth = error?.name === 'ProviderAuthError' || isAuthStatus(error?.data?.statusCode);
      const events: Draft[] = [auth ? notAuthenticated('opencode', message, { native_code: code, ...details }) : { type: 'error', data: { message, code, details } }];
      // A prompt refused before it ran (unknown agent or model) never gets busy, nor idle: the turn ends here.
      if (!state.busy) events.push({ type: 'turn.ended', data: { metadata: { reason: 'error' } } });
      return { state: { ...state, failed: true }, events };
    }
  }
  if (Object.hasOwn(IGNORED, type) || type.startsWith(IGNORED_PREFIX)) return { state, events: [] };
  return bad('unknown event type');
}

/** The events about permissions and questions, and the driver's note of an `always` it keeps. */
const HITL_EVENTS = new Set<string>([ALWAYS_KEPT, 'permission.asked', 'permission.replied', 'question.asked', 'question.replied', 'question.rejected']);

/** A permission or question event; undefined when its properties are malformed. */
function hitlEvent(state: OpencodeState, type: string, properties: unknown): Out | undefined {
  switch (type) {
    case ALWAYS_KEPT: {
      const id = (properties as { requestID?: unknown } | undefined)?.requestID;
      if (typeof id !== 'string') return undefined;
      const open = state.permissions[id];
      if (!open) return { state, events: [] };
      const kept = { ...open, metadata: { ...asRecord(open.metadata), always_kept_by: 'agentwire' } };
      return { state: { ...state, permissions: { ...state.permissions, [id]: kept } }, events: [] };
    }
    case 'permission.asked': {
      const p = PermissionAsked.safeParse(properties);
      if (!p.success) return undefined;
      const { id, permission, patterns, always, metadata, tool } = p.data;
      const data: PermissionEventData = { permission_id: id, action: permission, status: 'requested', metadata: defined({ patterns, always, ...metadata, tool }) };
      return { state: { ...state, permissions: { ...state.permissions, [id]: data } }, events: [{ type: 'permission.requested', data }] };
    }
    case 'permission.replied': {
      const p = PermissionReplied.safeParse(properties);
      if (!p.success) return undefined;
      const { requestID, reply } = p.data;
      const { [requestID]: open, ...rest } = state.permissions;
      const base = open ?? { permission_id: requestID, action: 'unknown', status: 'requested' as const };
      const metadata = asRecord(base.metadata);
      const data: PermissionEventData = { ...base, status: reply === 'reject' ? 'denied' : 'approved', metadata: { ...metadata, reply: metadata.always_kept_by ? 'always' : reply } };
      return { state: { ...state, permissions: rest }, events: [{ type: 'permission.resolved', data }] };
    }
    case 'question.asked': {
      const p = QuestionAsked.safeParse(properties);
      if (!p.success) return undefined;
      const { id, questions } = p.data;
      const data: QuestionEventData = { question_id: id, prompt: questions.map((q) => q.question).join('\n'), options: questions.flatMap((q) => q.options.map((o) => o.label)), status: 'requested' };
      return { state: { ...state, questions: { ...state.questions, [id]: data } }, events: [{ type: 'question.requested', data }] };
    }
    case 'question.replied':
    case 'question.rejected': {
      const p = type === 'question.replied' ? QuestionReplied.safeParse(properties) : QuestionRejected.safeParse(properties);
      if (!p.success) return undefined;
      const { requestID } = p.data;
      const { [requestID]: open, ...rest } = state.questions;
      const base = open ?? { question_id: requestID, prompt: '', options: [], status: 'requested' as const };
      const answers = 'answers' in p.data ? (p.data.answers as string[][]) : undefined;
      const data: QuestionEventData = answers ? { ...base, status: 'answered', response: answers.map((a) => a.join(', ')).join('; ') } : { ...base, status: 'rejected' };
      return { state: { ...state, questions: rest }, events: [{ type: 'question.resolved', data }] };
    }
  }
  return undefined;
}

/** session.status: busy is noted, idle waits for session.idle, a retry becomes a status item;
 *  undefined when its properties are malformed. */
function sessionStatus(state: OpencodeState, properties: unknown): Out | undefined {
  const p = SessionStatus.safeParse(properties);
  if (!p.success) return undefined;
  const status = p.data.status;
  if (status.type === 'busy') return { state: { ...state, busy: true }, events: [] }; // the daemon opened the turn already
  if (status.type === 'idle') return { state, events: [] }; // session.idle follows
  const n = state.statuses + 1;
  const item: DraftItem = { key: `status:${n}`, native_item_id: null, kind: 'status', role: null, content: [{ type: 'status', label: 'retry', detail: `attempt ${status.attempt}: ${status.message}` }], status: 'completed' };
  return { state: { ...state, statuses: n }, events: [{ type: 'item.completed', item }] };
}

/** session.idle: messages still open complete (an aborted step has none of its closing events), then the turn ends. */
function turnEnded(state: OpencodeState): Out {
  const events: Draft[] = [];
  let parts = state.parts;
  for (const id of openMessages(parts)) {
    const out = complete(parts, id, state.aborted || state.failed ? 'failed' : 'completed');
    parts = out.parts;
    events.push(...out.events);
  }
  events.push({ type: 'turn.ended', data: { metadata: { reason: state.aborted ? 'interrupted' : state.failed ? 'error' : 'completed' } } });
  return { state: { ...initial(), self: state.self, statuses: state.statuses }, events };
}

function defined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export const unparsed = (error: string, native: unknown): Draft => unparsedDraft(LOCATION, error, native);

function isStringArray(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}
