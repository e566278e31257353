// A session's universal events folded into what the page shows: items in the order they started,
// with their streamed text; the permissions and questions still pending; turn and end state. Pure
// bookkeeping over the event union (no DOM), fed one event at a time in sequence order. The queue
// of messages waiting to start is folded from message.queued / message.dequeued too, so the page
// shows it without asking GET …/queue. A sub-agent's work (events with data.subagent_id) goes into
// its own lines, drawn under the tool call that launched it.
import type { PermissionEventData, QuestionEventData, QueuedData, SessionEndedData, SubagentEndedData, SubagentStartedData, UniversalEvent, UniversalItem, UsageTotals } from './types.js';

export interface ItemView {
  item: UniversalItem;
  /** Text received as deltas while the item is in progress (the completed item has the whole content). */
  streamed: string;
}

/** One line of the transcript: an item, an event shown in place (errors, ends, resolutions…), or a
 *  sub-agent drawn where it started because the call that launched it is unknown. */
export type Entry = { kind: 'item'; id: string } | { kind: 'event'; event: UniversalEvent } | { kind: 'subagent'; id: string };

/** A sub-agent: its start and end, and the lines of its own work (nested under its tool call). */
export interface SubagentView {
  started: SubagentStartedData;
  ended: SubagentEndedData | undefined;
  entries: Entry[];
}

export class Transcript {
  readonly events: UniversalEvent[] = [];
  readonly items = new Map<string, ItemView>();
  readonly entries: Entry[] = [];
  readonly subagents = new Map<string, SubagentView>();
  /** The sub-agents each tool call item launched, drawn inside its card. */
  readonly subagentsOf = new Map<string, string[]>();
  readonly permissions = new Map<string, PermissionEventData>();
  readonly questions = new Map<string, QuestionEventData>();
  /** Messages waiting in the session's queue, in the order they will start. */
  readonly queued = new Map<string, QueuedData>();
  ended: SessionEndedData | undefined;
  /** The session's running usage totals, from its last usage.updated (docs/budgets.md). */
  usage: UsageTotals | undefined;
  turnOpen = false;
  lastSequence = 0;
  /** The sequence of the last turn.ended: forking there (with no turn open) is forking at the end. */
  lastTurnEnd = 0;
  /**
   * Steered texts of the running turn whose user item has not come yet. message.steered is drawn as
   * the steered message; the user item the daemon (or the agent's echo) adds for it is not drawn
   * again.
   */
  private steers: string[] = [];

  apply(event: UniversalEvent): void {
    // The client never yields a sequence twice; the page does not rely on it.
    if (event.sequence <= this.lastSequence) return;
    this.lastSequence = event.sequence;
    this.events.push(event);
    switch (event.type) {
      case 'item.started':
      case 'item.completed': {
        const item = event.data.item;
        const view = this.items.get(item.item_id);
        if (view) {
          view.item = item;
          // An echo that started empty: known for a steer's only once its text is in.
          const at = event.type === 'item.completed' && this.steers.length > 0 ? this.entries.findLastIndex((e) => e.kind === 'item' && e.id === item.item_id) : -1;
          if (at >= 0 && this.isSteer(item)) this.entries.splice(at, 1);
        } else {
          this.items.set(item.item_id, { item, streamed: '' });
          if (!this.isSteer(item)) this.linesOf(event).push({ kind: 'item', id: item.item_id });
        }
        return;
      }
      case 'item.delta': {
        const view = this.items.get(event.data.item_id);
        if (view) view.streamed += event.data.delta;
        return;
      }
      case 'permission.requested':
        this.permissions.set(event.data.permission_id, event.data);
        return;
      case 'usage.updated':
        this.usage = event.data.totals;
        return;
      case 'permission.resolved':
        this.permissions.delete(event.data.permission_id);
        this.linesOf(event).push({ kind: 'event', event });
        return;
      case 'question.requested':
        this.questions.set(event.data.question_id, event.data);
        return;
      case 'question.resolved':
        this.questions.delete(event.data.question_id);
        this.linesOf(event).push({ kind: 'event', event });
        return;
      case 'subagent.started': {
        const { subagent_id: id, parent_item_id: parent } = event.data;
        if (this.subagents.has(id)) return;
        this.subagents.set(id, { started: event.data, ended: undefined, entries: [] });
        if (parent !== null && this.items.has(parent)) this.subagentsOf.set(parent, [...(this.subagentsOf.get(parent) ?? []), id]);
        else this.linesOf(event).push({ kind: 'subagent', id });
        return;
      }
      case 'subagent.ended': {
        const view = this.subagents.get(event.data.subagent_id);
        if (view) view.ended = event.data;
        return;
      }
      case 'turn.started':
        this.turnOpen = true;
        return;
      case 'turn.ended':
        // Every turn's end is a line (a note when it did not complete, and where to fork from).
        this.turnOpen = false;
        this.lastTurnEnd = event.sequence;
        this.steers = [];
        this.entries.push({ kind: 'event', event });
        return;
      case 'message.queued':
        this.queued.set(event.data.message_id, event.data);
        return;
      case 'message.dequeued':
        this.queued.delete(event.data.message_id);
        return;
      case 'message.steered':
        this.steers.push(event.data.message);
        this.entries.push({ kind: 'event', event });
        return;
      case 'session.ended':
        this.ended = event.data;
        this.turnOpen = false;
        this.queued.clear();
        this.permissions.clear();
        this.questions.clear();
        this.entries.push({ kind: 'event', event });
        return;
      case 'error':
        this.linesOf(event).push({ kind: 'event', event });
        return;
      case 'session.started':
      case 'session.forked':
      case 'agent.unparsed':
        this.entries.push({ kind: 'event', event });
        return;
    }
  }

  /** Where an event's line goes: its sub-agent's lines (nested, or where it started), else the transcript's. */
  private linesOf(event: UniversalEvent): Entry[] {
    const id = event.type === 'subagent.started' ? event.data.parent_subagent_id : (event.data as { subagent_id?: string }).subagent_id;
    return (id !== undefined ? this.subagents.get(id)?.entries : undefined) ?? this.entries;
  }

  /** A user message with the text of a steer still waiting for its item: that item, taken off the list. */
  private isSteer(item: UniversalItem): boolean {
    if (item.kind !== 'message' || item.role !== 'user' || this.steers.length === 0) return false;
    const text = item.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    const i = this.steers.indexOf(text);
    if (i < 0) return false;
    this.steers.splice(i, 1);
    return true;
  }

  /** The status the daemon reports, derived the same way (ARCHITECTURE.md). */
  get status(): 'idle' | 'running' | 'waiting' | 'ended' {
    if (this.ended) return 'ended';
    if (this.permissions.size > 0 || this.questions.size > 0) return 'waiting';
    return this.turnOpen ? 'running' : 'idle';
  }
}
