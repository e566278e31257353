// How Claude Code is run: ONE long-lived `claude -p` process per session, stream-json both ways,
// permission prompts over stdio (`--permission-prompt-tool stdio`). Protocol facts (2.1.337) are in
// test/agents/claude/fixtures/recorded/README.md; the shapes written here are the Agent SDK's.
//
//   start      spawn, write the `initialize` control_request, ready = its control_response
//   send       one `user` line (text, images as base64 blocks, other attachments named by path)
//   replies    a `control_response` to the CLI's `can_use_tool` control_request, found by its
//              request_id (which the converter uses as the permission / question id)
//   interrupt  our own `interrupt` control_request: the turn ends with a `result`, the process stays
//   steer      a `user` line with a `uuid` while a turn runs (convert-steer.ts follows where it lands)
//   fork       --resume <parent> --fork-session --resume-session-at <its last assistant uuid> (fork.ts)
//
// The live session, its state and the start-up are in session.ts (ClaudeSession); what a turn
// and an answer are written as is in input.ts.
import type { Config } from '../../config.js';
import { agentLocator } from '../locator.js';
import type { ProcessLimits } from '../process-options.js';
import { sameSpareOptions } from '../spare.js';
import type { AgentDriver, StartOptions } from '../types.js';
import { claudeCapabilities } from './capabilities.js';
import { claudeConverter } from './convert.js';
import { askClaude, modelsFrom, modesFrom } from './offerings.js';
import { claudeArgsFork, claudeForkPoint } from './fork.js';
import { ClaudeSession } from './session.js';

export { questionAnswers, userLine } from './input.js';

export const CLAUDE_BASE_ARGS = [
  '-p',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--verbose',
  '--include-partial-messages',
  '--permission-prompt-tool',
  'stdio',
];

/** `default` runs Claude Code's own main agent; any other agentMode names an agent (`--agent`),
 *  built in or the user's, as listed by the CLI (offerings.ts). Plan-only work is permissionMode `plan`. */
const CLAUDE_MODES = [{ id: 'default', name: 'Default', description: "Claude Code's main agent (no --agent)." }];

/** The aliases `--model` accepts on 2.1.337 and their effort levels, as its initialize answer lists
 *  them (any full model id is passed through too). Used when the CLI cannot be asked. */
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];
const CLAUDE_MODELS = {
  models: [
    { id: 'default', name: 'Default (recommended)', variants: EFFORTS },
    { id: 'opus', name: 'Opus', variants: EFFORTS },
    { id: 'sonnet', name: 'Sonnet', variants: EFFORTS },
    { id: 'haiku', name: 'Haiku', variants: EFFORTS },
  ],
  defaultModel: 'default',
};

/** Resolves the claude executable, or throws a catalogue error. */
export type LocateClaude = () => Promise<string>;

/** The default locator: --claude-bin, the agents dir's install, PATH (src/agents/discovery.ts). */
export function claudeLocator(config: Partial<Pick<Config, 'agentsDir' | 'claudeBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateClaude {
  return agentLocator('claude', 'Claude Code', config, env);
}

export function createClaudeDriver(limits: ProcessLimits, locate: LocateClaude = claudeLocator()): AgentDriver {
  return {
    id: 'claude',
    capabilities: claudeCapabilities,
    converter: claudeConverter,
    modes: CLAUDE_MODES,
    permissionModes: ['default', 'plan', 'bypass', 'acceptEdits'],
    models: CLAUDE_MODELS,
    listModels: async (ctx) => modelsFrom(await askClaude(await locate(), ctx)),
    listModes: async (ctx) => modesFrom(await askClaude(await locate(), ctx)),
    start: async (options, sink) => ClaudeSession.start(options, sink, limits, await locate(), claudeArgs(options)),
    // cwd, model, effort, agent and permission mode are fixed on its command line at spawn.
    spareServes: sameSpareOptions,
    forkPoint: claudeForkPoint,
  };
}

/** The argv after the executable for one session. */
export function claudeArgs(options: Pick<StartOptions, 'model' | 'variant' | 'agentMode' | 'permissionMode' | 'nativeSessionId' | 'mcp' | 'fork'>): string[] {
  const args = [...CLAUDE_BASE_ARGS];
  if (options.model) args.push('--model', options.model);
  if (options.variant) args.push('--effort', options.variant);
  if (options.agentMode && options.agentMode !== 'default') args.push('--agent', options.agentMode);
  if (options.permissionMode === 'bypass') args.push('--dangerously-skip-permissions');
  else if (options.permissionMode === 'plan' || options.permissionMode === 'acceptEdits') args.push('--permission-mode', options.permissionMode);
  if (options.nativeSessionId) args.push('--resume', options.nativeSessionId);
  else if (options.fork) args.push(...claudeArgsFork(options.fork));
  // Claude takes MCP servers as a JSON document on the command line, for this process only.
  if (options.mcp && Object.keys(options.mcp).length > 0) args.push('--mcp-config', JSON.stringify({ mcpServers: options.mcp }));
  return args;
}
