// What a person starting the daemon must hear about its trust boundary (docs/security.md): who can
// drive it besides its clients. Computed from the config and the process's identity, so the rules
// are unit-tested without starting anything; main.ts logs each line as a warning.
import { isLoopbackHost, type Config } from './config.js';
import type { DaemonToken } from './daemon-token.js';

export interface ProcessIdentity {
  uid: number | undefined;
}

export function startupWarnings(config: Config, token: DaemonToken, who: ProcessIdentity): string[] {
  const warnings: string[] = [];
  if (token.source === 'none') {
    warnings.push('--no-token: this daemon has no token, so every local process, the agents it runs included, and every page the user opens that reaches it can drive it (create sessions, run commands, answer permission requests)');
    if (!isLoopbackHost(config.host)) warnings.push(`--allow-unauthenticated-network: this daemon listens on ${config.host} with no token, so every machine that reaches that address can drive it too`);
  }
  if (token.source === 'flag') {
    warnings.push('--token on the command line: every local process can read it in /proc/<pid>/cmdline (ps); give it with --token-file (mode 0600) or AGENTWIRE_TOKEN instead');
  }
  if (config.agentUser === undefined) {
    if (who.uid === 0) {
      warnings.push('the daemon runs as root without --agent-user: agents and every tool they run run as root, can read the token and drive the daemon; give them an unprivileged user with --agent-user (docs/security.md)');
    } else if (token.source !== 'none') {
      // Same uid: the agent can read the token file, the daemon's environment and its memory.
      warnings.push(`agents run as this daemon's own user${who.uid === undefined ? '' : ` (uid ${who.uid})`}: an agent can read the token and drive the daemon, answering its own permission requests; run agents as another user with --agent-user (docs/security.md)`);
    }
  }
  return warnings;
}
