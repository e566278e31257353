// The pure half of OpenCode's fork (src/agents/opencode/fork.ts): where the branch point is in the
// parent's events, where the native fork cuts, and which events are about a copied message. The
// fork against the real server is in e2e-queue-fork.test.ts.
import { describe, expect, it } from 'vitest';
import { cutAfter, messageOf, opencodeForkPoint, parseForkPoint } from '../../../src/agents/opencode/fork.js';
import type { UniversalEvent } from '../../../src/schema/events.js';

/** Just what forkPoint reads of an event: its raw native message. */
const ev = (raw: unknown) => ({ raw }) as unknown as UniversalEvent;
const assistant = (id: string, session = 'ses_a') => ev({ type: 'message.updated', properties: { sessionID: session, info: { id, role: 'assistant', sessionID: session } } });
const part = (messageID: string, session = 'ses_a') => ev({ type: 'message.part.updated', properties: { part: { id: 'prt_1', messageID, sessionID: session, type: 'text' } } });
const listed = (...ids: string[]) => ids.map((id) => ({ info: { id }, parts: [] }));

describe('opencode fork point', () => {
  it('is the last assistant message in the events, named with its session', () => {
    const events = [ev(null), assistant('msg_1'), part('msg_1'), ev({ type: 'session.idle', properties: { sessionID: 'ses_a' } }), assistant('msg_3'), part('msg_3'), ev(null)];
    expect(opencodeForkPoint(events)).toBe('ses_a/msg_3');
    expect(parseForkPoint('ses_a/msg_3')).toEqual({ session: 'ses_a', after: 'msg_3' });
  });

  it('takes a part or a delta when no message.updated came for its message', () => {
    expect(opencodeForkPoint([assistant('msg_1'), part('msg_2', 'ses_b')])).toBe('ses_b/msg_2');
    expect(opencodeForkPoint([ev({ type: 'message.part.delta', properties: { sessionID: 'ses_a', messageID: 'msg_4', partID: 'prt_4', field: 'text', delta: 'x' } })])).toBe('ses_a/msg_4');
  });

  it('is undefined when no assistant message is there (the fork is refused)', () => {
    const user = ev({ type: 'message.updated', properties: { info: { id: 'msg_0', role: 'user', sessionID: 'ses_a' } } });
    expect(opencodeForkPoint([ev(null), user, ev({ type: 'session.idle', properties: { sessionID: 'ses_a' } })])).toBeUndefined();
    expect(parseForkPoint('msg_1')).toBeUndefined();
  });
});

describe('opencode fork cut', () => {
  const point = { session: 'ses_a', after: 'msg_2' };

  it('is the message after the point: the copy ends with it', () => {
    expect(cutAfter(listed('msg_1', 'msg_2', 'msg_3', 'msg_4'), point)).toBe('msg_3');
  });

  it('is none when the point is the last message: everything is copied', () => {
    expect(cutAfter(listed('msg_1', 'msg_2'), point)).toBeUndefined();
  });

  it('throws when the point is not in the session (never a made-up id: the server would copy everything)', () => {
    expect(() => cutAfter(listed('msg_1', 'msg_3'), point)).toThrow(/msg_2 is not in session ses_a/);
    expect(() => cutAfter({ error: 'x' }, point)).toThrow(/not an array/);
  });
});

describe('opencode copied messages', () => {
  it('finds the message an event is about', () => {
    expect(messageOf({ type: 'message.updated', properties: { info: { id: 'msg_1' } } })).toBe('msg_1');
    expect(messageOf({ type: 'message.part.updated', properties: { part: { messageID: 'msg_2' } } })).toBe('msg_2');
    expect(messageOf({ type: 'message.part.delta', properties: { messageID: 'msg_3' } })).toBe('msg_3');
    expect(messageOf({ type: 'session.idle', properties: { sessionID: 'ses_a' } })).toBeUndefined();
  });
});
