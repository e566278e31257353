// What an agent process inherits from the daemon (the Untrusted agent, untrusted web rule;
// docs/security.md). The agent is untrusted: a prompt-injected agent that learnt the daemon's token could answer its own
// permission requests over HTTP. So an agent's environment is the daemon's environment less
// everything the daemon reads for itself, plus what its session (or its driver) adds; and, with
// --agent-user, it runs as another OS user. Every process of an agent's code is spawned with
// agentProcessOptions: sessions (src/process/spawn.ts), model and mode queries, version checks.
import type { AgentUser } from './agent-user.js';

/** Who agents run as and the environment they start from; one per daemon. */
export interface AgentBoundary {
  /** The daemon's own environment, before anything is removed from it. */
  env: NodeJS.ProcessEnv;
  /** The OS user agents run as (--agent-user); absent: the daemon's own user. */
  user?: AgentUser | undefined;
}

/** Names src/config.ts reads: every AGENTWIRE_* option, and LOG_LEVEL (config.test.ts keeps this
 *  in step with the OPTIONS table). */
const DAEMON_PREFIX = 'AGENTWIRE_';
const DAEMON_NAMES = new Set(['LOG_LEVEL']);

/** True for a variable that configures the daemon and so never reaches an agent from its env. */
export function isDaemonVariable(name: string): boolean {
  return name.startsWith(DAEMON_PREFIX) || DAEMON_NAMES.has(name);
}

/**
 * An agent's environment: the daemon's without its own variables; with an agent user, HOME, USER
 * and LOGNAME of that user (the daemon's HOME is not usable by it); then `extra` (the session's
 * `env` and what the driver sets), which wins, and whose `undefined` values remove a variable.
 * `extra` is trusted: it comes from the client (who holds the token) or from the driver.
 */
export function agentEnv(boundary: AgentBoundary, extra: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(boundary.env)) {
    if (value !== undefined && !isDaemonVariable(name)) env[name] = value;
  }
  const user = boundary.user;
  if (user) {
    env.HOME = user.home;
    env.USER = user.name;
    env.LOGNAME = user.name;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** The child_process/execa options that put a process on the agent's side of the boundary:
 *  its whole environment given (never extended from the daemon's), and the agent user's uid and
 *  primary gid (Node's spawn drops supplementary groups when it switches users). */
export function agentProcessOptions(
  boundary: AgentBoundary,
  extra?: Readonly<Record<string, string | undefined>>,
): { env: Record<string, string>; extendEnv: false; uid?: number; gid?: number } {
  const user = boundary.user;
  return { env: agentEnv(boundary, extra), extendEnv: false, ...(user ? { uid: user.uid, gid: user.gid } : {}) };
}

/** The boundary of a daemon that was given no --agent-user, over the process's environment. */
export const defaultBoundary = (): AgentBoundary => ({ env: process.env });
