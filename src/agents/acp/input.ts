// What agentwire sends an ACP agent: a turn as session/prompt content blocks (as far as the agent's
// promptCapabilities allow), and the create request's MCP servers as session/new `mcpServers`.
import { readAsAgent, type AgentUser } from '../../process/agent-user.js';
import { extname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Attachment } from '../../schema/api.js';
import type { TurnInput } from '../types.js';
import { isObject } from '../../util/is-object.js';

export interface PromptCapabilities {
  image?: boolean | undefined;
  embeddedContext?: boolean | undefined;
}

const IMAGE_MIME: Readonly<Record<string, string>> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };
const imageMime = (a: Attachment): string | undefined => (a.mime?.startsWith('image/') ? a.mime : a.mime ? undefined : IMAGE_MIME[extname(a.path).toLowerCase()]);
/** Images larger than this go as a link, not inline base64 (one JSON line carries the prompt). */
const MAX_INLINE_IMAGE = 8 * 1024 * 1024;

/**
 * The prompt: the text, then one block per attachment: an image inline when the agent announced
 * `image`, otherwise (and for every other file) a `resource_link` to the file, which every ACP
 * agent accepts and reads with its own tools (we offer no client fs).
 */
export async function promptBlocks(turn: TurnInput, cwd: string, caps: PromptCapabilities, user?: AgentUser): Promise<Record<string, unknown>[]> {
  const blocks: Record<string, unknown>[] = [{ type: 'text', text: turn.message }];
  for (const a of turn.attachments) {
    const path = isAbsolute(a.path) ? a.path : resolve(cwd, a.path);
    const mime = imageMime(a);
    if (mime && caps.image) {
      // With the agent's rights, never the daemon's (an unreadable file goes as a link the agent cannot follow either).
      const data = await readAsAgent(path, user, MAX_INLINE_IMAGE).catch(() => undefined);
      if (data && data.length <= MAX_INLINE_IMAGE) {
        blocks.push({ type: 'image', data: data.toString('base64'), mimeType: mime, uri: pathToFileURL(path).href });
        continue;
      }
    }
    blocks.push({ type: 'resource_link', uri: pathToFileURL(path).href, name: a.filename ?? path.split('/').pop() ?? path, ...(a.mime ? { mimeType: a.mime } : {}) });
  }
  return blocks;
}

const pairs = (v: unknown, key: 'name', value: 'value'): Record<string, string>[] =>
  isObject(v) ? Object.entries(v).map(([k, val]) => ({ [key]: k, [value]: String(val) })) : Array.isArray(v) ? (v as Record<string, string>[]) : [];

/**
 * The client's `{command, args, env}` / `{type: 'http'|'sse', url, headers}` entries as ACP's
 * McpServer list: env and headers objects become [{name, value}] lists.
 */
export function acpMcpServers(mcp: Record<string, Record<string, unknown>> | undefined): Record<string, unknown>[] {
  return Object.entries(mcp ?? {}).map(([name, server]) => {
    if (typeof server.url === 'string') {
      const type = server.type === 'sse' ? 'sse' : 'http';
      return { type, name, url: server.url, headers: pairs(server.headers, 'name', 'value') };
    }
    const args = Array.isArray(server.args) ? server.args.map(String) : [];
    return { name, command: String(server.command ?? ''), args, env: pairs(server.env, 'name', 'value') };
  });
}
