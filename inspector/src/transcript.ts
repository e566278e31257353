// A session's universal events folded into what the page shows: items in the order they started,
// with their streamed text; the permissions and questions still pending; turn and end state. Pure
// bookkeeping over the event union (no DOM), fed one event at a time in sequence order. The queue
// of messages waiting to start is folded from message.queued / message.dequeued too, so the page
// shows it without asking GET …/queue.
import type { PermissionEventData, QuestionEventData, QueuedData, SessionEndedData, UniversalEvent, UniversalItem, UsageTotals } from './types.js';

export interface ItemView {
  item: UniversalItem;
  /** Text received as deltas while the item is in progress (the completed item has the whole content). */
  streamed: string;
}

/** One line of the transcript: an item, or an event shown in place (errors, ends, resolutions…). */
export type Entry = { kind: 'item'; id: string } | { kind: 'event'; event: UniversalEvent };

export class Transcript {
  readonly events: UniversalEvent[] = [];
  readonly items = new Map<string, ItemView>();
  readonly entries: Entry[] = [];
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
          if (!this.isSteer(item)) this.entries.push({ kind: 'item', id: item.item_id });
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
        this.entries.push({ kind: 'event', event });
        return;
      case 'question.requested':
        this.questions.set(event.data.question_id, event.data);
        return;
      case 'question.resolved':
        this.questions.delete(event.data.question_id);
        this.entries.push({ kind: 'event', event });
        return;
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
      case 'session.started':
      case 'session.forked':
      case 'error':
      case 'agent.unparsed':
        this.entries.push({ kind: 'event', event });
        return;
    }
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
