// Limits every process-backed driver shares; they come from the daemon's Config.
import type { AgentBoundary } from '../process/agent-env.js';
import type { SpawnOptions } from '../process/spawn.js';
import { parseBounded } from '../util/json-limits.js';

export interface ProcessLimits {
  /** Longest native stdout line kept whole, in characters. */
  maxLineChars: number;
  /** Grace between SIGTERM and SIGKILL when a session is terminated. */
  killGraceMs: number;
  /** How long an agent may take to say it is ready. */
  startTimeoutMs: number;
  /** stderr lines kept per process for session.ended. */
  stderrHeadLines: number;
  stderrTailLines: number;
  /** Who agents run as and what of the daemon's environment they get (src/process/agent-env.ts);
   *  createRegistry fills it in. */
  boundary?: AgentBoundary | undefined;
}

/** A native stdout line as a converter receives it: parsed JSON, or the text when it is not JSON
 * or nests deeper than the store's bound (src/util/json-limits.ts; → agent.unparsed). */
export function parseNativeLine(text: string, truncated: boolean): unknown {
  if (truncated) return text;
  const parsed = parseBounded(text);
  return 'value' in parsed ? parsed.value : text;
}

/** The spawn options every process-backed driver takes from the limits and the session's logger. */
export function processSpawnOptions(
  limits: ProcessLimits,
  logger: { debug(obj: object, msg: string): void },
): Pick<SpawnOptions, 'maxLineChars' | 'killGraceMs' | 'stderrHeadLines' | 'stderrTailLines' | 'onStderrLine' | 'boundary'> {
  return {
    boundary: limits.boundary,
    maxLineChars: limits.maxLineChars,
    killGraceMs: limits.killGraceMs,
    stderrHeadLines: limits.stderrHeadLines,
    stderrTailLines: limits.stderrTailLines,
    onStderrLine: (line) => logger.debug({ stderr: line }, 'agent stderr'),
  };
}
