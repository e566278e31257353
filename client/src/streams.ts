// Reading a response body as a sequence of messages: SSE through eventsource-parser (a spec-exact
// parser: CR/LF variants, split lines, comments, BOM), NDJSON by lines. Both pull one chunk at a
// time and hand it on before reading the next, so a slow consumer slows the socket (TCP flow
// control) instead of filling memory.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface ReadHooks {
  /** Called for every chunk received, keep-alive comments included (the idle timer is re-armed here). */
  onChunk?: () => void;
  /** SSE comments (`: closed: …` says why the daemon ended a stream). */
  onComment?: (comment: string) => void;
}

export async function* sseMessages(body: ReadableStream<Uint8Array>, hooks: ReadHooks = {}): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => queue.push(message), ...(hooks.onComment ? { onComment: hooks.onComment } : {}) });
  const decoder = new TextDecoder();
  for await (const chunk of chunks(body, hooks)) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
  // A frame cut off by the end of the stream is never dispatched: it is read again after a reconnect.
}

export async function* ndjsonLines(body: ReadableStream<Uint8Array>, hooks: ReadHooks = {}): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let partial = '';
  for await (const chunk of chunks(body, hooks)) {
    const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') yield line;
  }
  // A last line without its newline was cut off: the daemon ends every line with one.
}

async function* chunks(body: ReadableStream<Uint8Array>, hooks: ReadHooks): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      hooks.onChunk?.();
      yield value;
    }
  } finally {
    // The consumer stopped early (break, error): release the connection instead of leaving it open.
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
