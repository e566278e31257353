// The mapping of POST /stream (docs/stream.md): one turn's universal events → the four line types
// of the sandbox envelope (log, step, result, error). Pure: it reads only universal events, never
// an agent's native format, so it is the same for every agent; it reads no clock (a line's `ts`
// is its event's time) and makes no ids (a step's id is its tool call's item id). A step's
// `durationMs` is the difference of its two events' times, both stamped by the daemon's log.
import type { StderrOutput, UniversalEvent, UniversalItem } from '../schema/events.js';
import type { StreamErrorCode, StreamLine, StreamStepLine } from '../schema/sandbox-stream.js';
import { argsOf, by, cut, endStep, errorCode, log, stderrLines, textOf, type OpenStep } from './sandbox-line-parts.js';

type Ended = Extract<UniversalEvent, { type: 'turn.ended' }>;

const at = (event: UniversalEvent): number => Date.parse(event.time);

export class SandboxLines {
  /** Open steps by their tool call's call_id. */
  private readonly steps = new Map<string, OpenStep>();
  /** Call ids whose step has ended (a second result for one is not a second step). */
  private readonly endedSteps = new Set<string>();
  private lastMessage: string | undefined;
  /** lastMessage went out as a log line already (a tool call followed it: it was not the last). */
  private lastLogged = false;
  private lastError: { message: string; code?: string | undefined } | undefined;
  private crashed = false;
  /** A crash's error line waits for session.ended, whose stderr goes before it as log lines. */
  private held: Ended | undefined;
  private ended = false;

  /** The terminal line (result or error) was written: nothing follows it. */
  get done(): boolean {
    return this.ended;
  }

  /** The lines one event makes, in order (none for deltas and most daemon bookkeeping). */
  map(event: UniversalEvent): StreamLine[] {
    if (this.ended) return [];
    const ts = at(event);
    switch (event.type) {
      case 'item.started':
        return event.data.item.kind === 'tool_call' ? this.openSteps(event.data.item, ts) : [];
      case 'item.completed':
        return this.completed(event.data.item, ts, event.data.subagent_id);
      case 'turn.started':
        return [log('debug', `turn started${event.data.turn_id ? ` (${event.data.turn_id})` : ''}`, ts)];
      case 'turn.ended':
        return this.turnEnded(event);
      case 'session.ended':
        return this.sessionEnded(event.data.reason, event.data.message, event.data.stderr, ts);
      case 'error':
        if (event.data.code === 'agent_exited') this.crashed = true;
        this.lastError = { message: event.data.message, code: event.data.code };
        return [log('error', `${event.data.code ? `${event.data.code}: ` : ''}${cut(event.data.message)}`, ts)];
      default:
        return this.diagnostic(event, ts);
    }
  }

  /**
   * The stream must end now for a reason outside the turn (the reader was too slow, the daemon
   * failed, the session went away): open steps fail, then one error line. Nothing if it has ended.
   */
  fail(code: StreamErrorCode, message: string, ts: number): StreamLine[] {
    if (this.ended) return [];
    return [...this.closeSteps('the stream ended before the tool returned', ts), this.terminal({ type: 'error', code, message, ts })];
  }

  /** A crash's held error line, when its session.ended has not come (the writer asks at the end of a batch). */
  flush(): StreamLine[] {
    const held = this.held;
    if (!held || this.ended) return [];
    return this.finishTurn(held, at(held));
  }

  private openSteps(item: UniversalItem, ts: number): StreamLine[] {
    const lines: StreamLine[] = [];
    const calls = item.content.filter((p) => p.type === 'tool_call');
    calls.forEach((part, n) => {
      if (this.endedSteps.has(part.call_id)) return;
      let step = this.steps.get(part.call_id);
      if (step?.announced) return;
      const args = argsOf(part, item);
      if (!step) {
        step = { id: calls.length === 1 ? item.item_id : `${item.item_id}_${n + 1}`, name: part.name, startedAt: ts, announced: false, args };
        this.steps.set(part.call_id, step);
      }
      if (args === undefined) return;
      step.args = args;
      lines.push(this.announce(step, ts));
    });
    return lines.length > 0 ? [...this.earlierMessage(ts), ...lines] : lines;
  }

  /** A step's running line (once), with the args known by now. */
  private announce(step: OpenStep, ts: number): StreamStepLine {
    step.announced = true;
    return { type: 'step', id: step.id, name: step.name, status: 'running', ...(step.args === undefined ? {} : { args: step.args }), ts };
  }

  private completed(item: UniversalItem, ts: number, subagent: string | undefined): StreamLine[] {
    if (item.kind === 'tool_call') return this.openSteps(item, ts);
    if (item.kind === 'tool_result') return this.results(item, ts);
    if (item.kind === 'message' && item.role === 'assistant') {
      if (subagent) return [log('debug', `sub-agent ${subagent}: ${cut(textOf(item))}`, ts)];
      // Only the turn's last message is its result; an earlier one (said before a tool) is a trace.
      const earlier = this.earlierMessage(ts);
      this.lastMessage = textOf(item);
      this.lastLogged = false;
      return earlier;
    }
    if (item.kind === 'status') {
      const labels = item.content.flatMap((p) => (p.type === 'status' ? [p.detail ? `${p.label}: ${p.detail}` : p.label] : []));
      return [log('info', cut(labels.join('; ') || textOf(item) || 'status'), ts)];
    }
    if (item.kind === 'system') return [log('debug', `system: ${cut(textOf(item))}`, ts)];
    if (item.kind === 'unknown') return [log('debug', 'the agent reported an item of a kind agentwire does not know', ts)];
    return [];
  }

