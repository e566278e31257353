// Scenarios: what the fake model answers. A scenario is a list of model turns; a turn is a list of
// steps. Which turn a request gets is computed by each protocol from the conversation history it
// carries (see the protocol files); this module picks the scenario, applies error steps and says
// what to answer. It knows nothing of any wire format.
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';

/** Text, streamed in several deltas. */
export interface TextStep {
  text: string;
}
/** Reasoning: Anthropic thinking block, Responses reasoning summary, Chat `reasoning_content`. */
export interface ThinkingStep {
  thinking: string;
}
/** Run a shell command with whatever shell tool the request offers. */
export interface ShellStep {
  tool: 'shell';
  command: string;
  /** For tools that take a description (Claude `Bash`, OpenCode `bash`); default `Run <command>`. */
  description?: string;
}
/** Write a whole file with whatever write tool the request offers (or `apply_patch`). */
export interface WriteStep {
  tool: 'write';
  path: string;
  content: string;
}
/** Call a tool by its exact name: JSON input for function tools, a string for freeform tools. */
export interface CallStep {
  call: string;
  input: Record<string, unknown> | string;
}
/**
 * Answer an HTTP error (or, with `inStream`, fail inside a 200 stream after the steps before this
 * one). `times`: how many requests for this turn fail before the rest of the turn is answered;
 * default every request.
 */
export interface ErrorStep {
  error: number;
  retryAfterMs?: number;
  message?: string;
  times?: number;
  inStream?: boolean;
  /** Provider error type/code override (e.g. `overloaded_error`, `rate_limit_exceeded`). */
  type?: string;
  code?: string;
  /** Anthropic's `x-should-retry` header. */
  shouldRetry?: boolean;
}
/** Pause the answer (mid-stream for streaming requests), e.g. to interrupt a turn in flight. */
export interface SleepStep {
  sleepMs: number;
}

export type Step = TextStep | ThinkingStep | ShellStep | WriteStep | CallStep | ErrorStep | SleepStep;
export type Turn = Step[];
export type Scenario = Turn[];

export const isError = (s: Step): s is ErrorStep => 'error' in s;

/** What to answer for one request. */
export type TurnPlan =
  | { kind: 'steps'; steps: Step[]; scenario: string; turn: number; exhausted: boolean }
  | { kind: 'error'; error: ErrorStep; before: Step[]; scenario: string; turn: number };

export interface ScenarioOptions {
  scenario?: Scenario;
  scenarios?: Record<string, Scenario>;
  /** Answer to requests that offer no tools (titles, summaries). */
  toollessText?: string;
  /** Answer once the scenario has no turn left. */
  doneText?: string;
}

export const DEFAULT_TOOLLESS_TEXT = 'Fake model session';
export const DEFAULT_DONE_TEXT = 'done';

/** Header a client can send to pick a scenario by name. */
export const SCENARIO_HEADER = 'x-fake-scenario';
const MARKER = /\[scenario:\s*([\w.-]+)\s*\]/;

/** Reads a scenario file: JSON, either an array of turns or `{ "turns": [...] }`. */
export function loadScenario(file: string): Scenario {
  const data = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const turns = Array.isArray(data) ? data : (data as { turns?: unknown }).turns;
  if (!Array.isArray(turns)) throw new Error(`${file}: a scenario is an array of turns`);
  return validateScenario(turns, file);
}

/** Checks a scenario's shape and normalises a turn given as one step into a one-step turn. */
export function validateScenario(turns: unknown[], where = 'scenario'): Scenario {
  return turns.map((turn, i) => {
    const steps = Array.isArray(turn) ? turn : [turn];
    return steps.map((step: unknown, j) => {
      if (!isStep(step)) throw new Error(`${where}: turn ${i} step ${j} is not a step: ${JSON.stringify(step)}`);
      return step;
    });
  });
}

