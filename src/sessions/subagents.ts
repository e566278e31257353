// The sub-agent rules (issue 31, docs/events.md "Sub-agents"): native sub-agent keys → daemon
// `sub_` ids, subagent.started with the `itm_` id of the tool call that launched it, dedupe of
// repeated starts and ends, a synthetic start for work attributed to a sub-agent the agent never
// announced, and closing what a turn or the session leaves open. Bounded like the ItemTable: past
// MAX_SUBAGENTS the oldest ended ones are forgotten.
import type { Draft } from '../agents/types.js';
import type { SubagentOutcome } from '../schema/events.js';
import type { IdGenerator } from '../util/deps.js';
import { DAEMON, type EventBatch, type Origin } from './event-batch.js';

const MAX_SUBAGENTS = 1_024;

interface SubagentTrack {
  id: string;
  parentItemId: string | null;
  open: boolean;
  /** It runs on after its tool call returns (Claude's background agents): a turn end leaves it open. */
  background: boolean;
}

type Started = Extract<Draft, { type: 'subagent.started' }>;
type OpenSubagent = { subagent_id: string; parent_item_id: string | null };
type Ended = Extract<Draft, { type: 'subagent.ended' }>;

export class Subagents {
  private readonly byKey = new Map<string, SubagentTrack>();
  /** Sub-agents a restored session had open when the daemon stopped, ended by endRestored. */
  private restored: OpenSubagent[] = [];

  /** `itemId` maps an item key to its itm_ id (the ItemTable's), for `parent_item_id`. */
  constructor(
    private readonly ids: IdGenerator,
    private readonly batch: EventBatch,
    private readonly itemId: (key: string) => string,
  ) {}

  /** The subagent_id for a draft's `subagent_key`; work of a sub-agent never announced starts one. */
  idFor(key: string | undefined): string | undefined {
    if (key === undefined) return undefined;
    const known = this.byKey.get(key);
    if (known) return known.id;
    const track = this.track(key, null, false);
    this.batch.emit({ type: 'subagent.started', data: { subagent_id: track.id, parent_item_id: null, native_subagent_id: null }, ...DAEMON });
    return track.id;
  }

  start(d: Started, origin: Origin): void {
    if (this.byKey.has(d.key)) return; // dedupe: announced twice, or its work came first
    const parentSubagent = this.idFor(d.subagent_key);
    const parentItemId = d.parent_key === null ? null : this.itemId(d.parent_key);
    const track = this.track(d.key, parentItemId, d.data.background === true);
    const data = {
      subagent_id: track.id,
      parent_item_id: parentItemId,
      native_subagent_id: d.native_subagent_id,
      ...(parentSubagent ? { parent_subagent_id: parentSubagent } : {}),
      ...d.data,
    };
    this.batch.emit({ type: 'subagent.started', data, ...origin });
  }

  end(d: Ended, origin: Origin): void {
    this.idFor(d.key); // the end of one never announced starts it first: every end has its start
    const track = this.byKey.get(d.key)!;
    if (track.open) this.close(track, d.data, origin);
  }

  /**
   * The turn ended: the sub-agents it leaves running end with it (interrupted, or failed when the
   * turn failed), except background ones, which outlive the turn unless `all` (the session ended).
   */
  closeOpen(outcome: SubagentOutcome, reason: string, all: boolean): void {
    for (const track of this.byKey.values()) {
      if (track.open && (all || !track.background)) this.close(track, { outcome }, DAEMON, reason);
    }
  }

  /** The open sub-agents, for the session's snapshot (a restarted daemon ends them). */
  openForSnapshot(): OpenSubagent[] {
    const open = [...this.byKey.values()].filter((t) => t.open).map((t) => ({ subagent_id: t.id, parent_item_id: t.parentItemId }));
    return [...this.restored, ...open];
  }

  restore(open: OpenSubagent[]): void {
    this.restored = open;
  }

  /** The agent is gone (see Normalizer.agentGone): what a restored session had open ends. */
  endRestored(reason: string): void {
    for (const s of this.restored) this.batch.emit({ type: 'subagent.ended', data: { ...s, outcome: 'interrupted', reason }, ...DAEMON });
    this.restored = [];
  }

  private close(track: SubagentTrack, data: Ended['data'], origin: Origin, reason?: string): void {
    track.open = false;
    const ended = { subagent_id: track.id, parent_item_id: track.parentItemId, ...data, ...(reason ? { reason } : {}) };
    this.batch.emit({ type: 'subagent.ended', data: ended, ...origin });
  }

  private track(key: string, parentItemId: string | null, background: boolean): SubagentTrack {
    const track = { id: this.ids.next('sub'), parentItemId, open: true, background };
    this.byKey.set(key, track);
    if (this.byKey.size > MAX_SUBAGENTS) {
      for (const [k, t] of this.byKey) {
        if (this.byKey.size <= MAX_SUBAGENTS * 0.75) break;
        if (!t.open) this.byKey.delete(k);
      }
    }
    return track;
  }
}
