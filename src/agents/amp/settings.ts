// The per-session files Amp is pointed at: a settings file (`--settings-file`) whose
// `amp.permissions` rules route every tool that can change something to the delegate program, and
// the small wrapper script those rules name. Amp runs a delegate with no arguments (verified in
// the pinned binary, see docs/amp.md), so the wrapper carries the node executable, delegate.js and
// the session's socket and secret; it lives in the session's 0700 directory.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DELEGATE = fileURLToPath(new URL('./delegate.js', import.meta.url));

/** Amp's tools that only read or think: allowed without asking, as Claude Code's default does. */
export const READ_ONLY_TOOLS = [
  'Read', 'Grep', 'glob', 'finder', 'look_at', 'read_thread', 'find_thread', 'read_web_page', 'web_search',
  'read_mcp_resource', 'mermaid', 'oracle', 'librarian', 'task_list', 'skill', 'Task', 'handoff',
];
/** Allowed outright under permissionMode acceptEdits. */
export const EDIT_TOOLS = ['create_file', 'edit_file', 'apply_patch', 'undo_edit'];

export interface SessionFiles {
  settingsFile: string;
  delegateScript: string;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export async function writeSessionFiles(
  dir: string,
  options: { permissionMode: string; socketPath: string; secret: string; mcp?: Record<string, Record<string, unknown>> | undefined },
): Promise<SessionFiles> {
  const delegateScript = join(dir, 'delegate.sh');
  const script = `#!/bin/sh\nAGENTWIRE_AMP_SOCKET=${quote(options.socketPath)} AGENTWIRE_AMP_SECRET=${quote(options.secret)} exec ${quote(process.execPath)} ${quote(DELEGATE)}\n`;
  await writeFile(delegateScript, script, { mode: 0o700 });
  await chmod(delegateScript, 0o700);
  const allowed = [...READ_ONLY_TOOLS, ...(options.permissionMode === 'acceptEdits' ? EDIT_TOOLS : [])];
  const permissions = [...allowed.map((tool) => ({ tool, action: 'allow' })), { tool: '*', action: 'delegate', to: delegateScript }];
  const settings: Record<string, unknown> = { 'amp.permissions': permissions };
  if (options.mcp && Object.keys(options.mcp).length > 0) settings['amp.mcpServers'] = options.mcp;
  const settingsFile = join(dir, 'settings.json');
  await writeFile(settingsFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return { settingsFile, delegateScript };
}
