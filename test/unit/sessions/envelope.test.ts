// The log's hand-written envelope serialization must give exactly JSON.stringify(event), for every
// shape an event can take, and turn an unserializable event into an error instead of throwing.
import { describe, expect, it } from 'vitest';
import type { UniversalEvent } from '../../../src/schema/events.js';
import { EnvelopeWriter } from '../../../src/sessions/envelope.js';
import { EventLog } from '../../../src/sessions/event-log.js';
import { counterIds, type Clock } from '../../../src/util/deps.js';

/** An event with its keys in the order EventLog.append creates them (the order JSON follows). */
function event(overrides: Partial<UniversalEvent> & Pick<UniversalEvent, 'type' | 'data'>): UniversalEvent {
  const base = { event_id: 'evt_abc123', sequence: 42, time: '2026-11-21T10:00:00.123Z', session_id: 's1', native_session_id: null, source: 'agent', synthetic: false, ...overrides };
  return { ...base, type: overrides.type, data: overrides.data, raw: null } as UniversalEvent;
}

const samples: UniversalEvent[] = [
  event({ type: 'item.delta', data: { item_id: 'itm_1', native_item_id: 'm1', delta: 'héllo "quoted" \\ ☃ 🎉\n\t\u0001' } }),
  event({ type: 'turn.started', data: { turn_id: 'turn_1' }, source: 'daemon', synthetic: true, native_session_id: 'native-1' }),
  event({ type: 'session.ended', data: { reason: 'error', terminated_by: 'agent', exit_code: 3, stderr: { head: 'a', tail: null, truncated: false, total_lines: 1 } } } as never),
  event({ type: 'error', data: { message: 'x', code: 'y', details: { nested: [1, 2.5, -0, 1e21, null, true], skipped: undefined } } } as never),
  event({ type: 'item.started', data: { item: { item_id: 'itm_2', native_item_id: null, parent_id: null, kind: 'message', role: 'assistant', content: [], status: 'in_progress' } } }),
];

describe('EnvelopeWriter', () => {
  it('writes exactly what JSON.stringify(event) writes, for any session id and native session id', () => {
    for (const sessionId of ['s1', 'wëird "id" \\ ☃', '']) {
      const writer = new EnvelopeWriter(sessionId);
      for (const native of [null, 'native-1', 'näture "2"', null]) {
        for (const sample of samples) {
          const e = event({ ...sample, session_id: sessionId, native_session_id: native });
          expect(writer.serialize(e)).toBe(JSON.stringify(e));
        }
      }
    }
  });

  it('keeps JSON.stringify rules for shapes outside the fast path', () => {
    const writer = new EnvelopeWriter('s1');
    const noData = event({ type: 'turn.started', data: undefined as never });
    expect(writer.serialize(noData)).toBe(JSON.stringify(noData));
  });

  it('turns an event whose data cannot be serialized into an error event, in place', () => {
    const writer = new EnvelopeWriter('s1');
    const bad = event({ type: 'item.delta', data: { item_id: 'itm_1', native_item_id: null, delta: 'x', big: 1n } as never });
    const json = JSON.parse(writer.serialize(bad));
    expect(json).toMatchObject({ type: 'error', source: 'daemon', synthetic: true, data: { code: 'unserializable_event' } });
    expect(json.data.message).toMatch(/^a item\.delta event could not be serialized: /);
    expect(bad.type).toBe('error');
    expect(json.sequence).toBe(42);
  });
});

describe('EventLog time stamps', () => {
  it('reuses the time string within one millisecond and takes a new one when the clock moves', () => {
    let ms = Date.parse('2026-11-21T10:00:00.000Z');
    const clock: Clock = { now: () => new Date(ms) };
    const log = new EventLog('s1', { maxEvents: 10, maxBytes: 1_000_000 }, counterIds(), clock);
    const pending = { type: 'turn.started', source: 'daemon', synthetic: true, data: { turn_id: 't' } } as const;
    const a = log.append(pending);
    const b = log.append(pending);
    ms += 1;
    const c = log.append(pending);
    expect([a.time, b.time, c.time]).toEqual(['2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.001Z']);
    expect(log.readJson(0, 10, false).map((j) => JSON.parse(j).time)).toEqual([a.time, b.time, c.time]);
  });
});
