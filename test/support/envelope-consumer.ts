// A consumer of POST /stream written the way the chat backend of the sandbox envelope reference
// reads a sandbox: fetch with an AbortSignal, the body read as NDJSON, each line parsed by its own
// strict discriminated union of the four types (an unknown type or an unknown top-level key is
// rejected, not skipped), steps correlated by id (a running line first, then exactly one
// succeeded or failed line), and exactly one terminal line, result or error, with nothing after
// it. It shares no code with the daemon's schema on purpose: it is the caller's view.
import { z } from 'zod';

const ts = z.number().int().positive();
const Log = z.object({ type: z.literal('log'), level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string(), ts }).strict();
const Step = z
  .object({
    type: z.literal('step'),
    id: z.string().min(1),
    name: z.string().min(1),
    status: z.enum(['running', 'succeeded', 'failed']),
    args: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.string().optional(),
    durationMs: z.number().int().min(0).optional(),
    ts,
  })
  .strict();
const Result = z.object({ type: z.literal('result'), message: z.string(), ts }).strict();
const ErrorLine = z.object({ type: z.literal('error'), code: z.string().min(1), message: z.string(), ts }).strict();
export const EnvelopeLine = z.discriminatedUnion('type', [Log, Step, Result, ErrorLine]);
export type EnvelopeLine = z.infer<typeof EnvelopeLine>;
type StepLine = z.infer<typeof Step>;

export interface RenderedStep {
  id: string;
  name: string;
  args: unknown;
  status: 'running' | 'succeeded' | 'failed';
  result?: unknown;
  error?: string;
  durationMs?: number;
}

export interface Rendered {
  status: number;
  headers: Headers;
  lines: EnvelopeLine[];
  logs: Array<z.infer<typeof Log>>;
  /** Steps in the order they started, each updated in place by its final line (the frontend's row). */
  steps: RenderedStep[];
  result?: string;
  error?: { code: string; message: string };
  /** The caller aborted before the terminal line. */
  aborted: boolean;
}

export interface DispatchOptions {
  /** Abort after the first line this returns true for (the caller cancels mid-stream). */
  abortWhen?: (line: EnvelopeLine) => boolean;
  token?: string;
  path?: string;
}

/** POSTs the dispatch and reads the whole stream, checking every rule as it goes; throws on a broken one. */
export async function dispatch(base: string, body: unknown, options: DispatchOptions = {}): Promise<Rendered> {
  const controller = new AbortController();
  const res = await fetch(`${base}${options.path ?? '/stream'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const out: Rendered = { status: res.status, headers: res.headers, lines: [], logs: [], steps: [], aborted: false };
  if (res.status !== 200) {
    out.error = (await res.json()) as { code: string; message: string };
    return out;
  }
  if (!res.headers.get('content-type')?.startsWith('application/x-ndjson')) throw new Error(`content-type ${res.headers.get('content-type')}`);
  const correlate = new Correlator(out);
  try {
    for await (const line of ndjsonLines(res.body!)) {
      correlate.take(line);
      if (options.abortWhen?.(line) && out.result === undefined && out.error === undefined) {
        out.aborted = true;
        controller.abort();
        break;
      }
    }
  } catch (err) {
    if (!out.aborted) throw err;
  }
  if (!out.aborted) correlate.finished();
  return out;
}

/** Lines of an NDJSON body, each parsed strictly. */
async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<EnvelopeLine> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (text.trim() === '') throw new Error('an empty line in the stream');
      yield EnvelopeLine.parse(JSON.parse(text));
    }
  }
  if (buffered !== '') throw new Error(`the stream ended inside a line: ${buffered.slice(0, 200)}`);
}

class Correlator {
  private readonly open = new Map<string, RenderedStep>();
  private readonly closed = new Set<string>();

  constructor(private readonly out: Rendered) {}

  take(line: EnvelopeLine): void {
    const out = this.out;
    if (out.result !== undefined || out.error !== undefined) throw new Error(`a line after the terminal line: ${JSON.stringify(line)}`);
    out.lines.push(line);
    if (line.type === 'log') out.logs.push(line);
    else if (line.type === 'step') this.step(line);
    else if (line.type === 'result') out.result = line.message;
    else out.error = { code: line.code, message: line.message };
  }

  private step(line: StepLine): void {
    if (line.status === 'running') {
      if (this.open.has(line.id) || this.closed.has(line.id)) throw new Error(`step ${line.id} started twice`);
      const step: RenderedStep = { id: line.id, name: line.name, args: line.args, status: 'running' };
      this.open.set(line.id, step);
      this.out.steps.push(step);
      return;
    }
    const step = this.open.get(line.id);
    if (!step) throw new Error(`step ${line.id} ended without a running line (or twice)`);
    if (line.name !== step.name) throw new Error(`step ${line.id} changed its name`);
    if (line.durationMs === undefined) throw new Error(`step ${line.id} ended without durationMs`);
    if (line.status === 'succeeded' && line.error !== undefined) throw new Error(`step ${line.id} succeeded with an error`);
    if (line.status === 'failed' && line.error === undefined) throw new Error(`step ${line.id} failed without an error`);
    Object.assign(step, { status: line.status, durationMs: line.durationMs }, line.status === 'succeeded' ? { result: line.result } : { error: line.error });
    this.open.delete(line.id);
    this.closed.add(line.id);
  }

  finished(): void {
    const terminal = this.out.lines.filter((l) => l.type === 'result' || l.type === 'error');
    if (terminal.length !== 1) throw new Error(`${terminal.length} terminal lines`);
    if (this.open.size > 0) throw new Error(`steps left running: ${[...this.open.keys()].join(', ')}`);
  }
}
