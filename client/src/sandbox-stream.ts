// client.stream(): POST /stream, the sandbox stream (docs/stream.md), as an async iterator of its
// typed lines (log, step, result, error). It ends after the terminal line (result or error), the
// one line every stream the daemon ends has. Aborting the signal, or leaving the loop early,
// closes the connection, and the daemon stops the turn (and ends a session it created for it).
import { Cancel } from './cancel.js';
import { AgentwireError } from './errors.js';
import { ndjsonLines } from './streams.js';
import { CREATE_TIMEOUT_MS, type Transport } from './transport.js';
import type { CallOptions, StreamLine, StreamRequest } from './types.js';

export interface StreamOptions extends CallOptions {
  /** `timeoutMs` covers the answer's head only: the session's start (an agent may be installed
   *  first, as in a create) and the turn's dispatch. Default CREATE_TIMEOUT_MS. The turn itself
   *  runs as long as it runs; abort the signal to stop it. */
  timeoutMs?: number;
}

const TYPES = new Set(['log', 'step', 'result', 'error']);

export async function* sandboxStream(transport: Transport, body: StreamRequest, options: StreamOptions = {}): AsyncGenerator<StreamLine, void, undefined> {
  const cancel = new Cancel(options.signal);
  const timeoutMs = options.timeoutMs ?? CREATE_TIMEOUT_MS;
  try {
    cancel.arm(timeoutMs);
    const response = await transport.stream('POST', '/stream', { body, accept: 'application/x-ndjson', timeoutMs }, cancel);
    cancel.disarm();
    for await (const text of ndjsonLines(response.body!)) {
      const line = parseLine(text);
      yield line;
      if (line.type === 'result' || line.type === 'error') return;
    }
    if (cancel.signal.aborted) throw cancel.errorFor(undefined, 'POST /stream', timeoutMs);
    throw new AgentwireError('stream_closed', 'POST /stream: the stream ended before its result or error line');
  } catch (error) {
    throw cancel.errorFor(error, 'POST /stream', timeoutMs);
  } finally {
    // Left early (break, a throw in the loop, the caller's abort): the connection closes, so the
    // daemon stops the turn. After the terminal line there is nothing more to read, and cancelling
    // a fetch's body alone leaves its socket open, so the request is aborted then too (as turn.ts does).
    cancel.abort('closed');
    cancel.dispose();
  }
}

function parseLine(text: string): StreamLine {
  try {
    const line = JSON.parse(text) as StreamLine;
    if (TYPES.has(line?.type)) return line;
  } catch {
    // reported below
  }
  throw new AgentwireError('invalid_response', `a POST /stream line that is not a log, step, result or error line: ${text.slice(0, 200)}`);
}
