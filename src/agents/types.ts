// The contract between the agent-independent daemon and one agent adapter. Everything that knows
// an agent's native format lives behind these types, in src/agents/<agent>/.
import type { AgentBoundary } from '../process/agent-env.js';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type {
  AgentUnparsedData,
  ErrorData,
  PermissionEventData,
  QuestionEventData,
  SessionEndedData,
  SessionStartedData,
  StderrOutput,
  SubagentEndedData,
  SubagentStartedData,
  TurnEndedData,
  TokenUsage,
  TurnStartedData,
  UniversalEvent,
  UniversalItem,
} from '../schema/events.js';
import type { AgentId, Capabilities } from '../schema/agents.js';
import type { Attachment, ModeInfo, ModelList, PermissionMode, PermissionReply } from '../schema/api.js';

/** An item as a converter sees it: identified by a converter-chosen `key`, never by an itm_ id. */
export type DraftItem = Omit<UniversalItem, 'item_id' | 'parent_id'> & {
  /** Stable within the session; the normalizer maps it to the daemon's itm_ id. */
  key: string;
  /** Key of the parent item (a tool item's message), if any. */
  parent_key?: string | null;
};

type Origin = {
  source?: 'agent' | 'daemon';
  synthetic?: boolean;
  /** The key of the sub-agent this was produced in (its subagent.started draft's `key`); the
   *  normalizer maps it to a `subagent_id`. An item keeps the sub-agent it started in. */
  subagent_key?: string | undefined;
};

/** What a converter produces. The normalizer turns drafts into events; the log stamps them. */
export type Draft = Origin &
  (
    | { type: 'session.started'; native_session_id?: string | null; data: z.infer<typeof SessionStartedData> }
    | { type: 'session.ended'; data: SessionEndedData }
    | { type: 'turn.started'; data: TurnStartedData }
    | { type: 'turn.ended'; data: TurnEndedData }
    | { type: 'item.started' | 'item.completed'; item: DraftItem }
    | {
        type: 'item.delta';
        key: string;
        native_item_id: string | null;
        delta: string;
        /** Used only if the delta arrives before its item started (a stub start is synthesised). */
        stub?: Pick<DraftItem, 'kind' | 'role' | 'parent_key'>;
      }
    | { type: 'permission.requested' | 'permission.resolved'; data: PermissionEventData }
    | { type: 'question.requested' | 'question.resolved'; data: QuestionEventData }
    | { type: 'error'; data: z.infer<typeof ErrorData> }
    | { type: 'agent.unparsed'; data: z.infer<typeof AgentUnparsedData> }
    | UsageDraft
    | {
        type: 'subagent.started';
        /** Stable within the session (the agent's own id for the sub-agent, or the launching call's). */
        key: string;
        /** Key of the tool call item that launched it, if known. */
        parent_key: string | null;
        native_subagent_id: string | null;
        data: Pick<SubagentStartedData, 'description' | 'prompt' | 'agent_type' | 'background'>;
      }
    | { type: 'subagent.ended'; key: string; data: Pick<SubagentEndedData, 'outcome' | 'summary'> }
  );

/**
 * Usage of one step of the running turn (a model call), as the agent reports it; the turn's own
 * total still comes with turn.ended's metadata. The normalizer keeps the session's totals.
 */
export interface UsageDraft {
  type: 'usage';
  usage: TokenUsage;
  /** The step's cost in USD, where the agent reports one. */
  cost_usd?: number;
  model?: string;
  /** The agent waits after this step until the daemon says go on (AgentHandle.continueStep). */
  held?: boolean;
}

/** A pure per-agent state machine (rule: Pure converters): no clock, no ids, no I/O, never throws. */
export interface Converter<S = unknown> {
  initial(): S;
  convert(state: S, native: unknown): { state: S; events: Draft[] };
}

export interface StartOptions {
  sessionId: string;
  cwd: string;
  env: Record<string, string>;
  model?: string | undefined;
  variant?: string | undefined;
  agentMode: string;
  permissionMode: string;
  nativeSessionId?: string | undefined;
  /** MCP servers by name, as the client gave them (each driver writes them where its agent reads them). */
  mcp?: Record<string, Record<string, unknown>> | undefined;
  /** The session's logger; drivers log the agent's stderr lines at debug. */
  logger: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn'>;
  /** Start as a fork of another native session instead (POST …/fork); nativeSessionId is then unset. */
  fork?: ForkOptions | undefined;
}

/**
 * What a driver forks from (docs/queue-steer-fork.md). The new native session must hold the
 * parent's conversation up to the end of its turn number `turns` (of `parentTurns` the parent had
 * completed): all of it when they are equal (capability fork), else only the first `turns`
 * (capability forkAtTurn). `point` is what the driver's forkPoint worked out from the parent's
 * events, when it has one. Stored with the fork, so a fork restarted before its agent named its
 * own native session forks again.
 */
