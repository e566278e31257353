// The off-heap store under the event log: FIFO order across ring growth and wrap-around, raw
// payloads spliced into the envelope, multi-byte text, entries larger than a segment, byte counts,
// and segments released once nothing refers to them.
import { describe, expect, it } from 'vitest';
import { EventBuffer } from '../../../src/sessions/event-buffer.js';

const envelope = (n: number, text = `event ${n}`) => JSON.stringify({ sequence: n, data: { text }, raw: null });

function all(store: EventBuffer, withRaw = false): string[] {
  return Array.from({ length: store.count }, (_, i) => store.json(i, withRaw));
}

describe('EventBuffer', () => {
  it('keeps events in order through ring growth and wrap-around, and counts their bytes', () => {
    const store = new EventBuffer();
    let expected: string[] = [];
    for (let n = 1; n <= 5000; n++) {
      expect(store.push(envelope(n), null)).toBe(Buffer.byteLength(envelope(n)));
      expected.push(envelope(n));
      // Evict in bursts so the ring's head wraps while it also grows.
      if (n % 700 === 0) {
        for (let k = 0; k < 500; k++) expect(store.shift()).toBe(Buffer.byteLength(expected[k]!));
        expected = expected.slice(500);
      }
    }
    expect(store.count).toBe(expected.length);
    expect(all(store)).toEqual(expected);
  });

  it('splices the raw payload into the envelope only when asked; events without raw stay as they are', () => {
    const store = new EventBuffer();
    const raw = JSON.stringify({ type: 'assistant', text: 'héllo — ☃ 🎉' });
    const bytes = store.push(envelope(1, 'ünïcödé ☃'), raw);
    store.push(envelope(2), null);
    expect(bytes).toBe(Buffer.byteLength(envelope(1, 'ünïcödé ☃')) + Buffer.byteLength(raw));
    expect(store.json(0, false)).toBe(envelope(1, 'ünïcödé ☃'));
    expect(JSON.parse(store.json(0, true))).toEqual({ sequence: 1, data: { text: 'ünïcödé ☃' }, raw: JSON.parse(raw) });
    expect(store.json(1, true)).toBe(envelope(2));
  });

  it('takes an event larger than a segment, and what comes after it', () => {
    const store = new EventBuffer();
    const big = envelope(1, 'x'.repeat(3 * 1024 * 1024));
    store.push(envelope(0), null);
    store.push(big, JSON.stringify('y'.repeat(100_000)));
    store.push(envelope(2), null);
    expect(store.json(1, false)).toBe(big);
    expect(JSON.parse(store.json(1, true)).raw).toHaveLength(100_000);
    expect(all(store).map((j) => JSON.parse(j).sequence)).toEqual([0, 1, 2]);
  });

  it('releases segments nothing refers to any more', () => {
    const store = new EventBuffer();
    const segments = () => (store as unknown as { segments: Buffer[] }).segments.length;
    for (let n = 0; n < 20_000; n++) store.push(envelope(n, 'z'.repeat(200)), null);
    const grown = segments();
    expect(grown).toBeGreaterThan(3);
    while (store.count > 1) store.shift();
    expect(segments()).toBe(1);
    expect(JSON.parse(store.json(0, false)).sequence).toBe(19_999);
    store.shift();
    expect(store.count).toBe(0);
    store.push(envelope(1), null);
    expect(all(store)).toEqual([envelope(1)]);
  });

  it('gives each event as bytes (size and copy) exactly as json() gives it as a string', () => {
    const store = new EventBuffer();
    const raw = JSON.stringify({ note: 'ünïcödé ☃ 🎉' });
    store.push(envelope(1, 'plain'), null);
    store.push(envelope(2, 'mëhr ☃'), raw);
    store.push(envelope(3, 'z'.repeat(20_000) + '☃'), JSON.stringify('w'.repeat(30_000))); // measured, not reserved
    for (let i = 0; i < store.count; i++) {
      for (const withRaw of [false, true]) {
        const expected = Buffer.from(store.json(i, withRaw));
        expect(store.size(i, withRaw)).toBe(expected.length);
        const target = Buffer.alloc(expected.length + 4, 0x2e);
        expect(store.copy(i, withRaw, target, 2)).toBe(2 + expected.length);
        expect(target.subarray(2, 2 + expected.length).equals(expected)).toBe(true);
        expect(target.toString('latin1', 0, 2) + target.toString('latin1', target.length - 2)).toBe('....');
      }
    }
  });
});
