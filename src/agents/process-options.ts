// Limits every process-backed driver shares; they come from the daemon's Config.
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
}

/** A native stdout line as a converter receives it: parsed JSON, or the text when it is not JSON. */
export function parseNativeLine(text: string, truncated: boolean): unknown {
  if (truncated) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
