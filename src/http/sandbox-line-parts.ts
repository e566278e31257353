// The parts one line of POST /stream is built from (docs/stream.md), for sandbox-lines.ts: a
// tool call's arguments as a step's `args`, the shapes of log and finished step lines, a crash's
// stderr as log lines, and the stable error code of a turn that did not complete. Pure, like the
// mapping that uses them: no clock, no ids, universal events only.
import type { StderrOutput, UniversalItem } from '../schema/events.js';
import type { StreamErrorCode, StreamLine, StreamStepLine } from '../schema/sandbox-stream.js';

/** A step's result and a log line's text are cut here: a line stays a line, not a file. */
export const MAX_TEXT = 64 * 1024;

export interface OpenStep {
  id: string;
  name: string;
  startedAt: number;
  /** Its running line went out. A call that starts without arguments waits for them (argsOf). */
  announced: boolean;
  args: unknown;
}

export const cut = (text: string, max = MAX_TEXT): string => (text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`);
export const textOf = (item: UniversalItem): string => item.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return cut(text);
  }
}

const isEmpty = (args: unknown): boolean =>
  args === undefined || args === null || args === '' || (typeof args === 'object' && !Array.isArray(args) && Object.keys(args).length === 0);

/**
 * A call's args: its arguments, or, when it reports none, the title its item carries as text (an
 * ACP agent's call names what it does in its title: Gemini CLI sends no other input). `undefined`
 * while the call is still coming and has neither: its running line waits (Qwen Code announces a
 * call before its input).
 */
export function argsOf(part: { arguments: string }, item: UniversalItem): unknown {
  const args = parseArgs(part.arguments);
  if (!isEmpty(args) || item.status === 'in_progress') return isEmpty(args) ? undefined : args;
  const title = textOf(item);
  return title === '' ? args : cut(title);
}

export function log(level: 'debug' | 'info' | 'warn' | 'error', message: string, ts: number): StreamLine {
  return { type: 'log', level, message, ts };
}

export function endStep(step: OpenStep, failed: boolean, output: string, ts: number): StreamStepLine {
  const durationMs = Math.max(0, ts - step.startedAt);
  return failed
    ? { type: 'step', id: step.id, name: step.name, status: 'failed', error: output, durationMs, ts }
    : { type: 'step', id: step.id, name: step.name, status: 'succeeded', result: output, durationMs, ts };
}

/** Who decided, when the daemon did: ` (by policy)`, ` (by timeout)`, ` (turn_ended)`. */
export function by(metadata: unknown): string {
  if (typeof metadata !== 'object' || metadata === null) return '';
  const m = metadata as { by?: unknown; reason?: unknown; metadata?: unknown };
  const who = m.by ?? m.reason ?? (typeof m.metadata === 'object' && m.metadata !== null ? ((m.metadata as { reason?: unknown }).reason ?? (m.metadata as { by?: unknown }).by) : undefined);
  return typeof who === 'string' ? ` (by ${who})` : '';
}

/** A crashed agent's stderr, as error log lines before its error line. */
export function stderrLines(stderr: StderrOutput | undefined, ts: number): StreamLine[] {
  if (!stderr) return [];
  const parts = [stderr.head, stderr.tail].filter((s): s is string => !!s && s.length > 0);
  if (stderr.truncated && stderr.total_lines) parts.splice(1, 0, `[stderr: ${stderr.total_lines} lines, the middle left out]`);
  return parts.map((text) => log('error', `agent stderr: ${cut(text)}`, ts));
}

/** The stable code of a turn that did not complete (docs/stream.md, "Error codes"). */
export function errorCode(reason: string, crashed: boolean, lastCode: string | undefined): StreamErrorCode {
  switch (reason) {
    case 'interrupted':
      return 'interrupted';
    case 'terminated':
      return 'terminated';
    case 'agent_exited':
      return 'agent_exited';
    case 'budget_exceeded':
      return 'budget_exceeded';
    default:
      if (crashed) return 'agent_crashed';
      // The daemon could not get the turn to the agent (or back): not the model's failure.
      return lastCode && DAEMON_FAILURES.has(lastCode) ? 'agent_error' : 'model_error';
  }
}

const DAEMON_FAILURES = new Set(['turn_not_delivered', 'native_resume_failed', 'daemon_restarted', 'daemon_stopping']);
