// Calls to an `opencode serve` API. Every answer's content type is checked: the server's web app
// answers unknown routes with 200 text/html, so a wrong path would otherwise look like success.
import { parseBounded } from '../../util/json-limits.js';
export class OpencodeHttpError extends Error {}

/** `path` on the OpenCode instance of `directory`: one server keeps an instance per directory,
 *  and a call without it would reach the server's own (its spawn cwd). */
export function atDirectory(path: string, directory: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}directory=${encodeURIComponent(directory)}`;
}

export interface HttpAnswer {
  status: number;
  /** The parsed JSON body; null for an empty (204) answer. */
  json: unknown;
}

/** Largest answer body read, in characters (the provider list with every model is the largest, ~1 MB). */
const MAX_BODY_CHARS = 8 * 1024 * 1024;

export async function callJson(base: string, method: string, path: string, body: unknown, timeoutMs: number): Promise<HttpAnswer> {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new OpencodeHttpError(`${method} ${path}: ${(err as Error).message}`);
  }
  const text = await response.text();
  if (text.length > MAX_BODY_CHARS) throw new OpencodeHttpError(`${method} ${path}: answer larger than ${MAX_BODY_CHARS} characters`);
  if (response.status === 204 && text === '') return { status: 204, json: null };
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('application/json')) {
    throw new OpencodeHttpError(`${method} ${path}: answered ${response.status} ${type || 'without a content type'}, not JSON (not an API route?)`);
  }
  const parsed = parseBounded(text);
  if ('error' in parsed) throw new OpencodeHttpError(`${method} ${path}: answered ${response.status} with invalid JSON (${parsed.error})`);
  const json = parsed.value;
  if (response.status < 200 || response.status >= 300) throw new OpencodeHttpError(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return { status: response.status, json };
}
