// Turn-level plumbing for the mock end-to-end tests: drive a turn over HTTP, wait for it to finish,
// and check the invariants every turn must keep whatever the command was.
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { Attachment } from '../../src/schema/api.js';
import { UniversalEvent, type EventType, type UniversalItem } from '../../src/schema/events.js';
import { getEvents, post, waitFor } from './helpers.js';

export type Ev = UniversalEvent;

export interface Turn {
  /** Sequence of the last event before the message was sent. */
  from: number;
  /** The events after `from`, up to the one the turn was awaited for. */
  events: Ev[];
}

export async function lastSequence(app: App, id: string): Promise<number> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/sessions/${id}` });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { eventCount: number }).eventCount;
}

/** Events after `from` once one of them has type `until` (polled, like a client would). */
export async function eventsUntil(app: App, id: string, from: number, until: EventType[] = ['turn.ended', 'session.ended'], timeoutMs = 10_000): Promise<Ev[]> {
  return waitFor(
    async () => {
      const events = await getEvents(app, id, from);
      return events.some((e) => until.includes(e.type)) ? events : undefined;
    },
    timeoutMs,
    `one of ${until.join(', ')} after sequence ${from}`,
  );
}

/** The ids of the permission requests among `events`. */
export function permissionIds(events: Ev[]): string[] {
  return events.flatMap((e) => (e.type === 'permission.requested' ? [e.data.permission_id] : []));
}

/** Answers one permission request over the API (204 expected). */
export async function replyPermission(app: App, id: string, permissionId: string, answer: 'once' | 'always' | 'reject'): Promise<void> {
  const res = await post(app, `/v1/sessions/${id}/permissions/${encodeURIComponent(permissionId)}/reply`, { reply: answer });
  expect(res.statusCode, res.body).toBe(204);
}

/** Runs a turn to its end, answering every permission request with `answer`; returns all its events. */
export async function turnAnswering(app: App, id: string, message: string, answer: 'once' | 'always' | 'reject', timeoutMs = 10_000): Promise<{ from: number; events: Ev[] }> {
  const from = await lastSequence(app, id);
  expect((await post(app, `/v1/sessions/${id}/messages`, { message })).statusCode).toBe(204);
  const answered = new Set<string>();
  for (;;) {
    const events = await eventsUntil(app, id, from, ['turn.ended', 'session.ended', 'permission.requested'], timeoutMs);
    const open = permissionIds(events).filter((p) => !answered.has(p));
    if (events.some((e) => e.type === 'turn.ended' || e.type === 'session.ended') && open.length === 0) return { from, events };
    for (const p of open) {
      answered.add(p);
      await replyPermission(app, id, p, answer);
    }
    if (open.length === 0) await new Promise((r) => setTimeout(r, 100));
    else await eventsUntil(app, id, from, ['turn.ended', 'session.ended', 'permission.resolved'], timeoutMs);
  }
}

/** Sends a message and waits for the turn to end or to pause for a HITL request. */
export async function sendTurn(
  app: App,
  id: string,
  message: string,
  options: { attachments?: Attachment[]; until?: EventType[]; timeoutMs?: number } = {},
): Promise<Turn> {
  const from = await lastSequence(app, id);
  const body = { message, ...(options.attachments ? { attachments: options.attachments } : {}) };
  const res = await post(app, `/v1/sessions/${id}/messages`, body);
  expect(res.statusCode, res.body).toBe(204);
  const until = options.until ?? ['turn.ended', 'session.ended', 'permission.requested', 'question.requested'];
  return { from, events: await eventsUntil(app, id, from, until, options.timeoutMs) };
}

/**
 * The invariants of one finished turn: schema-valid events, bracketed by turn.started/turn.ended
 * with one turn_id, every delta and completion preceded by its item's start, exactly one
 * synthetic user message carrying what was sent, no unparsed lines (unless expected), and a log
 * whose sequences are dense from 1.
 */
export async function expectWellFormedTurn(
  app: App,
  id: string,
  turn: Turn,
  message: string,
  /** userFrom 'agent': the agent reports the user message itself (Codex's userMessage item), so it
   *  is not the daemon's synthetic one and carries a native item id. */
  options: { unparsed?: number; userFrom?: 'daemon' | 'agent' } = {},
): Promise<void> {
  const all = await getEvents(app, id);
  expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1));
  const events = all.slice(turn.from);
  for (const e of events) expect(() => UniversalEvent.parse(e), JSON.stringify(e)).not.toThrow();

  const first = events[0];
  expect(first?.type).toBe('turn.started');
  const turnId = first?.type === 'turn.started' ? first.data.turn_id : undefined;
  expect(turnId).toMatch(/^turn_\d+$/);
  const endAt = events.findIndex((e) => e.type === 'turn.ended');
  expect(endAt, 'turn.ended is missing').toBeGreaterThan(0);
  const end = events[endAt];
  expect(end?.type === 'turn.ended' ? end.data.turn_id : undefined).toBe(turnId);
  // Nothing may belong to the turn after it ended. What may follow: the session's end, and status
  // items an agent reports while idle (Qwen Code's available commands can come after a first turn
  // on a loaded machine): those are the session's, not the turn's.
  const after = events.slice(endAt + 1).filter((e) => !((e.type === 'item.started' || e.type === 'item.completed') && e.data.item.kind === 'status'));
  expect(['', 'session.ended']).toContain(after.map((e) => e.type).join());
  expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1);

  const started = new Set<string>();
  const completed = new Set<string>();
  for (const e of events) {
    if (e.type === 'item.started') started.add(e.data.item.item_id);
    if (e.type === 'item.delta') expect(started.has(e.data.item_id), `delta #${e.sequence} before its item.started`).toBe(true);
    if (e.type === 'item.completed') {
      const itemId = e.data.item.item_id;
      expect(started.has(itemId), `item ${itemId} completed without item.started`).toBe(true);
      expect(completed.has(itemId), `item ${itemId} completed twice`).toBe(false);
      completed.add(itemId);
    }
  }
  // A finished turn leaves nothing open.
  expect([...started].filter((itemId) => !completed.has(itemId))).toEqual([]);

  const users = events.filter((e) => e.type === 'item.completed' && e.data.item.role === 'user');
  expect(users).toHaveLength(1);
  const user = users[0]!;
  const fromAgent = options.userFrom === 'agent';
  expect(user).toMatchObject(fromAgent ? { source: 'agent', synthetic: false } : { source: 'daemon', synthetic: true });
  const userItem = user.type === 'item.completed' ? user.data.item : undefined;
  expect(userItem).toMatchObject({ kind: 'message', status: 'completed', ...(fromAgent ? {} : { native_item_id: null }) });
  if (fromAgent) expect(userItem?.native_item_id).toEqual(expect.any(String));
  // Attachments, if any, follow the text part (checked by the tests that send them).
  expect(userItem?.content[0]).toEqual({ type: 'text', text: message });

  expect(events.filter((e) => e.type === 'agent.unparsed')).toHaveLength(options.unparsed ?? 0);
}

export function completedItems(events: Ev[]): UniversalItem[] {
  return events.flatMap((e) => (e.type === 'item.completed' ? [e.data.item] : []));
}

export function assistantMessages(events: Ev[]): UniversalItem[] {
  return completedItems(events).filter((i) => i.kind === 'message' && i.role === 'assistant');
}

export function textOf(item: UniversalItem | undefined): string {
  return (item?.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

export function deltasOf(events: Ev[], itemId: string): string[] {
  return events.flatMap((e) => (e.type === 'item.delta' && e.data.item_id === itemId ? [e.data.delta] : []));
}

export function ofType<T extends EventType>(events: Ev[], type: T): Extract<Ev, { type: T }>[] {
  return events.filter((e): e is Extract<Ev, { type: T }> => e.type === type);
}
