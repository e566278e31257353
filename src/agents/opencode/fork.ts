// Forking an OpenCode session (docs/opencode.md, "Queue, steer and fork"). OpenCode forks natively:
// `POST /session/{id}/fork {messageID?}` makes a new session with copies (new ids) of the messages
// strictly before `messageID`, or of all of them without it. Two things make that less simple
// than it looks:
//
// - The cut must be a real message id: the pinned server copies everything when it does not find
//   the id (no error), so an id is never made up. The daemon's events show only assistant messages
//   (user messages are not echoed), so the branch point is written down as the last assistant
//   message up to it (forkPoint, pure); the driver then reads the session's messages and cuts at
//   the one after it (the user message that started the next turn), or copies all when there is
//   none.
// - The copies are announced on the event stream after the answer: they are the conversation's
//   past, not the fork's new items, so the session drops every event about them (copiedMessages).
//
// The branch point names the session its message is in. A fork's log starts with its parent's
// events, whose messages are the parent's: a fork of a fork at one of those turns forks the
// session that has them under those ids, which holds the same conversation up to there.
import type { UniversalEvent } from '../../schema/events.js';
import { isObject } from '../../util/is-object.js';

/** Where a fork branches: after message `after` of native session `session`. */
export interface ForkPoint {
  session: string;
  after: string;
}

export function formatForkPoint(point: ForkPoint): string {
  return `${point.session}/${point.after}`;
}

export function parseForkPoint(text: string): ForkPoint | undefined {
  const match = /^(ses[^/]+)\/(msg[^/]+)$/.exec(text);
  return match ? { session: match[1]!, after: match[2]! } : undefined;
}

/** AgentDriver.forkPoint: the last assistant message in the parent's events up to the branch
 *  point; undefined when none is there (no turn of it reached the model). */
export function opencodeForkPoint(events: readonly UniversalEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const point = assistantMessageOf(events[i]!.raw);
    if (point) return formatForkPoint(point);
  }
  return undefined;
}

/** The assistant message a native event is about (message.updated, a part, a delta). */
function assistantMessageOf(raw: unknown): ForkPoint | undefined {
  if (!isObject(raw) || !isObject(raw.properties)) return undefined;
  const p = raw.properties;
  const named = (session: unknown, message: unknown) => (typeof session === 'string' && typeof message === 'string' ? { session, after: message } : undefined);
  switch (raw.type) {
    case 'message.updated':
      return isObject(p.info) && p.info.role === 'assistant' ? named(p.info.sessionID, p.info.id) : undefined;
    case 'message.part.updated':
      // User message parts make no events, so a part in the log is an assistant message's.
      return isObject(p.part) ? named(p.part.sessionID, p.part.messageID) : undefined;
    case 'message.part.delta':
      return named(p.sessionID, p.messageID);
  }
  return undefined;
}

/** A message as GET /session/{id}/message lists it (only what the fork reads). */
interface Listed {
  info: { id: string };
}

/** The messageID to fork `point.session` with, so that the copy ends with `point.after`: the
 *  next message's id, or undefined (copy all) when it is the last. Throws when it is not there. */
export function cutAfter(messages: unknown, point: ForkPoint): string | undefined {
  const ids = listedIds(messages);
  const i = ids.indexOf(point.after);
  if (i < 0) throw new Error(`message ${point.after} is not in session ${point.session}`);
  return ids[i + 1];
}

/** The ids of the messages a GET /session/{id}/message answer lists, in order. */
export function listedIds(messages: unknown): string[] {
  if (!Array.isArray(messages)) throw new Error(`the message list is not an array: ${JSON.stringify(messages).slice(0, 200)}`);
  return messages.map((m: Listed) => {
    if (!isObject(m) || !isObject(m.info) || typeof m.info.id !== 'string') throw new Error('a listed message has no id');
    return m.info.id;
  });
}

/** The message an event is about, for the events that are about one. */
export function messageOf(event: unknown): string | undefined {
  if (!isObject(event) || !isObject(event.properties)) return undefined;
  const p = event.properties;
  if (event.type === 'message.updated' && isObject(p.info) && typeof p.info.id === 'string') return p.info.id;
  if (isObject(p.part) && typeof p.part.messageID === 'string') return p.part.messageID;
  return typeof p.messageID === 'string' ? p.messageID : undefined;
}
