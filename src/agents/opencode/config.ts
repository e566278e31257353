// What each session's server is told through OPENCODE_CONFIG_CONTENT (merged over the user's own
// config files, so their providers and keys still apply): the permission rules for the session's
// permissionMode, the session's model and its MCP servers. docs/opencode.md has the table.
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Attachment } from '../../schema/api.js';

/** permissionMode → OpenCode's `permission` config. */
export function permissionConfig(permissionMode: string): unknown {
  switch (permissionMode) {
    case 'bypass':
      return 'allow'; // every permission, external directories and doom loops included
    case 'acceptEdits':
      return { edit: 'allow', bash: 'ask' };
    case 'plan':
      return { edit: 'deny', bash: 'ask' };
    default:
      return { edit: 'ask', bash: 'ask' };
  }
}

/** `provider/model` (OpenCode's own spelling) → the prompt's `model`; undefined for a bare name. */
export function modelRef(model: string | undefined): { providerID: string; modelID: string } | undefined {
  const slash = model?.indexOf('/') ?? -1;
  if (!model || slash <= 0 || slash === model.length - 1) return undefined;
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}

export function serverConfig(options: { permissionMode: string; model?: string | undefined; mcp?: Record<string, Record<string, unknown>> | undefined }): Record<string, unknown> {
  return {
    permission: permissionConfig(options.permissionMode),
    autoupdate: false,
    share: 'disabled',
    ...(modelRef(options.model) ? { model: options.model } : {}),
    ...(options.mcp && Object.keys(options.mcp).length > 0 ? { mcp: mcpConfig(options.mcp) } : {}),
  };
}

/**
 * The create request's MCP servers in OpenCode's `mcp` config shape. The common shape other
 * agents take (`{command, args?, env?}` or `{url, headers?}`) is translated to OpenCode's
 * `{type: "local", command: [cmd, ...args], environment}` / `{type: "remote", url, headers}`; a
 * server already in OpenCode's shape (`type` local or remote) is passed as given.
 */
export function mcpConfig(mcp: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(mcp).map(([name, server]) => {
      if (server.type === 'local' || server.type === 'remote') return [name, server];
      const strings = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
      if (typeof server.command === 'string') {
        const environment = server.env && typeof server.env === 'object' ? { environment: server.env } : {};
        return [name, { type: 'local', command: [server.command, ...strings(server.args)], ...environment, enabled: true }];
      }
      const headers = server.headers && typeof server.headers === 'object' ? { headers: server.headers } : {};
      return [name, { type: 'remote', url: server.url, ...headers, enabled: true }];
    }),
  );
}

const MIME: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
};

/** A prompt's parts: the text, then one file part per attachment (a file:// URL OpenCode reads itself). */
export function promptParts(message: string, attachments: Attachment[]): Record<string, unknown>[] {
  const files = attachments.map((a) => ({
    type: 'file',
    mime: a.mime ?? MIME[extname(a.path).toLowerCase()] ?? 'text/plain',
    url: pathToFileURL(a.path).href,
    filename: a.filename ?? a.path.split('/').pop() ?? a.path,
  }));
  return [{ type: 'text', text: message }, ...files];
}