export interface ForkOptions {
  nativeSessionId: string;
  turns: number;
  parentTurns: number;
  point?: string | undefined;
}

/** What a warm spare is started with, and what of a create the warm pool compares with it
 *  (src/sessions/warm-pool.ts). A create with its own env, MCP servers or a native session to
 *  resume never gets a spare, so those are not in here. */
export type SpareOptions = Pick<StartOptions, 'cwd' | 'model' | 'variant' | 'agentMode' | 'permissionMode'>;

export interface TurnInput {
  message: string;
  attachments: Attachment[];
}

export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
  stderr: StderrOutput;
  /** True when the daemon asked for the exit (terminate, shutdown). */
  requested: boolean;
}

/** Where a running agent reports to. Calls arrive in stdout order; `exit` comes last. */
export interface AgentSink {
  /** One native message: parsed JSON, or the raw line when it was not JSON. */
  native(message: unknown): void;
  exit(exit: ProcessExit): void;
}

/** One live agent process (or connection) owned by exactly one session. */
export interface AgentHandle {
  readonly pid: number | undefined;
  send(turn: TurnInput): Promise<void>;
  replyPermission(permissionId: string, reply: PermissionReply): Promise<void>;
  /** `answers` null means the question was rejected. */
  replyQuestion(questionId: string, answers: string[][] | null): Promise<void>;
  interrupt(): Promise<void>;
  /** Lets an agent held after a step (UsageDraft.held, capability budgetPause 'step') go on. */
  continueStep?(): Promise<void>;
  /** Gives a message to the running turn (capability steer); absent when the agent cannot. */
  steer?(input: TurnInput): Promise<void>;
  /** Kill the process group and resolve once it has been reaped. */
  terminate(): Promise<void>;
}

/** What a driver is given when it asks its agent what it offers (models, modes). */
export interface QueryContext {
  /** Who the asked agent runs as and the daemon environment it starts from (credentials,
   *  CODEX_HOME, XDG dirs, ...); src/process/agent-env.ts removes the daemon's own variables. */
  boundary: AgentBoundary;
  logger: Pick<FastifyBaseLogger, 'debug' | 'info' | 'warn'>;
  /** Give up after this long; the daemon then answers with the static lists. */
  timeoutMs: number;
}

export interface AgentDriver {
  readonly id: AgentId;
  readonly capabilities: Capabilities;
  readonly converter: Converter<any>;
  /** The agentMode values it accepts; the first is the default. `listModes` may know more. */
  readonly modes: readonly ModeInfo[];
  /** The permissionMode values it honours; the first is the default. */
  readonly permissionModes: readonly PermissionMode[];
  /** Models known without asking the agent: the answer when the agent cannot be asked. */
  readonly models: ModelList;
  /** Asks the agent itself (spawns it); the daemon caches the answer and falls back to `models`. */
  listModels?(ctx: QueryContext): Promise<ModelList>;
  /** Asks the agent for its modes (e.g. custom agents); falls back to `modes`. */
  listModes?(ctx: QueryContext): Promise<ModeInfo[]>;
  /** Set when the agent ships inside the daemon (the mock): nothing to discover or install, and no
   *  credentials needed. GET /v1/agents reports it as installed at `path`. */
  readonly bundled?: { path: string; version: string };
  /** An npm package the agent is installed from when it is not one of the pinned built-ins
   *  (versions.ts): a configured agent's (--acp-agent). `bin` names its node_modules/.bin entry. */
  readonly npmPackage?: { package: string; version: string; bin: string };
  /** For an agent outside the discovery facts (discovery-facts.ts), a configured one: where its
   *  executable is, if anywhere. GET /v1/agents reports it. */
  findExecutable?(): Promise<string | undefined>;
  /** Spawn and resolve once the agent can take a turn; reject with a catalogue error otherwise. */
  start(options: StartOptions, sink: AgentSink): Promise<AgentHandle>;
  /** The warm pool: whether a spare this driver started with `spare` (the daemon's defaults) can
   *  serve a session that asks for `wanted`; what is fixed at spawn differs per agent. Absent: the
   *  agent keeps no spares (--warm refuses it). */
  spareServes?(spare: SpareOptions, wanted: SpareOptions): boolean;
  /**
   * A fork needs something native the daemon cannot know (a message id at the branch point): found
   * here, purely, in the parent's events up to the branch point (with `raw`). Returns undefined
   * when the events do not have it (the fork is then refused as fork_unsupported).
   */
  forkPoint?(events: readonly UniversalEvent[], turns: number): string | undefined;
}
