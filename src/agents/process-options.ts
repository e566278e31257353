// Limits every process-backed driver shares; they come from the daemon's Config.
import type { AgentBoundary } from '../process/agent-env.js';
import type { SpawnOptions } from '../process/spawn.js';

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

/** Deeper JSON than this is returned as text (→ agent.unparsed): JSON.parse takes any depth, but
 * JSON.stringify of the result overflows the stack at a few thousand levels, which would take the
 * daemon down when the event is logged. No agent protocol nests anywhere near this deep. */
export const MAX_NATIVE_DEPTH = 256;

/** A native stdout line as a converter receives it: parsed JSON, or the text when it is not JSON. */
export function parseNativeLine(text: string, truncated: boolean): unknown {
  if (truncated) return text;
  // Nesting needs two characters per level, so short lines cannot be too deep: skip the scan.
  if (text.length > MAX_NATIVE_DEPTH * 2 && nestingDepth(text) > MAX_NATIVE_DEPTH) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Deepest bracket nesting outside string literals. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) max = Math.max(max, ++depth);
    else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return max;
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
