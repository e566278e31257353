// What one normalizer call hands back: its events in order, each with the raw payload it came
// from, the origin it carries, and a native session id learnt on the way. The normalizer's parts
// (lifecycle, items, HITL) all emit into the same batch, so their events interleave as they happen.
import type { Draft } from '../agents/types.js';
import type { PendingEvent } from '../schema/events.js';

/** A normalized event, ready for EventLog.append, with the raw payload it came from. */
export interface Normalized {
  event: PendingEvent;
  raw: unknown;
  nativeSessionId?: string | null;
}

export type Origin = { source: 'agent' | 'daemon'; synthetic: boolean };

/** The origin of every event the daemon synthesizes. */
export const DAEMON = { source: 'daemon', synthetic: true } as const;

/** Where a converter's draft says it came from (an explicit source or synthetic flag wins). */
export function originOf(d: Draft): Origin {
  const synthetic = d.synthetic ?? d.source === 'daemon';
  return { source: d.source ?? (synthetic ? 'daemon' : 'agent'), synthetic };
}

export class EventBatch {
  private out: Normalized[] = [];
  private raw: unknown = null;
  /** A native session id learnt from a dropped duplicate start, for the next event to carry. */
  private nativeSessionId: string | null = null;

  /** Runs one normalizer call and returns what it emitted, all tagged with `raw`. */
  run(raw: unknown, body: () => void): Normalized[] {
    this.out = [];
    this.raw = raw;
    body();
    return this.out;
  }

  /** The next event emitted carries this native session id (unless it names its own). */
  carryNativeSessionId(id: string): void {
    this.nativeSessionId = id;
  }

  emit(event: PendingEvent, nativeSessionId?: string | null): void {
    const id = nativeSessionId ?? this.nativeSessionId;
    this.nativeSessionId = null;
    this.out.push({ event, raw: this.raw, ...(id ? { nativeSessionId: id } : {}) });
  }
}
