// One AbortController per request that remembers why it fired: the caller's signal, a timeout, or
// the client closing a stream. The error a failed fetch becomes depends on that reason, and a
// timeout must not look like an abort the caller asked for.
import { AgentwireError } from './errors.js';

export type CancelReason = 'aborted' | 'timeout' | 'idle' | 'closed';

export class Cancel {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly unlink: () => void;
  why: CancelReason | undefined;

  constructor(private readonly parent?: AbortSignal) {
    const onAbort = () => this.abort('aborted');
    if (parent?.aborted) onAbort();
    else parent?.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => parent?.removeEventListener('abort', onAbort);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Fires `why` after `ms` unless re-armed or disarmed first; 0 or undefined: no timer. */
  arm(ms: number | undefined, why: 'timeout' | 'idle' = 'timeout'): void {
    this.disarm();
    if (ms && ms > 0 && Number.isFinite(ms)) this.timer = setTimeout(() => this.abort(why), ms);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  abort(why: CancelReason): void {
    this.why ??= why;
    this.disarm();
    this.controller.abort();
  }

  /** Stops listening to the parent and clears the timer (the request is over). */
  dispose(): void {
    this.disarm();
    this.unlink();
  }

  /** What a failure of a request under this cancel means: timeout, abort, or the network. */
  errorFor(error: unknown, what: string, timeoutMs?: number): AgentwireError {
    if (AgentwireError.is(error)) return error;
    if (this.why === 'aborted' || (this.why === undefined && this.parent?.aborted)) {
      return new AgentwireError('aborted', `${what} was aborted`, { cause: this.parent?.reason ?? error });
    }
    if (this.why === 'timeout') return new AgentwireError('timeout', `${what} got no answer within ${timeoutMs} ms`, { cause: error });
    if (this.why === 'idle') return new AgentwireError('timeout', `${what} was silent for ${timeoutMs} ms`, { cause: error });
    const message = error instanceof Error ? error.message : String(error);
    return new AgentwireError('network_error', `${what} failed: ${message}`, { cause: error });
  }
}

/** Resolves after `ms`, or early (false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
