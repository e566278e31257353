// The official ACP TypeScript SDK's client side (@agentclientprotocol/sdk), driving agentwire as
// its agent over either transport: a WebSocket to GET /v1/acp (the SDK's own ws stream, with the
// `ws` constructor) or the stdio of `agentwire acp` (the SDK's ndJsonStream). It records what the
// agent sends (session/update notifications, `_agentwire/event` notifications) and answers the
// agent's requests (permissions, elicitations) with what the test chose.
import { Readable, Writable } from 'node:stream';
import { client, ndJsonStream, type ClientConnection, type AnyMessage, type SessionNotification, type Stream } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { WebSocket } from 'ws';
import type { UniversalEvent } from '../../src/schema/events.js';

export interface Recorded {
  /** session/update notifications, in arrival order. */
  updates: SessionNotification[];
  /** `_agentwire/event` notifications: the universal events ACP has no update for. */
  events: { sessionId: string; event: UniversalEvent }[];
  /** Requests the agent made (method, params), in arrival order. */
  requests: { method: string; params: Record<string, unknown> }[];
  /** Methods of the agent's requests it withdrew ($/cancel_request) before they were answered. */
  withdrawn: string[];
  /** The sequence each update or event named, in arrival order. */
  arrivals: { sessionId: string; sequence: number }[];
}

export interface AcpTestClient extends Recorded {
  connection: ClientConnection;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  /** How the next permission requests are answered: an optionId, or 'cancelled'. */
  answer: { permission: (params: Record<string, unknown>) => string | 'cancelled' | Promise<string>; elicitation?: (params: Record<string, unknown>) => Record<string, unknown> };
  /** Every sequence named by what arrived (updates and events), in arrival order. */
  sequences(sessionId: string): number[];
  /** Closes the connection the normal way (a WebSocket close frame; for stdio, the caller ends stdin). */
  close(): void;
  /** WebSocket only: the TCP connection dies without a close frame (the daemon sees 1006, a cut). */
  cut(): void;
}

export function connectWs(url: string, token: string | undefined): AcpTestClient {
  const sockets: WebSocket[] = [];
  // The SDK makes the socket; this keeps a hand on it to cut it.
  class Kept extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets.push(this);
    }
  }
  const stream = createWebSocketStream(url, { WebSocket: Kept as never, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  const client = makeClient(stream as Stream);
  client.cut = () => {
    for (const ws of sockets) ws.terminate();
    client.close();
  };
  return client;
}

export function connectStdio(stdin: NodeJS.WritableStream, stdout: NodeJS.ReadableStream): AcpTestClient {
  const stream = ndJsonStream(Writable.toWeb(stdin as Writable) as WritableStream<Uint8Array>, Readable.toWeb(stdout as Readable) as ReadableStream<Uint8Array>);
  return makeClient(stream);
}

function makeClient(stream: Stream): AcpTestClient {
  const recorded: Recorded = { updates: [], events: [], requests: [], arrivals: [], withdrawn: [] };
  const answer: AcpTestClient['answer'] = { permission: () => 'once' };
  const app = client({ name: 'agentwire-tests' })
    .onNotification('session/update', ({ params }) => {
      recorded.updates.push(params);
    })
    .onNotification('*', ({ method, params }) => {
      if (method !== '_agentwire/event') return;
      const p = params as { sessionId: string; event: UniversalEvent };
      recorded.events.push(p);
    })
    .onRequest('session/request_permission', async ({ params, signal }) => {
      recorded.requests.push({ method: 'session/request_permission', params: params as unknown as Record<string, unknown> });
      signal.addEventListener('abort', () => recorded.withdrawn.push('session/request_permission'));
      const chosen = await answer.permission(params as unknown as Record<string, unknown>);
      return { outcome: chosen === 'cancelled' ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: chosen } };
    })
    .onRequest('elicitation/create', ({ params }) => {
      recorded.requests.push({ method: 'elicitation/create', params: params as unknown as Record<string, unknown> });
      return (answer.elicitation?.(params as unknown as Record<string, unknown>) ?? { action: 'decline' }) as never;
    });
  // Arrivals are recorded off the wire, before the SDK dispatches them (its handlers of different
  // methods may run in another order than the messages came).
  const tap = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      const m = message as { method?: string; params?: { sessionId?: string; _meta?: { agentwire?: { sequence?: number } }; event?: UniversalEvent } };
      if (m.method === 'session/update') recorded.arrivals.push({ sessionId: m.params!.sessionId!, sequence: m.params!._meta!.agentwire!.sequence! });
      if (m.method === '_agentwire/event') recorded.arrivals.push({ sessionId: m.params!.sessionId!, sequence: m.params!.event!.sequence });
      controller.enqueue(message);
    },
  });
  const connection = app.connect({ writable: stream.writable, readable: stream.readable.pipeThrough(tap) });
  return Object.assign(recorded, {
    connection,
    answer,
    request: <T>(method: string, params: unknown) => connection.agent.request<T>(method, params),
    sequences: (sessionId: string) => recorded.arrivals.filter((a) => a.sessionId === sessionId).map((a) => a.sequence),
    close: () => connection.close(),
    cut: () => {
      throw new Error('cut() is for WebSocket clients');
    },
  });
}
