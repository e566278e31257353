// A session's universal events folded into what the page shows: items in the order they started,
// with their streamed text; the permissions and questions still pending; turn and end state. Pure
// bookkeeping over the event union (no DOM), fed one event at a time in sequence order.
import type { PermissionEventData, QuestionEventData, SessionEndedData, UniversalEvent, UniversalItem } from './types.js';

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
  ended: SessionEndedData | undefined;
  turnOpen = false;
  lastSequence = 0;

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
        if (view) view.item = item;
        else {
          this.items.set(item.item_id, { item, streamed: '' });
          this.entries.push({ kind: 'item', id: item.item_id });
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
        this.turnOpen = false;
        if (event.data.metadata?.reason !== 'completed') this.entries.push({ kind: 'event', event });
        return;
      case 'session.ended':
        this.ended = event.data;
        this.turnOpen = false;
        this.permissions.clear();
        this.questions.clear();
        this.entries.push({ kind: 'event', event });
        return;
      case 'session.started':
      case 'error':
      case 'agent.unparsed':
        this.entries.push({ kind: 'event', event });
        return;
    }
  }

  /** The status the daemon reports, derived the same way (ARCHITECTURE.md). */
  get status(): 'idle' | 'running' | 'waiting' | 'ended' {
    if (this.ended) return 'ended';
    if (this.permissions.size > 0 || this.questions.size > 0) return 'waiting';
    return this.turnOpen ? 'running' : 'idle';
  }
}
