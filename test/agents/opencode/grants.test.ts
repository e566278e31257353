// A session's own `always` answers on a shared OpenCode server (src/agents/opencode/grants.ts):
// which later requests they cover, what they never cover, and which waiting requests they answer.
import { describe, expect, it } from 'vitest';
import { askOf, repliedOf, SessionGrants, type Ask } from '../../../src/agents/opencode/grants.js';

const ask = (id: string, permission: string, patterns: string[], always: string[] = []): Ask => ({ id, permission, patterns, always });

describe('SessionGrants', () => {
  it('covers nothing until the session answers always, then what its always patterns match, per permission', () => {
    const g = new SessionGrants();
    const first = ask('per_1', 'bash', ['echo one'], ['echo *']);
    expect(g.covers(first)).toBe(false);
    g.asked(first);
    expect(g.grant('per_1')).toEqual([]);
    expect(g.covers(ask('per_2', 'bash', ['echo two']))).toBe(true);
    expect(g.covers(ask('per_3', 'bash', ['echo two', 'rm -rf /']))).toBe(false); // every pattern must match
    expect(g.covers(ask('per_4', 'bash', ['rm -rf /']))).toBe(false);
    expect(g.covers(ask('per_5', 'edit', ['echo two']))).toBe(false); // another permission
    expect(g.covers(ask('per_6', 'bash', []))).toBe(false); // nothing to match: asked
  });

  it('matches * only: other characters, regex ones included, stand for themselves', () => {
    const g = new SessionGrants();
    g.asked(ask('per_1', 'bash', ['git log'], ['git log .?(x)']));
    g.grant('per_1');
    expect(g.covers(ask('per_2', 'bash', ['git log .?(x)']))).toBe(true);
    expect(g.covers(ask('per_3', 'bash', ['git log a(x)']))).toBe(false);
    expect(g.covers(ask('per_4', 'bash', ['git log .x']))).toBe(false);
    g.asked(ask('per_5', 'edit', ['src/a.ts'], ['*']));
    g.grant('per_5');
    expect(g.covers(ask('per_6', 'edit', ['any/path\nwith a newline']))).toBe(true);
  });

  it('an always answer returns the waiting requests it now covers; settled ones are forgotten', () => {
    const g = new SessionGrants();
    g.asked(ask('per_1', 'edit', ['a.txt'], ['*']));
    g.asked(ask('per_2', 'edit', ['b.txt'], ['*']));
    g.asked(ask('per_3', 'bash', ['ls'], ['ls *']));
    expect(g.showReply('per_2')).toBe(true); // answered before the always: no longer waiting
    g.asked(ask('per_4', 'edit', ['c.txt'], ['*']));
    expect(g.grant('per_1').map((a) => a.id)).toEqual(['per_4']);
  });

  it('a request answered by a grant is not shown, nor is its reply; other replies are', () => {
    const g = new SessionGrants();
    g.answeredSilently('per_9');
    expect(g.showReply('per_9')).toBe(false);
    expect(g.showReply('per_9')).toBe(true); // once only
    expect(g.showReply('per_8')).toBe(true);
  });

  it('reads requests and replies from OpenCode events, and nothing else', () => {
    const asked = { type: 'permission.asked', properties: { id: 'per_1', sessionID: 'ses_1', permission: 'edit', patterns: ['a.txt'], always: ['*'], metadata: {} } };
    expect(askOf(asked)).toEqual({ id: 'per_1', permission: 'edit', patterns: ['a.txt'], always: ['*'] });
    expect(askOf({ type: 'permission.asked', properties: { id: 7 } })).toBeUndefined();
    expect(askOf({ type: 'permission.v2.asked', properties: asked.properties })).toBeUndefined();
    expect(repliedOf({ type: 'permission.replied', properties: { sessionID: 'ses_1', requestID: 'per_1', reply: 'once' } })).toBe('per_1');
    expect(repliedOf({ type: 'question.replied', properties: { requestID: 'que_1' } })).toBeUndefined();
  });
});
