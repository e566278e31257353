// How Amp is run: ONE process per turn (docs/amp.md says why), all of them on one thread.
//
//   start      nothing runs yet: check AMP_API_KEY, make the session's 0700 directory with the
//              delegate listener, settings file and delegate wrapper (settings.ts)
//   send       `amp -x <prompt> --stream-json-thinking …`, later turns
//              `amp threads continue <T-id> -x <prompt> …`; stdin is closed at once (an open stdin
//              stalls `-x` for 30 s); the thread id comes from the first system/init
//   permission the delegate program blocks on the listener; the driver feeds an
//              `agentwire.permission` message to the converter and answers on the user's reply
//   interrupt  SIGINT: Amp ends the turn with an error result (exit 0); the thread goes on
//   terminate  kill the running turn's group, reject blocked delegates, remove the directory
// A turn's process that ends without a `result` line (an `Error: …` exit) ends the session.
//
// The live session and its state are in session.ts (AmpSession), one turn's process in turn.ts (AmpTurn).
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import { agentLocator } from '../locator.js';
import type { ProcessLimits } from '../process-options.js';
import type { AgentDriver, AgentSink, StartOptions } from '../types.js';
import { ampCapabilities } from './capabilities.js';
import { ampConverter } from './convert.js';
import { AmpSession } from './session.js';

export { ampArgs, promptOf } from './turn.js';

/** Amp's agent modes in this build (`-m`); the mode picks the model. `default` means medium. */
export const AMP_MODES = [
  { id: 'medium', name: 'Medium', description: "Amp's default mode (`-m medium`)." },
  { id: 'low', name: 'Low', description: 'Faster and cheaper (`-m low`).' },
  { id: 'high', name: 'High', description: 'More reasoning (`-m high`).' },
  { id: 'ultra', name: 'Ultra', description: 'The most capable mode (`-m ultra`).' },
];
const MODE_IDS = new Set(AMP_MODES.map((m) => m.id));

/** There is no public model choice: Amp picks the model from the mode. */
const AMP_MODELS = { models: [{ id: 'default', name: "Chosen by Amp from the agentMode (no public model flag)" }], defaultModel: 'default' };

export type LocateAmp = () => Promise<string>;

export function ampLocator(config: Partial<Pick<Config, 'agentsDir' | 'ampBin'>> = {}, env: NodeJS.ProcessEnv = process.env): LocateAmp {
  return agentLocator('amp', 'Amp', config, env);
}

export function createAmpDriver(limits: ProcessLimits, locate: LocateAmp = ampLocator(), daemonEnv: NodeJS.ProcessEnv = process.env): AgentDriver {
  return {
    id: 'amp',
    capabilities: ampCapabilities,
    converter: ampConverter,
    modes: AMP_MODES,
    permissionModes: ['default', 'bypass', 'acceptEdits'],
    models: AMP_MODELS,
    start: (options, sink) => startAmp(options, sink, limits, locate, daemonEnv),
  };
}

/** Checks what Amp cannot honour, finds the CLI and its key, then makes the session (no process yet). */
async function startAmp(options: StartOptions, sink: AgentSink, limits: ProcessLimits, locate: LocateAmp, daemonEnv: NodeJS.ProcessEnv): Promise<AmpSession> {
  const mode = options.agentMode === 'default' ? 'medium' : options.agentMode;
  if (!MODE_IDS.has(mode)) {
    throw new ApiError('invalid_request', `Amp has no agentMode '${options.agentMode}'; use one of ${[...MODE_IDS].join(', ')}.`, { agent: 'amp' });
  }
  if (options.model && options.model !== 'default') {
    throw new ApiError('invalid_request', `Amp picks its model from the agentMode; model '${options.model}' cannot be chosen.`, { agent: 'amp' });
  }
  const executable = await locate();
  const apiKey = options.env.AMP_API_KEY || daemonEnv.AMP_API_KEY;
  if (!apiKey) {
    // Without a key the CLI starts an interactive login on stdout and waits forever.
    throw new ApiError('agent_start_failed', 'Amp needs AMP_API_KEY (in the session env or the daemon env); without it the CLI waits for an interactive login.', {
      agent: 'amp',
    });
  }
  return AmpSession.start(options, sink, limits, { executable, apiKey, mode });
}
