// agent_message_chunk, agent_thought_chunk and user_message_chunk → message items. Chunks stream as
// item.delta into one open message; it completes (with its whole text) when another stream or
// message id begins, a tool call starts, or the turn ends (closeMessage).
import type { ContentPart } from '../../schema/events.js';
import type { Draft, DraftItem } from '../types.js';
import type { ContentBlock } from './native.js';
import type { AcpState, OpenMessage, Out } from './state.js';

const PREFIX: Record<OpenMessage['stream'], string> = { agent: 'msg', thought: 'thought', user: 'user-msg' };

export function chunk(state: AcpState, stream: OpenMessage['stream'], block: ContentBlock, messageId: string | null): Out {
  const events: Draft[] = [];
  let open = state.open;
  let counter = state.counter;
  if (open && (open.stream !== stream || (messageId !== null && open.messageId !== null && open.messageId !== messageId))) {
    events.push(...completion(open));
    open = null;
  }
  if (!open) {
    counter++;
    open = { stream, key: `${PREFIX[stream]}:${counter}`, messageId, text: '', parts: [] };
  }
  const role = stream === 'user' ? 'user' : 'assistant';
  if (block.type === 'text' && typeof block.text === 'string') {
    // Thoughts stream as deltas too: the item's content says they are reasoning.
    if (block.text !== '') {
      events.push({ type: 'item.delta', key: open.key, native_item_id: open.messageId, delta: block.text, stub: { kind: 'message', role } });
    }
    open = { ...open, text: open.text + block.text };
  } else {
    open = { ...open, parts: [...open.parts, blockPart(block)] };
  }
  const lastMessage = stream === 'agent' ? open.key : state.lastMessage;
  return { state: { ...state, open, counter, lastMessage }, events };
}

/** Completes the open message, if any. */
export function closeMessage(state: AcpState): Out {
  if (!state.open) return { state, events: [] };
  return { state: { ...state, open: null }, events: completion(state.open) };
}

function completion(open: OpenMessage): Draft[] {
  const role = open.stream === 'user' ? 'user' : 'assistant';
  const text: ContentPart[] = open.text === '' ? [] : [open.stream === 'thought' ? { type: 'reasoning', text: open.text, visibility: 'public' } : { type: 'text', text: open.text }];
  const item: DraftItem = { key: open.key, native_item_id: open.messageId, kind: 'message', role, content: [...text, ...open.parts], status: 'completed' };
  return [{ type: 'item.completed', item }];
}

/** A content block that is not text, as a universal part. */
export function blockPart(block: ContentBlock): ContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text ?? '' };
    case 'image':
      // Inline image data has no path; its uri (when given) names it, the raw event keeps the data.
      return { type: 'image', path: block.uri ?? '(inline image)', mime: block.mimeType ?? null };
    case 'resource_link':
      return { type: 'file_ref', path: block.uri ?? block.name ?? '', action: 'read' };
    case 'resource':
      if (block.resource && typeof block.resource.text === 'string') return { type: 'text', text: block.resource.text };
      return { type: 'file_ref', path: block.resource?.uri ?? '', action: 'read' };
  }
  // audio, and kinds newer than this converter: kept whole as json (never lost, never unparsed).
  const { data, ...rest } = block;
  return { type: 'json', json: data === undefined ? rest : { ...rest, data: `(${data.length} base64 characters)` } };
}

/** The text of a content block, for a tool's output. */
export function blockText(block: ContentBlock): string | undefined {
  if (block.type === 'text') return block.text;
  if (block.type === 'resource') return block.resource?.text;
  return undefined;
}
