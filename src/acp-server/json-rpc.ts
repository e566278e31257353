// JSON-RPC 2.0 as the ACP server side speaks it: one message per text frame (WebSocket) or line
// (the stdio bridge). Parsing a frame, the standard error codes, and a catalogue error (src/errors.ts)
// as a JSON-RPC error whose `data` is the problem the HTTP API would have answered with.
import { ApiError } from '../errors.js';
import { isObject } from '../util/is-object.js';
import { parseBounded } from '../util/json-limits.js';

export type RpcId = string | number;

export interface RpcRequest {
  jsonrpc: '2.0';
  id: RpcId;
  method: string;
  params?: unknown;
}
export interface RpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}
export interface RpcResponse {
  jsonrpc: '2.0';
  id: RpcId | null;
  result?: unknown;
  error?: RpcErrorBody;
}
export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}
export type RpcMessage = RpcRequest | RpcNotification | RpcResponse;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** ACP's own code for an unknown resource (a session id). */
export const RESOURCE_NOT_FOUND = -32002;

/** A JSON-RPC error a handler throws; the connection answers the request with it. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  body(): RpcErrorBody {
    return { code: this.code, message: this.message, ...(this.data === undefined ? {} : { data: this.data }) };
  }
}

/** One frame: a message, or the error response to send back (id null: the id could not be read). */
export function parseFrame(text: string): { message: RpcMessage } | { error: RpcResponse } {
  // The store's depth bound (src/util/json-limits.ts): a frame deeper than it never reaches a session.
  const parsed = parseBounded(text);
  if ('error' in parsed) return { error: errorResponse(null, new RpcError(PARSE_ERROR, `Parse error: ${parsed.error}`)) };
  const value = parsed.value;
  // ACP uses no batches: an array is one invalid request.
  if (!isObject(value) || value.jsonrpc !== '2.0') {
    return { error: errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request: expected one JSON-RPC 2.0 object')) };
  }
  const id = value.id;
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (typeof value.method === 'string') {
    if (id !== undefined && !validId) return { error: errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request: id must be a string or a number')) };
    return { message: value as unknown as RpcRequest | RpcNotification };
  }
  if (validId && ('result' in value || 'error' in value)) return { message: value as unknown as RpcResponse };
  return { error: errorResponse(validId ? (id as RpcId) : null, new RpcError(INVALID_REQUEST, 'Invalid request: neither a request nor a response')) };
}

export function isRequest(message: RpcMessage): message is RpcRequest {
  return 'method' in message && 'id' in message && message.id !== undefined;
}

export function isNotification(message: RpcMessage): message is RpcNotification {
  return 'method' in message && !('id' in message && message.id !== undefined);
}

export function errorResponse(id: RpcId | null, error: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error: error.body() };
}

/** Whatever a handler threw, as the error to answer with: a catalogue error keeps its problem. */
export function toRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof ApiError) {
    const code = err.code === 'session_not_found' ? RESOURCE_NOT_FOUND : err.status === 400 ? INVALID_PARAMS : INTERNAL_ERROR;
    return new RpcError(code, err.detail, err.toProblem());
  }
  return new RpcError(INTERNAL_ERROR, (err as Error)?.message ?? String(err));
}
