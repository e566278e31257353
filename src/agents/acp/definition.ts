// What makes one ACP agent: the small per-agent definition a built-in ACP agent (Gemini CLI, Qwen
// Code, …) or a configured one (--acp-agent) is made of. createAcpDriver (driver.ts) turns it into
// an AgentDriver; everything about the protocol itself lives in this folder, everything about one
// agent (its executable, flags, environment, approval settings, install package) in its definition.
//
//   export const fooDefinition: AcpAgentDefinition = {
//     id: 'foo',
//     title: 'Foo CLI',
//     args: ['--acp'],
//     // Headless under our control: a shell whose output reaches the ACP updates, an approval
//     // mode that asks (session/request_permission) instead of auto-approving.
//     session: (o) => ({ args: o.permissionMode === 'bypass' ? ['--yolo'] : [], env: { FOO_NO_TTY: '1' } }),
//     permissionModes: ['default', 'bypass'],
//     capabilities: { reasoning: true },
//   };
//   // registry.ts: foo: createAcpDriver(fooDefinition, options, agentLocator('foo', 'Foo CLI', config, env))
import type { Capabilities } from '../../schema/agents.js';
import type { ModeInfo, ModelList, PermissionMode } from '../../schema/api.js';
import type { UniversalEvent } from '../../schema/events.js';
import type { ForkOptions, StartOptions } from '../types.js';

/** What a definition adds to one session's process. */
export interface AcpSessionSetup {
  /** Appended to `args`. */
  args?: string[];
  /** Set in the agent's environment; the create request's own `env` wins over these. */
  env?: Record<string, string>;
}

export interface AcpAgentDefinition {
  /** The agent id (AgentId): `POST /v1/sessions {"agent": id}`. */
  id: string;
  /** The agent's name for people, in error messages ("Gemini CLI"). */
  title: string;
  /** The executable's arguments that make it speak ACP on stdio (`--acp`, `acp`, …). */
  args: readonly string[];
  /** Per-session arguments and environment: headless settings, permissionMode → the agent's own
   *  approval setting, credentials locations. May write files (a settings file in a temp dir). */
  session?(options: StartOptions): AcpSessionSetup | Promise<AcpSessionSetup>;
  /** The permissionMode values it honours, default first (`session` maps them); default ['default']. */
  permissionModes?: readonly PermissionMode[];
  /** For agents whose approval setting is an ACP session mode: the mode a permissionMode selects
   *  (session/set_mode) when the session's agentMode is `default`. */
  permissionModeIds?: Partial<Record<PermissionMode, string>>;
  /** Modes known without asking the agent; the agent's own (session/new `modes`) are asked for too. */
  modes?: readonly ModeInfo[];
  /** Models known without asking the agent (the answer when it cannot be asked). */
  models?: ModelList;
  /** Flags of the coverage row the protocol cannot tell (the agent reasons, runs commands, …). */
  capabilities?: Partial<Capabilities>;
  /** An npm package the agent is installed from (configured agents; built-ins use versions.ts). */
  install?: AcpPackage;
  /** How the agent forks a session, for one that does it with a method of its own (ACP's
   *  session/fork is not stable): fork.ts. Set `capabilities.fork`/`forkAtTurn` to match. */
  fork?: AcpForkMethod;
}

/**
 * An agent's own fork request (fork.ts): sent on a connection where the parent's session is open,
 * it answers with a new session holding the parent's conversation, which is then opened like a
 * resumed one. Every part is pure: the converter reads the answer too (the new session id goes
 * into session.started, so a restart resumes the fork, not its parent).
 */
export interface AcpForkMethod {
  /** AgentDriver.forkPoint: what the request needs from the parent's events (with raw) up to its turn `turns`. */
  point?(events: readonly UniversalEvent[], turns: number): string | undefined;
  /** The request that forks `fork.nativeSessionId` after its turn `fork.turns` (at `fork.point`). */
  request(fork: ForkOptions): { method: string; params: Record<string, unknown> };
  /** The new session's id in that request's result; undefined for any other answer. */
  sessionId(result: unknown): string | undefined;
}

export interface AcpPackage {
  package: string;
  /** Exact version. */
  version: string;
  /** The package's bin name (node_modules/.bin/<bin>); default: the command. */
  bin: string;
}
