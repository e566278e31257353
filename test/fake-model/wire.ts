// Shared wire helpers of the fake model server: ids that look like the real providers' ids, SSE and
// JSON writing, request-body reading, text chunking and rough token counts. No protocol knowledge.
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as zlib from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

/** Deterministic id source (mulberry32), so two runs of one scenario produce the same ids. */
export class Ids {
  private state: number;
  constructor(seed = 0x5eed) {
    this.state = seed >>> 0;
  }
  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  private chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
  /** Anthropic style: `msg_01…`, `toolu_01…`, `req_01…` (prefix, "01", 22 base62 characters). */
  anthropic(prefix: 'msg' | 'toolu' | 'req'): string {
    return `${prefix}_01${this.chars(BASE62, 22)}`;
  }
  /** OpenAI Responses style: `resp_…`, `msg_…`, `fc_…`, `rs_…`, `ctc_…` (48 hex characters). */
  openaiItem(prefix: 'resp' | 'msg' | 'fc' | 'rs' | 'ctc'): string {
    return `${prefix}_${this.chars(HEX, 48)}`;
  }
  /** `call_…` (tool call ids of both OpenAI APIs), 24 base62 characters. */
  call(): string {
    return `call_${this.chars(BASE62, 24)}`;
  }
  /** `chatcmpl-…`, 29 base62 characters. */
  chat(): string {
    return `chatcmpl-${this.chars(BASE62, 29)}`;
  }
  /** An opaque blob standing for a thinking signature or encrypted reasoning. */
  opaque(len = 64): string {
    return Buffer.from(this.chars(BASE62, len)).toString('base64');
  }
  requestId(): string {
    return `req_${this.chars(HEX, 32)}`;
  }
  /** Gemini `responseId`: 22 base62 characters, no prefix. */
  gemini(): string {
    return this.chars(BASE62, 22);
  }
}

/** Rough token count: a token per four characters, at least one. */
export function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * Splits text into a few deltas (at most `parts`) on word boundaries, so streamed text arrives in
 * several pieces whose concatenation is exactly the input. One word stays one delta.
 */
export function splitText(text: string, parts = 3): string[] {
  const words = text.match(/\s*\S+\s*/g);
  if (!words || words.length <= 1) return [text];
  const per = Math.ceil(words.length / parts);
  const out: string[] = [];
  // The first match takes any leading whitespace, the others their trailing: nothing is lost.
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''));
  return out;
}

/** Splits a JSON (or any) string into `parts` roughly equal character runs, none empty. */
export function splitChars(text: string, parts = 3): string[] {
  const chars = Array.from(text);
  if (chars.length <= 1) return [text];
  const per = Math.ceil(chars.length / parts);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += per) out.push(chars.slice(i, i + per).join(''));
  return out;
}

export const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asObj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Reads the whole request body, undoing gzip/deflate/br (and zstd where this Node has it). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const enc = String(req.headers['content-encoding'] ?? '').toLowerCase().trim();
  if (!enc || enc === 'identity') return raw;
  if (enc === 'gzip') return zlib.gunzipSync(raw);
  if (enc === 'deflate') return zlib.inflateSync(raw);
  if (enc === 'br') return zlib.brotliDecompressSync(raw);
  const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync;
  if (enc === 'zstd' && zstd) return zstd(raw);
  throw new Error(`unsupported content-encoding: ${enc}`);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  const all = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  };
  const reason = REASONS[status];
  if (reason) res.writeHead(status, reason, all);
  else res.writeHead(status, all);
  res.end(text);
}

/** Starts an SSE response. */
export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
}

/** Writes one SSE frame: an `event:` line when a name is given, then one `data:` line. */
export function sseFrame(res: ServerResponse, event: string | null, data: unknown): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
}

/** `retry-after` (whole seconds, rounded up) and `retry-after-ms` for an error answer. */
export function retryHeaders(retryAfterMs: number | undefined): Record<string, string> {
  if (retryAfterMs === undefined) return {};
  return {
    'retry-after': String(Math.max(0, Math.ceil(retryAfterMs / 1000))),
    'retry-after-ms': String(Math.max(0, Math.round(retryAfterMs))),
  };
}

/** Reason phrases Node does not know (it answers unknown codes with "unknown"). */
const REASONS: Record<number, string> = { 529: 'Site Overloaded' };

/** Unix seconds. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);
