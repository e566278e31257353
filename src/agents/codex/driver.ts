// How Codex is run: ONE long-lived `codex app-server --strict-config` per session, JSON-RPC over
// stdio (src/agents/json-rpc.ts). Protocol facts (0.171.0) are in
// test/agents/codex/fixtures/recorded/README.md and docs/codex.md; the shapes written here are those of
// `codex app-server generate-json-schema` (v2).
//
//   start      spawn, `initialize` → `initialized`, then `thread/start` (or `thread/resume` with the
//              nativeSessionId, which is the thread id, or `thread/fork` of the parent's thread
//              through the turn forkPoint found: a new thread id) with the MCP servers as `config`
//              (mcp.ts); ready = the thread exists and its MCP servers have started
//   send       `turn/start {threadId, input, effort?, collaborationMode?}` (effort = the session's
//              variant, collaborationMode for agentMode plan: modes.ts): text, images as
//              `localImage` inputs, other attachments named by path in the text
//   replies    a JSON-RPC response to the server's request, found by its id (or the item id):
//              approvals `{decision}`, request_user_input `{answers: {<question id>: {answers}}}`
//   interrupt  `turn/interrupt {threadId, turnId}` with the turn id of the running turn
//   steer      `turn/steer {threadId, expectedTurnId, input}`: the running turn takes the input
//   terminate  every pending server request declined, then the process group killed
//
// permissionMode → thread approvalPolicy + sandbox (docs/codex.md):
//   default      untrusted  + workspace-write     writes and commands (all but known-safe reads) are asked
//   acceptEdits  on-request + workspace-write     writes inside the work dir are not asked
//   plan         on-request + read-only           nothing is written without an approval
//   bypass       never      + danger-full-access  nothing is asked
// (On 0.171.0 `on-request` + `workspace-write` asks nothing for writes in the work dir: the
//  sandbox allows them, so it cannot serve as the asking mode.)
//
// The live session, its state and the start-up are in session.ts (CodexSession); how each server
// request is answered is in server-requests.ts.
import type { Config } from '../../config.js';
import { agentLocator } from '../locator.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, StartOptions } from '../types.js';
import { codexCapabilities } from './capabilities.js';
import { listCodexModels, listCodexModes, type CatalogueDeps } from './offerings.js';
import { codexConverter } from './convert.js';
import { codexForkPoint } from './fork.js';
import { codexMcpServers } from './mcp.js';
import { CODEX_MODES } from './modes.js';
import { CODEX_MODELS } from './models.js';
import { CodexSession } from './session.js';

export const CODEX_ARGS = ['app-server', '--strict-config'];
export const CLIENT_INFO = { name: 'agentwire', title: null, version: '0.0.0' };

/** Resolves the codex executable, or throws a catalogue error. */
export type LocateCodex = () => Promise<string>;

/** The default locator: --codex-bin, the agents dir's install, PATH (src/agents/discovery.ts). */
export function codexLocator(config: Partial<Pick<Config, 'agentsDir' | 'codexBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateCodex {
  return agentLocator('codex', 'Codex', config, env);
}

export function createCodexDriver(limits: ProcessLimits, locate: LocateCodex = codexLocator(), onQuerySpawn?: (pid: number | undefined) => void): AgentDriver {
  const catalogue: CatalogueDeps = { limits, locate, args: CODEX_ARGS, clientInfo: CLIENT_INFO, ...(onQuerySpawn ? { onSpawn: onQuerySpawn } : {}) };
  return {
    id: 'codex',
    capabilities: codexCapabilities,
    converter: codexConverter,
    modes: CODEX_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: CODEX_MODELS,
    listModels: (ctx) => listCodexModels(ctx, catalogue),
    listModes: (ctx) => listCodexModes(ctx, catalogue),
    forkPoint: codexForkPoint,
    start: async (options, sink) =>
      CodexSession.start(options, sink, limits, { executable: await locate(), args: CODEX_ARGS, clientInfo: CLIENT_INFO, thread: threadParams(options) }),
    // The app-server could take another cwd per thread, but a spare's thread is started already
    // (that is most of its start-up): its cwd, policy and model are fixed with it.
    spareServes: sameSpareOptions,
  };
}

/** thread/start's approvalPolicy and sandbox for a permissionMode (see the table at the top). */
export function codexPolicy(permissionMode: string): { approvalPolicy: string; sandbox: string } {
  switch (permissionMode) {
    case 'bypass':
      return { approvalPolicy: 'never', sandbox: 'danger-full-access' };
    case 'acceptEdits':
      return { approvalPolicy: 'on-request', sandbox: 'workspace-write' };
    case 'plan':
      return { approvalPolicy: 'on-request', sandbox: 'read-only' };
    default:
      return { approvalPolicy: 'untrusted', sandbox: 'workspace-write' };
  }
}

/** thread/start's (and thread/resume's) params for a session: its cwd, the permissionMode's policy,
 *  the model and the session's MCP servers (as `config`, mcp.ts). */
export function threadParams(options: Pick<StartOptions, 'cwd' | 'permissionMode' | 'model' | 'mcp'>): Record<string, unknown> {
  const mcpServers = options.mcp && Object.keys(options.mcp).length > 0 ? codexMcpServers(options.mcp) : undefined;
  return {
    cwd: options.cwd,
    ...codexPolicy(options.permissionMode),
    ...(options.model ? { model: options.model } : {}),
    ...(mcpServers ? { config: { mcp_servers: mcpServers } } : {}),
  };
}
