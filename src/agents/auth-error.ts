// One error code for "the agent CLI has no valid credentials", whatever the agent: each agent says it
// its own way (Claude Code's result "Not logged in · Please run /login" or "Invalid API key" with the
// subtype `success`, Codex's failed turn with HTTP 401, OpenCode's APIError with statusCode 401, an
// ACP agent's error answer with 401 or UNAUTHENTICATED). Each converter recognises its own (pure,
// from the native message) and makes the error here, so every one has the code
// `agent_not_authenticated`, a message naming the variables to set (the credential variables of
// discovery-facts.ts, the same ones GET /v1/agents checks), and the agent's own words kept.
import { DISCOVERY_FACTS } from './discovery-facts.js';
import type { Draft } from './types.js';
import type { InstallableAgentId } from './versions.js';

export const NOT_AUTHENTICATED = 'agent_not_authenticated';

/** The variables whose absence or wrong value an auth failure of `agent` most likely means. */
export function credentialVariables(agent: string): string[] {
  return (DISCOVERY_FACTS as Partial<Record<string, { credentialEnv: string[] }>>)[agent as InstallableAgentId]?.credentialEnv ?? [];
}

/** The `error` draft for an authentication failure of `agent`, keeping its native code and words. */
export function notAuthenticated(agent: string, nativeMessage: string, details: Record<string, unknown> = {}): Draft {
  const variables = credentialVariables(agent).filter((v) => v.endsWith('_KEY') || v.endsWith('_TOKEN'));
  const set = variables.length === 0 ? "set the agent's API key" : `set ${variables.length === 1 ? variables[0] : `${variables.slice(0, -1).join(', ')} or ${variables.at(-1)}`}`;
  const message = `${agent} is not authenticated (${firstLine(nativeMessage)}): ${set} in the session's env or the daemon's environment, or log in with the agent's own CLI; see docs/real-agents.md`;
  return { type: 'error', data: { message, code: NOT_AUTHENTICATED, details: { ...details, native_message: nativeMessage } } };
}

/** The HTTP status that means the credentials were refused (403 also means other refusals). */
export const isAuthStatus = (status: unknown): boolean => status === 401;

const firstLine = (text: string) => text.split('\n')[0]!.slice(0, 300);