  /** The message said so far, as a trace: something followed it, so it is not the turn's result. */
  private earlierMessage(ts: number): StreamLine[] {
    if (this.lastMessage === undefined || this.lastLogged) return [];
    this.lastLogged = true;
    return this.lastMessage === '' ? [] : [log('info', `assistant: ${cut(this.lastMessage)}`, ts)];
  }

  private results(item: UniversalItem, ts: number): StreamLine[] {
    const lines: StreamLine[] = [];
    for (const part of item.content) {
      if (part.type !== 'tool_result' || this.endedSteps.has(part.call_id)) continue;
      let step = this.steps.get(part.call_id);
      // A result whose call was never seen still makes one whole step: running, then its end.
      step ??= { id: item.item_id, name: 'tool', startedAt: ts, announced: false, args: undefined };
      if (!step.announced) lines.push(...this.earlierMessage(ts), this.announce(step, ts));
      lines.push(endStep(step, item.status === 'failed', cut(part.output), ts));
      this.steps.delete(part.call_id);
      this.endedSteps.add(part.call_id);
    }
    return lines;
  }

  private closeSteps(why: string, ts: number): StreamLine[] {
    const lines = [...this.steps.values()].flatMap((step) => [...(step.announced ? [] : [this.announce(step, ts)]), endStep(step, true, why, ts)]);
    for (const callId of this.steps.keys()) this.endedSteps.add(callId);
    this.steps.clear();
    return lines;
  }

  private turnEnded(event: Ended): StreamLine[] {
    if (event.data.metadata.reason === 'error' && this.crashed) {
      this.held = event;
      return [];
    }
    return this.finishTurn(event, at(event));
  }

  private finishTurn(event: Ended, ts: number): StreamLine[] {
    const reason = event.data.metadata.reason;
    const lines = this.closeSteps(`the turn ended (${reason}) before the tool returned`, ts);
    if (reason === 'completed') return [...lines, this.terminal({ type: 'result', message: this.lastMessage ?? '', ts })];
    const code = errorCode(reason, this.crashed, this.lastError?.code);
    const detail = this.lastError?.message ?? (typeof event.data.metadata.error === 'string' ? event.data.metadata.error : undefined);
    return [...lines, this.terminal({ type: 'error', code, message: cut(detail ?? `the turn ended: ${reason}`), ts })];
  }

  private sessionEnded(reason: string, message: string | undefined, stderr: StderrOutput | undefined, ts: number): StreamLine[] {
    const lines: StreamLine[] = stderrLines(stderr, ts);
    if (this.held) return [...lines, ...this.finishTurn(this.held, ts)];
    // The session ended with no turn.ended of ours (it ended between dispatch and turn, say).
    const code: StreamErrorCode = reason === 'error' ? 'agent_crashed' : reason === 'terminated' ? 'terminated' : 'session_ended';
    return [...lines, ...this.fail(code, cut(message ?? `the session ended (${reason})`), ts)];
  }

  private terminal(line: StreamLine): StreamLine {
    this.ended = true;
    return line;
  }

  /** What the caller sees only in traces: HITL, sub-agents, unparsed output, usage, the queue. */
  private diagnostic(event: UniversalEvent, ts: number): StreamLine[] {
    switch (event.type) {
      case 'permission.requested':
        return [log('info', `permission requested: ${event.data.action}`, ts)];
      case 'permission.resolved':
        return [log(event.data.status === 'approved' ? 'info' : 'warn', `permission ${event.data.action} ${event.data.status}${by(event.data.metadata)}`, ts)];
      case 'question.requested':
        return [log('info', `question asked: ${cut(event.data.prompt, 2000)}`, ts)];
      case 'question.resolved':
        return [log('info', `question ${event.data.status}${event.data.response ? `: ${cut(event.data.response, 2000)}` : ''}${by(event.data)}`, ts)];
      case 'subagent.started':
        return [log('info', `sub-agent ${event.data.subagent_id} started${event.data.description ? `: ${cut(event.data.description, 2000)}` : ''}`, ts)];
      case 'subagent.ended':
        return [log('info', `sub-agent ${event.data.subagent_id} ${event.data.outcome}`, ts)];
      case 'agent.unparsed':
        return [log('warn', `unparsed agent output: ${cut(event.data.error, 2000)}`, ts)];
      case 'usage.updated':
        return [log('debug', `usage: ${event.data.totals.input_tokens} input, ${event.data.totals.output_tokens} output tokens so far`, ts)];
      default:
        return [];
    }
  }
}
