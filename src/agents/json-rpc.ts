// A small JSON-RPC peer over a child process's stdio: one JSON object per line, no Content-Length
// framing. Shared by the Codex driver (`codex app-server` neither sends nor needs a `jsonrpc`
// member) and the ACP drivers (JSON-RPC 2.0 proper: `jsonrpc: "2.0"` on every message we write,
// the `jsonrpc` option). A received message never needs the member.
// Our request ids and the other side's request ids are two independent counters (Codex 0.171.0:
// both start at 0, test/agents/codex/fixtures/recorded/README.md), so a message is told apart by its shape:
//
//   id + method            a request from the server (approvals, user input): onRequest
//   method, no id          a notification: onNotification
//   id, no method          a response; ours when the id is one of our pending requests
//
// Every received message, responses included, is also handed to `native` (the converter sees the
// whole stream); a line that is not JSON reaches `native` as its text and nothing else.
import { ChildProcess, type SpawnOptions } from '../process/spawn.js';
import { parseNativeLine } from './process-options.js';
import { isObject } from '../util/is-object.js';

export type RpcId = number | string;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcServerRequest {
  id: RpcId;
  method: string;
  params?: unknown;
}

export interface RpcNotification {
  method: string;
  params?: unknown;
}

export interface PeerOptions {
  /** Write `"jsonrpc": "2.0"` on every outgoing message (strict JSON-RPC 2.0 peers need it). */
  jsonrpc?: boolean;
}

export interface PeerHandlers {
  /** Every received message (or the raw text of a line that was not JSON), in stdout order. */
  native(message: unknown): void;
  onRequest?(request: RpcServerRequest): void;
  onNotification?(notification: RpcNotification): void;
}

/** A JSON-RPC error answer to one of our requests. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcErrorObject,
  ) {
    super(error.message);
    this.name = 'RpcError';
  }
}

const isId = (v: unknown): v is RpcId => typeof v === 'number' || typeof v === 'string';

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class JsonRpcPeer {
  private nextId = 0;
  private readonly pending = new Map<RpcId, Pending>();
  private closedReason: string | undefined;

  constructor(
    private readonly writeLine: (line: string) => Promise<void>,
    private readonly handlers: PeerHandlers,
    private readonly options: PeerOptions = {},
  ) {}

  /** Spawns `options.command` and speaks JSON-RPC over its stdio; the peer fails every pending
   *  request once the process exits. */
  static async spawn(options: SpawnOptions, handlers: PeerHandlers, peerOptions: PeerOptions = {}): Promise<{ peer: JsonRpcPeer; child: ChildProcess }> {
    let peer: JsonRpcPeer | undefined;
    const early: unknown[] = [];
    const child = await ChildProcess.start(options, (line) => {
      const message = parseNativeLine(line.text, line.truncated);
      if (peer) peer.receive(message);
      else early.push(message);
    });
    peer = new JsonRpcPeer((line) => child.writeLine(line), handlers, peerOptions);
    for (const message of early) peer.receive(message);
    void child.exited.then((exit) => peer!.close(`the process exited (${exit.signal ?? `code ${exit.exitCode}`})`));
    return { peer, child };
  }

  /** Sends a request; resolves with its result, rejects with the error's message, on timeout, or
   *  when the peer closes first. */
  request<T = unknown>(method: string, params: unknown, timeoutMs: number): Promise<T> {
    if (this.closedReason) return Promise.reject(new Error(`${method}: ${this.closedReason}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject, timer });
      this.write(params === undefined ? { id, method } : { id, method, params }).catch((err: Error) => {
        if (this.pending.delete(id)) {
          clearTimeout(timer);
          reject(err);
        }
      });
    });
  }

  notify(method: string, params?: unknown): Promise<void> {
    return this.write(params === undefined ? { method } : { method, params });
  }

  /** Answers a request the server sent. */
  respond(id: RpcId, result: unknown): Promise<void> {
    return this.write({ id, result });
  }

  respondError(id: RpcId, error: RpcErrorObject): Promise<void> {
    return this.write({ id, error });
  }

  /** Number of our requests still waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** One received message (parsed JSON, or the raw text of a line that was not JSON). */
  receive(message: unknown): void {
    if (isObject(message)) {
      const hasMethod = typeof message.method === 'string';
      if (hasMethod && isId(message.id)) {
        this.deliverNative(message);
        this.handlers.onRequest?.({ id: message.id, method: message.method as string, params: message.params });
        return;
      }
      if (hasMethod) {
        this.deliverNative(message);
        this.handlers.onNotification?.({ method: message.method as string, params: message.params });
        return;
      }
      if (isId(message.id)) {
        // Forwarded first, so the converter has seen a response before whoever awaited it acts on it.
        this.deliverNative(message);
        const waiting = this.pending.get(message.id);
        if (waiting) {
          this.pending.delete(message.id);
          clearTimeout(waiting.timer);
          if (isObject(message.error)) {
            const error = message.error as unknown as RpcErrorObject;
            waiting.reject(new RpcError(waiting.method, { ...error, message: String(error.message ?? 'unknown error') }));
          } else waiting.resolve(message.result);
        }
        return;
      }
    }
    this.deliverNative(message);
  }

  /** Fails every pending request; later requests fail at once. */
  close(reason: string): void {
    this.closedReason ??= reason;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new Error(`${p.method}: ${reason}`));
    }
  }

  private deliverNative(message: unknown): void {
    this.handlers.native(message);
  }

  private write(message: Record<string, unknown>): Promise<void> {
    return this.writeLine(JSON.stringify(this.options.jsonrpc ? { jsonrpc: '2.0', ...message } : message));
  }
}
