// Every request the page makes goes through this fetch (handed to the client as its `fetch`), so
// the page can show them and copy any of them as the equivalent curl command, and can tell when an
// event stream drops and when it is resumed: the client reconnects by itself, and its reconnection
// is visible here as a new stream request carrying Last-Event-ID.
export interface RecordedRequest {
  id: number;
  time: string;
  method: string;
  url: string;
  /** Request headers, the Authorization header left out (curl gets "$AGENTWIRE_TOKEN" instead). */
  headers: [string, string][];
  body?: string;
  authorized: boolean;
  status?: number;
}

export type StreamState =
  | { state: 'connecting' }
  | { state: 'live' }
  | { state: 'lost' }
  | { state: 'resumed'; after: number };

type Listener = () => void;

/** The key of the daemon-wide feed's stream in `streams` (session ids never contain '*'). */
export const FEED_STREAM = '*';

const KEEP = 200;

export class RequestLog {
  readonly requests: RecordedRequest[] = [];
  /** The state of the last event stream opened per session id (the daemon-wide feed: FEED_STREAM). */
  readonly streams = new Map<string, StreamState>();
  private listeners = new Set<Listener>();
  private next = 1;

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** A fetch that records, then calls the browser's. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input instanceof Request ? input.clone() : input, init);
    const headers = [...request.headers.entries()];
    const entry: RecordedRequest = {
      id: this.next++,
      time: new Date().toISOString(),
      method: request.method,
      url: request.url,
      headers: headers.filter(([name]) => name !== 'authorization'),
      authorized: headers.some(([name]) => name === 'authorization'),
    };
    if (init?.body !== undefined && init.body !== null) entry.body = typeof init.body === 'string' ? init.body : '[binary body]';
    this.requests.push(entry);
    if (this.requests.length > KEEP) this.requests.splice(0, this.requests.length - KEEP);
    const stream = /^\/v1\/(?:sessions\/([^/]+)\/)?events\/sse$/.exec(new URL(request.url).pathname);
    const sessionId = stream ? (stream[1] === undefined ? FEED_STREAM : decodeURIComponent(stream[1])) : undefined;
    const resumeFrom = Number(request.headers.get('last-event-id') ?? NaN);
    if (sessionId && !(this.streams.get(sessionId)?.state === 'lost')) this.streams.set(sessionId, { state: 'connecting' });
    this.changed();
    let response: Response;
    try {
      response = await window.fetch(input, init);
    } catch (err) {
      if (sessionId) this.streams.set(sessionId, { state: 'lost' });
      this.changed();
      throw err;
    }
    entry.status = response.status;
    if (!sessionId || !response.ok || !response.body) {
      this.changed();
      return response;
    }
    this.streams.set(sessionId, Number.isFinite(resumeFrom) && resumeFrom > 0 ? { state: 'resumed', after: resumeFrom } : { state: 'live' });
    this.changed();
    return new Response(this.watch(sessionId, response.body), { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  /** The stream's bytes, unchanged; a read that fails (the connection dropped) marks it lost. */
  private watch(sessionId: string, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          this.streams.set(sessionId, { state: 'lost' });
          this.changed();
          controller.error(err);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }
}

/** The request as a curl command line; the token as "$AGENTWIRE_TOKEN", never its value. */
export function curlOf(r: RecordedRequest): string {
  const parts = ['curl'];
  if (r.url.includes('/events/sse') || r.url.includes('/messages/stream')) parts.push('-N');
  if (r.method !== 'GET' && !(r.method === 'POST' && r.body !== undefined)) parts.push('-X', r.method);
  parts.push(quote(r.url));
  if (r.authorized) parts.push('-H', '"Authorization: Bearer $AGENTWIRE_TOKEN"');
  for (const [name, value] of r.headers) parts.push('-H', quote(`${name}: ${value}`));
  if (r.body !== undefined) parts.push('--data-raw', quote(r.body));
  return parts.join(' ');
}

/** POSIX shell single quotes: nothing inside is expanded. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
