// Test helpers: a fake model per test, a strict little SSE parser and fetch wrappers, so the fake
// model's tests check the bytes on the wire rather than what some client library makes of them.
import { afterEach } from 'vitest';
import { startFakeModel, type FakeModel, type FakeModelOptions, type Scenario } from './server.js';

/** Registers an afterEach that closes it; the returned function starts one fake model per test. */
export function useFakeModel(): (opts: FakeModelOptions | Scenario) => Promise<FakeModel> {
  let fake: FakeModel | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });
  return async (opts) => {
    fake = await startFakeModel(Array.isArray(opts) ? { scenario: opts } : opts);
    return fake;
  };
}

export interface SseFrame {
  event?: string;
  data: string;
}

/** Splits an SSE body into frames (blank-line separated), keeping the `event:` name if any. */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const frame: SseFrame = { data: '' };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') frame.event = value;
      else if (field === 'data') data.push(value);
      else throw new Error(`unexpected SSE field ${JSON.stringify(field)} in ${JSON.stringify(block)}`);
    }
    frame.data = data.join('\n');
    frames.push(frame);
  }
  return frames;
}

/** Frames whose data is JSON, parsed; `[DONE]` and other non-JSON data are kept as strings. */
export function sseJson(text: string): { event?: string; data: any }[] {
  return parseSse(text).map((f) => {
    try {
      return { event: f.event, data: JSON.parse(f.data) };
    } catch {
      return { event: f.event, data: f.data };
    }
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json(): any;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}
