// The item rules of docs/conversion.md: daemon itm_ ids (via ItemTable), dedupe of repeated starts,
// item.started before a completion or delta that had none, one full-text delta for messages that
// streamed none, the user message an agent never echoes, and failing what a turn leaves open.
import type { Draft, DraftItem, TurnInput } from '../agents/types.js';
import type { ContentPart, UniversalItem } from '../schema/events.js';
import type { IdGenerator } from '../util/deps.js';
import { DAEMON, type EventBatch, type Origin } from './event-batch.js';
import { ItemTable, type ItemTrack } from './item-table.js';

export class ItemEvents {
  private readonly items: ItemTable;
  /** Items a restored session had open when the daemon stopped, failed by agentGone. */
  private restoredItems: UniversalItem[] = [];

  constructor(
    ids: IdGenerator,
    private readonly batch: EventBatch,
  ) {
    this.items = new ItemTable(ids);
  }

  /** The itm_ id of an item key (made on first sight, as for any item). */
  idOf(key: string): string {
    return this.items.track({ key }).id;
  }

  /** `subagent`: the sub-agent it was produced in; an item keeps the first one it is given. */
  start(item: DraftItem, origin: Origin, subagent?: string): void {
    const track = this.tracked(item, subagent);
    if (track.started) return; // dedupe: agents repeat starts (e.g. on reconnect or update)
    track.started = true;
    this.batch.emit({ type: 'item.started', data: { item: this.items.universal(item, 'in_progress'), ...inSub(track) }, ...origin });
  }

  delta(d: Extract<Draft, { type: 'item.delta' }>, origin: Origin, subagent?: string): void {
    const track = this.tracked({ key: d.key, native_item_id: d.native_item_id, ...d.stub }, subagent);
    if (!track.started) {
      // A delta before its item (OpenCode's ordering rule): open a stub so the delta has a parent.
      const stub = { kind: 'message', role: 'assistant', ...d.stub } as const;
      this.start({ ...stub, key: d.key, native_item_id: d.native_item_id, content: [], status: 'in_progress' }, DAEMON);
    }
    track.deltas = true;
    track.text += d.delta;
    this.batch.emit({ type: 'item.delta', data: { item_id: track.id, native_item_id: d.native_item_id, delta: d.delta, ...inSub(track) }, ...origin });
  }

  complete(item: DraftItem, origin: Origin, subagent?: string): void {
    const track = this.tracked(item, subagent);
    if (track.completed) return;
    if (!track.started) {
      // Messages start empty (their text arrives as the delta below); other kinds start whole.
      const content = item.kind === 'message' || item.kind === 'system' ? [] : item.content;
      this.start({ ...item, content }, DAEMON);
    }
    const text = textOf(item.content);
    if (!track.deltas && text && (item.kind === 'message' || item.kind === 'system')) {
      // Every message streams at least once (delta policy), even from agents without deltas.
      track.deltas = true;
      this.batch.emit({ type: 'item.delta', data: { item_id: track.id, native_item_id: item.native_item_id, delta: text, ...inSub(track) }, ...DAEMON });
    }
    this.batch.emit({ type: 'item.completed', data: { item: this.items.universal(item, item.status), ...inSub(track) }, ...origin });
    this.items.settle(track);
  }

  private tracked(item: Partial<DraftItem> & { key: string }, subagent: string | undefined) {
    const track = this.items.track(item);
    if (subagent !== undefined && track.subagent === undefined) track.subagent = subagent;
    return track;
  }

  /** The turn's user message, for agents that never echo it. */
  /** `key` tells apart the user messages of one turn: its own, and any steered into it. */
  userMessage(input: TurnInput, key: string): void {
    const content: ContentPart[] = [{ type: 'text', text: input.message }];
    for (const a of input.attachments) {
      content.push(a.mime?.startsWith('image/') ? { type: 'image', path: a.path, mime: a.mime } : { type: 'file_ref', path: a.path, action: 'read' });
    }
    const item: DraftItem = { key, native_item_id: null, kind: 'message', role: 'user', content, status: 'completed' };
    this.complete(item, DAEMON);
  }

  /** The turn ended with these items still open: they fail, keeping the text they streamed. */
  failOpen(): void {
    for (const item of this.items.openItems()) this.complete({ ...item, status: 'failed' }, DAEMON);
  }

  /** The open items as a restarted daemon will fail them (see Normalizer.snapshot). */
  openForSnapshot(): UniversalItem[] {
    // Their streamed text is left out: it is in the log as deltas already, and copying a long
    // message's whole text at every commit would make a flood quadratic.
    return this.items.openItems().map((item) => this.items.universal({ ...item, content: item.content.filter((p) => p.type !== 'text') }, 'failed'));
  }

  /** A stored session comes back with these items open. */
  restore(openItems: UniversalItem[]): void {
    this.restoredItems = openItems;
  }

  /** The agent is gone: the items a restored session had open complete as failed. */
  failRestored(): void {
    for (const item of this.restoredItems) this.batch.emit({ type: 'item.completed', data: { item }, ...DAEMON });
    this.restoredItems = [];
  }
}

const inSub = (track: ItemTrack) => (track.subagent !== undefined ? { subagent_id: track.subagent } : {});

function textOf(content: UniversalItem['content']): string {
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
