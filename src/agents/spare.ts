// What a warm spare can serve, for the drivers whose every session option is fixed once the agent
// is ready (docs/performance.md, "Warm pool"). A driver whose agent takes an option later (per
// turn, per request) compares less; none does yet: each handle binds its options at start.
import type { SpareOptions } from './types.js';

/** The spare serves exactly the options it was started with. */
export function sameSpareOptions(spare: SpareOptions, wanted: SpareOptions): boolean {
  return (
    spare.cwd === wanted.cwd &&
    spare.model === wanted.model &&
    spare.variant === wanted.variant &&
    spare.agentMode === wanted.agentMode &&
    spare.permissionMode === wanted.permissionMode
  );
}
