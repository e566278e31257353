// The generic ACP driver: ONE long-lived agent process per session speaking the Agent Client
// Protocol (JSON-RPC 2.0 over stdio, connection.ts). Built from a per-agent definition
// (definition.ts); nothing here knows one agent from another.
//
//   start      spawn <command> <args> <definition session args>, initialize, session/new (or
//              session/resume / session/load with the nativeSessionId, which is ACP's sessionId;
//              or the definition's fork request, fork.ts), then the session's agentMode and model
//              (settings.ts); ready = the session exists
//   send       session/prompt {sessionId, prompt} (input.ts); its answer, at the end of the turn,
//              carries the stop reason and ends the turn (the converter reads it): send does not
//              wait for it
//   replies    the answer to session/request_permission, found by its JSON-RPC id: the offered
//              option of the reply's kind (permission.ts)
//   interrupt  session/cancel; every pending permission request is answered `cancelled` (the
//              protocol asks it); the prompt then answers with stopReason cancelled
//   terminate  pending permission requests answered `cancelled`, then the process group killed
// Any other request from the agent (fs/*, terminal/*, newer ones) is answered at once with
// JSON-RPC "method not found": an unanswered request stalls an agent until it times out.
// The live session, its state and the start-up are in session.ts (AcpSession).
import type { Capabilities } from '../../schema/agents.js';
import type { ProcessLimits } from '../process-options.js';
import type { AgentDriver } from '../types.js';
import { listAcpModels, listAcpModes } from './offerings.js';
import { acpBaseCapabilities, announcedCapabilities } from './capabilities.js';
import { createAcpConverter } from './convert.js';
import type { AcpAgentDefinition } from './definition.js';
import type { InitializeResult } from './native.js';
import { AcpSession, type LocateAcp } from './session.js';

export type { AcpDeps, LocateAcp } from './session.js';

export function createAcpDriver(definition: AcpAgentDefinition, limits: ProcessLimits, locate: LocateAcp, find?: () => Promise<string | undefined>): AgentDriver {
  /** What the agent announced in its last initialize: the coverage row follows it. */
  let announced: Partial<Capabilities> = {};
  const learn = (init: InitializeResult) => void (announced = announcedCapabilities(init));
  const deps = { definition, limits, locate, learn };
  return {
    id: definition.id,
    get capabilities(): Capabilities {
      return { ...acpBaseCapabilities, ...definition.capabilities, ...announced };
    },
    converter: createAcpConverter({ forkedSessionId: definition.fork?.sessionId, agent: definition.id }),
    modes: definition.modes ?? [{ id: 'default', name: 'Default', description: "The agent's own default mode" }],
    permissionModes: definition.permissionModes ?? ['default'],
    models: definition.models ?? { models: [] },
    listModels: (ctx) => listAcpModels(ctx, deps),
    listModes: (ctx) => listAcpModes(ctx, deps),
    ...(definition.install ? { npmPackage: definition.install } : {}),
    ...(find ? { findExecutable: find } : {}),
    ...(definition.fork?.point ? { forkPoint: definition.fork.point } : {}),
    start: (options, sink) => AcpSession.start(options, sink, deps),
  };
}
