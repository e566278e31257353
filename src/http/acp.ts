// GET /v1/acp: the Agent Client Protocol over a WebSocket (docs/acp-server.md). The upgrade is a
// request like any other: the request gate has checked its Host, Origin and token (`?token=` too,
// since a browser cannot set headers on a WebSocket) before `check` runs, and `check` refuses an
// unknown `?agent=` while the answer can still be a problem. Each text frame is one JSON-RPC
// message for an AcpConnection (src/acp-server/); its sends are counted, so a client that does not
// read makes the connection stop reading the log instead of growing a buffer, and stop reading
// the client's frames too (each request is an answer to buffer): the socket is paused while over
// the mark, and a client that stays over it for STALL_MS is closed (1008) and cut.
import type { WebSocket } from 'ws';
import { requireDriver } from '../agents/registry.js';
import { AcpConnection } from '../acp-server/connection.js';
import { errorResponse, INVALID_REQUEST, RpcError } from '../acp-server/json-rpc.js';
import { acpLifetime } from '../acp-server/lifetime.js';
import { ApiError } from '../errors.js';
import { AgentId } from '../schema/agents.js';
import { empty } from '../schema/openapi-responses.js';
import { z } from '../schema/zod.js';
import { route } from './route.js';

/** Bytes a connection may have handed the socket and not yet written before it stops reading logs. */
const HIGH_WATER = 1024 * 1024;
/** How long a client may stay over HIGH_WATER (not reading what it asked for) before it is closed. */
export const STALL_MS = 10_000;
/** The close frame such a client gets (1008: policy violation), then the cut a second later. */
export const STALL_CLOSE = { code: 1008, reason: 'the client stopped reading: over 1 MiB unsent for 10 s' } as const;

const AcpQuery = z.object({ agent: AgentId.optional(), token: z.string().optional() }).strict();

/** The agent new sessions get when neither `?agent=` nor session/new's `_meta.agentwire.agent` says. */
export const DEFAULT_ACP_AGENT = 'claude';

const acpWebSocket = route({
  method: 'get', path: '/v1/acp', operationId: 'acpWebSocket', tag: 'acp', auth: 'bearer-or-query-token',
  summary: 'Agent Client Protocol over WebSocket: upgrade, then one JSON-RPC message per text frame',
  description:
    'The daemon as an ACP agent (protocol version 1) for any ACP client: initialize, session/new, session/load (replays the stored events; `_meta.agentwire.after_sequence` resumes after a sequence), session/resume (no replay), session/list, session/prompt (a failed turn is a JSON-RPC error), session/cancel, session/set_mode, session/close. Every session/update carries `_meta.agentwire.sequence`. A session made here ends when its client closes it or goes away for good, or after --acp-reconnect-grace without a reconnect, or idle past --acp-idle-ttl, unless made with `_meta.agentwire.keep`. See docs/acp-server.md. A GET without an upgrade is a 400.',
  query: { schema: AcpQuery, document: z.object({ agent: AgentId.optional().openapi({ description: 'The agent of sessions created on this connection (default claude)' }) }) },
  ok: { 101: empty('Switching Protocols: the connection is now a WebSocket carrying ACP') },
  errors: ['invalid_request', 'agent_not_available'],
  async handler() {
    throw new ApiError('invalid_request', 'GET /v1/acp is a WebSocket: send it with Upgrade: websocket (docs/acp-server.md).');
  },
  websocket: {
    check({ query }, { registry }) {
      const agent = query.agent ?? DEFAULT_ACP_AGENT;
      requireDriver(registry, agent, 'path.agent');
      return agent;
    },
    open(socket, agent, req, { sessions, registry, config, isDraining }) {
      const out = meteredSender(socket, () => connection.drained());
      const lifetime = acpLifetime(sessions, { idleTtlMs: config.acpIdleTtlMs, graceMs: config.acpReconnectGraceMs }, req.server.log);
      const connection = new AcpConnection(
        { sessions, registry, agent: agent as string, logger: req.log, lifetime },
        { send: (message) => out.send(JSON.stringify(message)), full: out.full },
      );
      socket.on('message', (data, isBinary) => {
        if (isBinary) return out.send(JSON.stringify(errorResponse(null, new RpcError(INVALID_REQUEST, 'ACP messages are text frames'))));
        connection.receive(Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8'));
      });
      // 1006: no close frame (a cut), the client may come back; any close frame means it is done.
      // A daemon that stops closes every socket itself (app.ts): its sessions are the stop's to
      // keep (durable store) or end, and its clients may come back to the next daemon.
      socket.on('close', (code) => {
        out.stop();
        connection.close(code !== 1006 && !isDraining());
      });
    },
  },
});

/**
 * Sends counted until the socket has written them. Over HIGH_WATER the socket stops reading the
 * client's frames (each would add an answer) and the followers stop reading logs (`full`); back
 * under it, both go on (`drained`). Over it for STALL_MS, the client is closed and then cut.
 */
function meteredSender(ws: WebSocket, drained: () => void): { send(text: string): void; full(): boolean; stop(): void } {
  let buffered = 0;
  let stalled: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(stalled);
    stalled = undefined;
  };
  return {
    full: () => buffered > HIGH_WATER,
    stop,
    send(text) {
      if (ws.readyState !== ws.OPEN) return;
      const bytes = Buffer.byteLength(text);
      buffered += bytes;
      if (buffered > HIGH_WATER && !stalled) {
        ws.pause();
        stalled = setTimeout(() => {
          ws.close(STALL_CLOSE.code, STALL_CLOSE.reason);
          setTimeout(() => ws.terminate(), 1000).unref();
        }, STALL_MS).unref();
      }
      ws.send(text, () => {
        buffered -= bytes;
        // Crossing back under the mark: the client's frames and the followers read on.
        if (buffered > HIGH_WATER || buffered + bytes <= HIGH_WATER) return;
        stop();
        if (ws.readyState === ws.OPEN) ws.resume();
        drained();
      });
    },
  };
}

export const acpRoutes = [acpWebSocket];
