// The native-key → itm_ id map of one session, with each item's lifecycle flags. Bounded: once it
// holds MAX_ITEMS entries the oldest finished ones are forgotten (a later reference to one of them
// would get a fresh id, which only matters for an agent that reopens an item thousands of items
// on), and a finished item keeps no content, so memory stays flat however long a session runs.
import type { DraftItem } from '../agents/types.js';
import type { ItemStatus, UniversalItem } from '../schema/events.js';
import type { IdGenerator } from '../util/deps.js';

const MAX_ITEMS = 4_096;

export interface ItemTrack {
  id: string;
  started: boolean;
  completed: boolean;
  deltas: boolean;
  /** Delta text streamed so far while open, so a forced close keeps what the client already saw. */
  text: string;
  /** The last known shape, so a turn that ends with the item still open can close it. */
  last: DraftItem;
  /** The sub-agent it was produced in: every event of the item says so, its forced close too. */
  subagent?: string;
}

export class ItemTable {
  private readonly byKey = new Map<string, ItemTrack>();

  constructor(private readonly ids: IdGenerator) {}

  /** The track for this key, created (with a new itm_ id) on first sight. */
  track(item: Partial<DraftItem> & { key: string }): ItemTrack {
    let track = this.byKey.get(item.key);
    if (!track) {
      const last: DraftItem = {
        key: item.key,
        native_item_id: item.native_item_id ?? null,
        parent_key: item.parent_key ?? null,
        kind: item.kind ?? 'message',
        role: item.role ?? null,
        content: item.content ?? [],
        status: item.status ?? 'in_progress',
      };
      track = { id: this.ids.next('itm'), started: false, completed: false, deltas: false, text: '', last };
      this.byKey.set(item.key, track);
      this.prune();
    } else if (item.kind) {
      track.last = { ...track.last, ...item } as DraftItem;
    }
    return track;
  }

  /** The universal item for a draft: itm_ ids for itself and its parent. */
  universal(item: DraftItem, status: ItemStatus): UniversalItem {
    const track = this.track(item);
    const parent = item.parent_key ? this.track({ key: item.parent_key }).id : null;
    return {
      item_id: track.id,
      native_item_id: item.native_item_id,
      parent_id: parent,
      kind: item.kind,
      role: item.role,
      content: item.content,
      status,
    };
  }

  /** A completed item is only remembered by key and id (for dedupe and parent references). */
  settle(track: ItemTrack): void {
    track.completed = true;
    track.text = '';
    track.last = { ...track.last, content: [] };
  }

  /** Items started but not completed, oldest first, with the text they streamed. */
  openItems(): DraftItem[] {
    const open: DraftItem[] = [];
    for (const t of this.byKey.values()) {
      if (!t.started || t.completed) continue;
      const hasText = t.last.content.some((p) => p.type === 'text');
      const content = t.text && !hasText ? [...t.last.content, { type: 'text' as const, text: t.text }] : t.last.content;
      open.push({ ...t.last, content });
    }
    return open;
  }

  private prune(): void {
    if (this.byKey.size <= MAX_ITEMS) return;
    for (const [key, t] of this.byKey) {
      if (this.byKey.size <= MAX_ITEMS * 0.75) break;
      if (t.completed) this.byKey.delete(key);
    }
  }
}
