// The one place that talks HTTP: base URL, bearer token, JSON bodies, timeouts and aborts, and the
// mapping of every failure to an AgentwireError. Only `fetch` and web streams are used, so the same
// code runs in Node ≥ 20 and in browsers.
import { Cancel } from './cancel.js';
import { AgentwireError, errorFromResponse } from './errors.js';
import { fillPath, type Answer, type Method, type Operation, type PathParams, type PathWith, type Query, type RequestBody } from './paths.js';
import type { CallOptions } from './types.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The daemon's address, e.g. `http://127.0.0.1:2468`; `''` for the page's own origin in a browser. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` on every request (streams included). */
  token?: string;
  /** A fetch implementation; default the global `fetch`, looked up at each call. */
  fetch?: FetchLike;
  /** Default `timeoutMs` of every call that has no default of its own; 30 000 unless set. */
  timeoutMs?: number;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
}

export interface RequestOptions extends CallOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  accept?: string;
}

/** A call of one operation: its body and query typed by the document. */
export type OperationOptions<O> = CallOptions & { body?: RequestBody<O>; query?: Query<O> };

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Creating (or forking) a session waits for its agent to start, and may first install its CLI (autoInstall). */
export const CREATE_TIMEOUT_MS = 300_000;

export class Transport {
  readonly baseUrl: string;
  readonly timeoutMs: number;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * One operation of openapi.json, named by its method and path key, its path parameters filled
   * in: `call('post', '/v1/sessions/{id}/fork', { id }, { body })`. Body, query and answer are the
   * generated types (paths.ts), so a call the document does not describe does not compile.
   */
  call<M extends Method, P extends PathWith<M>>(method: M, path: P, params: PathParams<P>, options: OperationOptions<Operation<P, M>> = {}): Promise<Answer<Operation<P, M>>> {
    return this.json(method.toUpperCase(), fillPath(path, params), options as RequestOptions);
  }

  /** A request whose answer is JSON (or nothing, for 204/202). */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const cancel = new Cancel(options.signal);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    cancel.arm(timeoutMs);
    const url = this.url(path, options.query);
    try {
      const response = await this.send(method, url, options, cancel.signal);
      // The body is part of the answer: the timeout still runs while it is read.
      const text = await response.text();
      if (text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw new AgentwireError('invalid_response', `${method} ${path} answered ${response.status} with a body that is not JSON`, {
          status: response.status,
          cause: error,
        });
      }
    } catch (error) {
      throw cancel.errorFor(error, `${method} ${path}`, timeoutMs);
    } finally {
      cancel.dispose();
    }
  }

  /**
   * A streaming request: resolves with the response once its head is in (the caller's `cancel`
   * timer, if armed, covers only that far), and leaves reading the body, and cancelling it, to the
   * caller. A non-2xx answer rejects with its problem.
   */
  async stream(method: string, path: string, options: RequestOptions, cancel: Cancel): Promise<Response> {
    const url = this.url(path, options.query);
    try {
      const response = await this.send(method, url, options, cancel.signal);
      if (!response.body) throw new AgentwireError('invalid_response', `${method} ${path} answered without a body`, { status: response.status });
      return response;
    } catch (error) {
      throw cancel.errorFor(error, `${method} ${path}`, options.timeoutMs ?? this.timeoutMs);
    }
  }

  private async send(method: string, url: string, options: RequestOptions, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...this.options.headers, ...options.headers };
    if (options.accept) headers.accept = options.accept;
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const doFetch = this.options.fetch ?? ((input: string, init: RequestInit) => globalThis.fetch(input, init));
    const response = await doFetch(url, { method, headers, signal, ...(body === undefined ? {} : { body }) });
    if (!response.ok) throw await errorFromResponse(response, method, url);
    return response;
  }

  url(path: string, query?: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }
}