function isStep(s: unknown): s is Step {
  if (!s || typeof s !== 'object') return false;
  const o = s as Record<string, unknown>;
  if (typeof o.text === 'string' || typeof o.thinking === 'string') return true;
  if (o.tool === 'shell') return typeof o.command === 'string';
  if (o.tool === 'write') return typeof o.path === 'string' && typeof o.content === 'string';
  if (typeof o.call === 'string') return typeof o.input === 'string' || (!!o.input && typeof o.input === 'object');
  if (typeof o.error === 'number') return true;
  return typeof o.sleepMs === 'number';
}

/** The scenarios of one server, with the per-turn error counters that `times` needs. */
export class ScenarioBook {
  readonly toollessText: string;
  readonly doneText: string;
  private readonly byName = new Map<string, Scenario>();
  private readonly errorsServed = new Map<string, number>();

  constructor(opts: ScenarioOptions) {
    for (const [name, s] of Object.entries(opts.scenarios ?? {})) this.byName.set(name, validateScenario(s, name));
    if (opts.scenario) this.byName.set('default', validateScenario(opts.scenario));
    this.toollessText = opts.toollessText ?? DEFAULT_TOOLLESS_TEXT;
    this.doneText = opts.doneText ?? DEFAULT_DONE_TEXT;
  }

  /**
   * The scenario a request asks for: the `x-fake-scenario` header, else a `[scenario:NAME]` marker
   * anywhere in the request body (the prompt, say), else `default`, else the only one there is.
   */
  select(headers: IncomingHttpHeaders, bodyText: string): string | undefined {
    const header = headers[SCENARIO_HEADER];
    const byHeader = Array.isArray(header) ? header[0] : header;
    if (byHeader && this.byName.has(byHeader)) return byHeader;
    const marked = MARKER.exec(bodyText)?.[1];
    if (marked && this.byName.has(marked)) return marked;
    if (this.byName.has('default')) return 'default';
    if (this.byName.size === 1) return [...this.byName.keys()][0];
    return undefined;
  }

  /** What to answer for turn `turn` of scenario `name`. Counts the error answers it hands out. */
  plan(name: string | undefined, turn: number): TurnPlan {
    const scenario = name === undefined ? undefined : this.byName.get(name);
    const label = name ?? '(none)';
    const steps = scenario?.[turn];
    if (!steps) {
      return { kind: 'steps', steps: [{ text: this.doneText }], scenario: label, turn, exhausted: true };
    }
    const at = steps.findIndex(isError);
    if (at >= 0) {
      const error = steps[at] as ErrorStep;
      const key = `${label}#${turn}`;
      const served = this.errorsServed.get(key) ?? 0;
      if (error.times === undefined || served < error.times) {
        this.errorsServed.set(key, served + 1);
        return { kind: 'error', error, before: steps.slice(0, at), scenario: label, turn };
      }
    }
    const rest = steps.filter((s) => !isError(s));
    return {
      kind: 'steps',
      steps: rest.length ? rest : [{ text: this.doneText }],
      scenario: label,
      turn,
      exhausted: false,
    };
  }
}

/**
 * Counts the model turns already in a history: maximal runs of model-produced entries, where
 * `role(entry)` says 'model', 'other' (breaks a run) or 'skip' (neither). A run at the very end is
 * not counted when `trailingIsPrefill` (Anthropic/Chat prefill of the turn being asked for).
 */
export function countModelTurns<T>(
  history: readonly T[],
  role: (entry: T) => 'model' | 'other' | 'skip',
  trailingIsPrefill: boolean,
): number {
  let turns = 0;
  let inRun = false;
  let lastWasModel = false;
  for (const entry of history) {
    const r = role(entry);
    if (r === 'skip') continue;
    if (r === 'model' && !inRun) turns++;
    inRun = r === 'model';
    lastWasModel = inRun;
  }
  if (trailingIsPrefill && lastWasModel) turns--;
  return turns;
}
