// Qwen Code (@qwen-code/qwen-code) as an ACP agent: `qwen --acp`, one process per session, driven
// by the generic ACP driver (src/agents/acp/). What is Qwen's own is here: how it is kept headless
// under the daemon's control and how permissionMode maps onto its approval mode.
//
// - `--approval-mode default`: Qwen Code's own default is `auto`, where a second model call
//   classifies each action and approves what it deems safe; the daemon wants every edit and
//   command asked through session/request_permission instead. acceptEdits, plan and bypass map
//   onto auto-edit, plan and yolo.
// - A system settings file (QWEN_CODE_SYSTEM_SETTINGS_PATH, merged over the user's and the
//   project's own): commands run through child_process rather than node-pty, so their output is
//   in the tool_call_update; no usage statistics, telemetry or self-update (Qwen Code can install
//   a newer version of itself under its home and run that instead of the pinned one).
// - Forks with its own branch request (fork.ts): the conversation up to any completed turn. No
//   steer: a session/prompt while one runs cancels the running one (docs/qwen.md).
//
// Credentials are the OpenAI-compatible provider's: OPENAI_API_KEY, OPENAI_BASE_URL (the tests'
// fake model) and OPENAI_MODEL, from the environment or Qwen's own settings; see docs/qwen.md.
import type { AcpAgentDefinition } from '../acp/definition.js';
import { settingsFile } from '../settings-file.js';
import { qwenFork } from './fork.js';

/** permissionMode → `--approval-mode`. */
const APPROVAL: Record<string, string> = { default: 'default', acceptEdits: 'auto-edit', plan: 'plan', bypass: 'yolo' };

/** What the daemon holds fixed, whatever the user's own settings say. */
export const QWEN_SETTINGS = {
  tools: { shell: { enableInteractiveShell: false } },
  general: { enableAutoUpdate: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
};

export const qwenDefinition: AcpAgentDefinition = {
  id: 'qwen',
  title: 'Qwen Code',
  args: ['--acp'],
  session: async (options) => ({
    args: ['--approval-mode', APPROVAL[options.permissionMode] ?? 'default'],
    env: { QWEN_CODE_SYSTEM_SETTINGS_PATH: await settingsFile('qwen', QWEN_SETTINGS) },
  }),
  permissionModes: ['default', 'acceptEdits', 'plan', 'bypass'],
  fork: qwenFork,
  capabilities: { fork: true, forkAtTurn: true },
};
