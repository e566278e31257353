// The OpenCode driver's event routing (src/agents/opencode/route.ts): which events of the server's
// stream reach the session's converter.
import { describe, expect, it } from 'vitest';
import { SessionRouter, sessionOf } from '../../../src/agents/opencode/route.js';

const ev = (type: string, properties: Record<string, unknown>) => ({ id: 'evt_1', type, properties });

describe('opencode session routing', () => {
  it('finds the session id at the top, in info or in part', () => {
    expect(sessionOf(ev('session.idle', { sessionID: 'ses_a' }))).toBe('ses_a');
    expect(sessionOf(ev('message.updated', { info: { sessionID: 'ses_b' } }))).toBe('ses_b');
    expect(sessionOf(ev('message.part.updated', { part: { sessionID: 'ses_c' } }))).toBe('ses_c');
    expect(sessionOf(ev('plugin.added', {}))).toBeUndefined();
    expect(sessionOf('text')).toBeUndefined();
  });

  it('takes its own events and those of no session; drops other sessions', () => {
    const router = new SessionRouter('ses_a');
    expect(router.accepts(ev('session.idle', { sessionID: 'ses_a' }))).toBe(true);
    expect(router.accepts(ev('server.heartbeat', {}))).toBe(true);
    expect(router.accepts(ev('session.idle', { sessionID: 'ses_x' }))).toBe(false);
    expect(router.accepts(ev('permission.asked', { sessionID: 'ses_x', id: 'per_1' }))).toBe(false);
  });

  it("passes the events of its subagents' child sessions (and theirs), but not their session.created", () => {
    const router = new SessionRouter('ses_a');
    expect(router.accepts(ev('session.created', { sessionID: 'ses_child', info: { id: 'ses_child', parentID: 'ses_a' } }))).toBe(false);
    expect(router.accepts(ev('session.created', { sessionID: 'ses_grand', info: { id: 'ses_grand', parentID: 'ses_child' } }))).toBe(false);
    for (const child of ['ses_child', 'ses_grand']) {
      expect(router.accepts(ev('permission.asked', { sessionID: child, id: 'per_1' }))).toBe(true);
      expect(router.accepts(ev('question.rejected', { sessionID: child, requestID: 'que_1' }))).toBe(true);
      expect(router.accepts(ev('session.idle', { sessionID: child }))).toBe(true);
      expect(router.accepts(ev('message.updated', { sessionID: child, info: { sessionID: child } }))).toBe(true);
    }
  });
});
