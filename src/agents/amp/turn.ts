// One Amp turn: ONE `amp -x` process (docs/amp.md says why a process per turn), as an object whose
// state a test can read: its process, whether it printed its `result` line, whether it was
// interrupted. The session (session.ts) starts one per send and is told of its exit.
import { ChildProcess } from '../../process/spawn.js';
import { parseNativeLine, type ProcessLimits, processSpawnOptions } from '../process-options.js';
import type { StartOptions, TurnInput } from '../types.js';

/** How long an interrupted turn may take to print its result before its group is killed. */
export const INTERRUPT_GRACE_MS = 5_000;
/** Longest prompt passed as an argument; longer ones (and ones starting with '-') go on stdin. */
const MAX_ARG_PROMPT = 100_000;

/** The argv of one turn after the executable. */
export function ampArgs(o: { thread: string | null; prompt: string | null; mode: string; bypass: boolean; settingsFile: string }): string[] {
  const args = o.thread ? ['threads', 'continue', o.thread] : [];
  args.push('-x', ...(o.prompt !== null ? [o.prompt] : []), '--stream-json-thinking', '-m', o.mode, '--settings-file', o.settingsFile);
  if (o.bypass) args.push('--dangerously-allow-all'); // hidden from --help, but there (docs/amp.md)
  return args;
}

/** The prompt text: attachments are named by path (Amp reads them with its own tools). */
export function promptOf(turn: TurnInput): string {
  if (turn.attachments.length === 0) return turn.message;
  return `${turn.message}\n\nAttached files:\n${turn.attachments.map((a) => `- ${a.path}`).join('\n')}`;
}

/** What a turn is run with: the session's fixed parts and the thread so far. */
export interface AmpTurnSpec {
  executable: string;
  options: StartOptions;
  limits: ProcessLimits;
  env: Record<string, string>;
  mode: string;
  settingsFile: string;
  thread: string | null;
  /** Every native line, in order (the session learns the thread id from the first system/init). */
  onMessage(message: unknown): void;
}

export class AmpTurn {
  /** The turn printed its `result` line: its exit is the turn's normal end. */
  sawResult = false;
  /** interrupt() was called: an exit without a result is then no crash. */
  interrupted = false;

  /** The turn's process (set as it is spawned). */
  child!: ChildProcess;

  private constructor() {}

  /** Spawns the turn's process; stdin carries a long prompt and is then closed (an open stdin stalls `-x` for 30 s). */
  static async start(turn: TurnInput, spec: AmpTurnSpec): Promise<{ turn: AmpTurn; fed: Promise<void> }> {
    const text = promptOf(turn);
    const viaStdin = text.startsWith('-') || text.length > MAX_ARG_PROMPT;
    const self = new AmpTurn();
    const { options } = spec;
    const args = ampArgs({ thread: spec.thread, prompt: viaStdin ? null : text, mode: spec.mode, bypass: options.permissionMode === 'bypass', settingsFile: spec.settingsFile });
    const child = (self.child = await ChildProcess.start({ command: spec.executable, args, cwd: options.cwd, env: spec.env, ...processSpawnOptions(spec.limits, options.logger) }, (line) => {
      const message = parseNativeLine(line.text, line.truncated) as { type?: unknown };
      if (message && typeof message === 'object' && message.type === 'result') self.sawResult = true;
      spec.onMessage(message);
    }));
    const fed = (async () => {
      if (viaStdin) await child.writeLine(text).catch(() => undefined);
      child.endInput();
    })();
    return { turn: self, fed };
  }

  /** SIGINT: Amp ends the turn with an error result (exit 0); the group is killed after a grace. */
  interrupt(): void {
    this.interrupted = true;
    if (this.child.pid !== undefined) {
      try {
        process.kill(this.child.pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
    setTimeout(() => void this.child.kill(), INTERRUPT_GRACE_MS).unref();
  }
}
