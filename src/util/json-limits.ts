// The one depth bound on JSON that can reach the store (docs/security.md, "Planted files and
// hostile agents"). JSON.parse takes any depth, but JSON.stringify, zod and every recursive walk of
// the result overflow the stack a few thousand levels down, and a record the store cannot
// serialise must never get in. So every entry point that turns outside text into a value (HTTP
// bodies, ACP WebSocket frames, agent stdout lines, the JSON-RPC peer, the SSE and HTTP clients
// of an agent's server) asks `deeperThan` first, before JSON.parse. Size is bounded where the text
// is read (the body limit, the frame limit, --max-line-chars), before it gets here.

/** Deeper than any agent protocol or API body nests (an ACP tool call is about 8 levels). */
export const MAX_JSON_DEPTH = 256;

/** True when arrays/objects open more than `max` levels deep (brackets inside strings skipped). */
export function deeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Nesting needs at least one character per level: a short text cannot be too deep.
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** JSON.parse behind the depth bound: the value, or why not (too deep, or not JSON). */
export function parseBounded(text: string, max: number = MAX_JSON_DEPTH): { value: unknown } | { error: string } {
  if (deeperThan(text, max)) return { error: `nested more than ${max} levels deep` };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
