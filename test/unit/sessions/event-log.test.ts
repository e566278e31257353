import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import type { PendingEvent, UniversalEvent } from '../../../src/schema/events.js';
import { EventLog } from '../../../src/sessions/event-log.js';
import { counterIds, steppingClock } from '../../../src/util/deps.js';

const delta = (text: string): PendingEvent => ({
  type: 'item.delta',
  source: 'agent',
  synthetic: false,
  data: { item_id: 'itm_1', native_item_id: null, delta: text },
});

function makeLog(maxEvents = 1000, maxBytes = 1_000_000) {
  return new EventLog('s1', { maxEvents, maxBytes }, counterIds(), steppingClock());
}

describe('EventLog', () => {
  it('stamps a dense sequence, event ids, RFC 3339 time, session and native session ids', () => {
    const log = makeLog();
    const a = log.append(delta('a'));
    const b = log.append(delta('b'), { native: 1 }, 'native-1');
    const c = log.append(delta('c'));
    expect([a.sequence, b.sequence, c.sequence]).toEqual([1, 2, 3]);
    expect([a.event_id, b.event_id, c.event_id]).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(a.time).toBe('2026-01-01T00:00:00.000Z');
    expect(a).toMatchObject({ session_id: 's1', native_session_id: null, raw: null });
    // Once known, the native session id is stamped on every later event.
    expect(b.native_session_id).toBe('native-1');
    expect(c.native_session_id).toBe('native-1');
  });

  it('keeps raw beside the event and returns it only when asked', () => {
    const log = makeLog();
    log.append(delta('a'), { line: 'native' });
    log.append(delta('b'));
    expect(log.read(0).map((e) => e.raw)).toEqual([null, null]);
    expect(log.read(0, Infinity, true).map((e) => e.raw)).toEqual([{ line: 'native' }, null]);
    expect(JSON.parse(log.readJson(0, 1, true)[0]!)).toMatchObject({ sequence: 1, raw: { line: 'native' } });
  });

  it('reads after an exclusive cursor with a limit', () => {
    const log = makeLog();
    for (const t of 'abcde') log.append(delta(t));
    expect(log.read(2, 2).map((e) => e.sequence)).toEqual([3, 4]);
    expect(log.read(5)).toEqual([]);
    // A cursor past the end is not from this log: refused, never an empty page that hides a skip.
    expect(() => log.read(99)).toThrow(/past the last event/);
  });

  it('replays then goes live with no gap and no duplicate at the seam', () => {
    const log = makeLog();
    for (const t of 'abc') log.append(delta(t));
    const seen: number[] = [];
    // Replay and subscription happen in one synchronous step, so nothing can slip in between.
    seen.push(...log.read(1).map((e) => e.sequence));
    const stop = log.listen((e) => seen.push(e.sequence));
    log.append(delta('d'));
    log.append(delta('e'));
    stop();
    log.append(delta('f'));
    expect(seen).toEqual([2, 3, 4, 5]);
  });

  it('evicts the oldest events past maxEvents and says so instead of leaving a hole', () => {
    const log = makeLog(3);
    for (const t of 'abcde') log.append(delta(t));
    expect(log.size).toMatchObject({ events: 3, evicted: 2 });
    expect(log.oldestSequence).toBe(3);
    expect(log.read(2).map((e) => e.sequence)).toEqual([3, 4, 5]);
    let error: unknown;
    try {
      log.read(1);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('events_evicted');
    expect((error as ApiError).context).toMatchObject({ offset: 1, oldestAvailable: 3 });
  });

  it('evicts by bytes, counting raw payloads, but always keeps the newest event', () => {
    const log = makeLog(1000, 2000);
    for (let i = 0; i < 10; i++) log.append(delta('x'.repeat(100)), { pad: 'y'.repeat(100) });
    expect(log.size.bytes).toBeLessThanOrEqual(2000);
    expect(log.lastSequence).toBe(10);
    const huge = log.append(delta('z'.repeat(5000)));
    expect(log.size.events).toBe(1);
    expect(log.read(huge.sequence - 1).map((e: UniversalEvent) => e.sequence)).toEqual([11]);
  });

  it('stays correct across many evictions and compactions of its storage', () => {
    const log = makeLog(100);
    for (let i = 1; i <= 5000; i++) log.append(delta(String(i)));
    expect(log.size).toMatchObject({ events: 100, evicted: 4900 });
    const events = log.read(4900);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 100 }, (_, i) => 4901 + i));
    expect(events.map((e) => (e.data as { delta: string }).delta)[0]).toBe('4901');
    expect(() => log.read(4899)).toThrow(ApiError);
  });
});
