// Gemini CLI (@google/gemini-cli) as an ACP agent: `gemini --acp`, one process per session,
// driven by the generic ACP driver (src/agents/acp/). What is Gemini's own is here: how it is kept
// headless under the daemon's control and how permissionMode maps onto its approval mode.
//
// - `--approval-mode default`: every tool call that is not read-only asks through
//   session/request_permission (once / for this session / reject), which becomes
//   permission.requested; acceptEdits, plan and bypass map onto auto_edit, plan and yolo.
// - GEMINI_PTY_INFO=child_process: the shell tool runs commands through child_process instead of
//   node-pty. Under a pseudo-terminal the result it reports is a screen buffer, which its ACP
//   layer drops: the tool_call_update would carry no output at all.
// - GEMINI_CLI_TRUST_WORKSPACE: the client chose the work dir. In a folder it does not trust,
//   Gemini CLI refuses every approval mode but `default` (bypass would still ask) and ignores the
//   project's settings and MCP servers; the create request's env can set it to 'false' again.
// - GEMINI_CLI_NO_RELAUNCH: Gemini CLI otherwise re-spawns itself as a child Node process to raise
//   its heap limit; one process is the one the daemon owns, signals and reaps.
// - GEMINI_TELEMETRY_ENABLED=false. Its usage statistics can be switched off only in a settings
//   file (privacy.usageStatisticsEnabled); the daemon does not write into the user's, and Gemini
//   accepts a system settings file only when root owns it and every directory above it.
// - Resume is session/load, which Gemini 0.61.0 honours once per session and not within the
//   minute the session began: its own chat files and start-up cleanup, which no argument or
//   variable reaches (docs/gemini.md). A failed load ends the session as native_resume_failed.
// - No steer and no fork (the ACP defaults): a session/prompt while one runs cancels the running
//   one, and Gemini answers neither session/fork nor any fork of its own (docs/gemini.md).
//
// Credentials are Gemini's own: GEMINI_API_KEY (or Vertex AI / a Google login in ~/.gemini), and
// GOOGLE_GEMINI_BASE_URL points it at another endpoint (the tests' fake model); see docs/gemini.md.
import type { AcpAgentDefinition } from '../acp/definition.js';

/** permissionMode → `--approval-mode`. */
const APPROVAL: Record<string, string> = { default: 'default', acceptEdits: 'auto_edit', plan: 'plan', bypass: 'yolo' };

export const GEMINI_ENV = {
  GEMINI_PTY_INFO: 'child_process',
  GEMINI_CLI_TRUST_WORKSPACE: 'true',
  GEMINI_CLI_NO_RELAUNCH: 'true',
  GEMINI_TELEMETRY_ENABLED: 'false',
};

export const geminiDefinition: AcpAgentDefinition = {
  id: 'gemini',
  title: 'Gemini CLI',
  args: ['--acp'],
  session: (options) => ({ args: ['--approval-mode', APPROVAL[options.permissionMode] ?? 'default'], env: GEMINI_ENV }),
  permissionModes: ['default', 'acceptEdits', 'plan', 'bypass'],
};
