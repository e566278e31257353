// MCP servers from the create request, as Codex reads them: thread/start's (and thread/resume's)
// `config` override `{mcp_servers: {<name>: {...}}}`, which app-server applies to that thread only,
// so nothing is written into the session's CODEX_HOME (which may be the client's own).
//
// Facts (0.171.0, test/agents/codex/e2e-mcp.test.ts):
// - each server reports `mcpServer/startupStatus/updated` {threadId, name, status: starting →
//   ready | failed | cancelled} shortly after thread/start; the driver waits for every configured
//   name to leave `starting` before the session is ready, so the first turn sees its tools.
// - a model whose catalog entry has `supports_search_tool` (every model `model/list` lists) is not
//   offered MCP tools up front: they are "deferred" behind the `tool_search` tool and loaded when
//   the model searches for them. Models Codex has no metadata for get them up front as a Responses
//   `namespace` tool (`mcp__<server>` holding the server's tools).
// - calls arrive as `mcpToolCall` items {server, tool, arguments, result}.

/** Keys of the client's shape that Codex spells differently or infers. */
const RENAMED: Readonly<Record<string, string>> = { headers: 'http_headers' };

/**
 * The client's `{command, args, env}` / `{type, url, headers}` entries in Codex's `mcp_servers`
 * shape: `type` is dropped (Codex picks stdio from `command`, streamable HTTP from `url`), `headers`
 * becomes `http_headers`; every other key is passed as given (Codex's own keys such as `cwd`,
 * `startup_timeout_sec`, `enabled_tools` work too; an unknown one fails thread/start, which the
 * client sees as 502 agent_start_failed).
 */
export function codexMcpServers(mcp: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, server] of Object.entries(mcp)) {
    const entry: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(server)) {
      if (key === 'type') continue;
      entry[RENAMED[key] ?? key] = value;
    }
    out[name] = entry;
  }
  return out;
}

export type McpStartupState = 'starting' | 'ready' | 'failed' | 'cancelled';

/** Tracks `mcpServer/startupStatus/updated` for a set of server names; `settled` resolves once
 *  none of them is still starting (or never started reporting). */
export class McpStartup {
  private readonly states = new Map<string, McpStartupState>();
  private wake: (() => void) | undefined;

  constructor(private readonly names: readonly string[]) {}

  update(name: string, status: string): void {
    if (!this.names.includes(name)) return;
    this.states.set(name, status as McpStartupState);
    if (this.done()) this.wake?.();
  }

  /** Server name → its last reported state ('starting' when none was reported yet). */
  snapshot(): Record<string, McpStartupState> {
    return Object.fromEntries(this.names.map((n) => [n, this.states.get(n) ?? 'starting']));
  }

  done(): boolean {
    return this.names.every((n) => {
      const s = this.states.get(n);
      return s !== undefined && s !== 'starting';
    });
  }

  /** Resolves true once every server settled, false after `ms` (the session starts anyway). */
  settled(ms: number): Promise<boolean> {
    if (this.done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => ((this.wake = undefined), resolve(false)), ms);
      timer.unref();
      this.wake = () => (clearTimeout(timer), (this.wake = undefined), resolve(true));
    });
  }
}
