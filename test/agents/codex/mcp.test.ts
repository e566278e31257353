// The Codex adapter's MCP plumbing without a process: the create request's servers in Codex's
// `mcp_servers` shape, the start-up tracker the driver waits on, and what the converter makes of
// `mcpServer/startupStatus/updated` and of elicitations (tool approvals and server forms). The real
// thing runs in test/agents/codex/e2e-mcp.test.ts.
import { describe, expect, it } from 'vitest';
import { codexConverter } from '../../../src/agents/codex/convert.js';
import { elicitationContent } from '../../../src/agents/codex/elicitation.js';
import { codexMcpServers, McpStartup } from '../../../src/agents/codex/mcp.js';

describe('codexMcpServers', () => {
  it('drops `type`, renames `headers`, passes every other key as given', () => {
    expect(
      codexMcpServers({
        probe: { type: 'stdio', command: 'node', args: ['s.mjs'], env: { A: '1' } },
        web: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' }, startup_timeout_sec: 5 },
      }),
    ).toEqual({
      probe: { command: 'node', args: ['s.mjs'], env: { A: '1' } },
      web: { url: 'http://127.0.0.1:9/mcp', http_headers: { Authorization: 'Bearer x' }, startup_timeout_sec: 5 },
    });
  });
});

describe('McpStartup', () => {
  it('settles once every named server left `starting`; other names do not count', async () => {
    const startup = new McpStartup(['a', 'b']);
    const settled = startup.settled(5_000);
    startup.update('a', 'starting');
    startup.update('a', 'ready');
    startup.update('other', 'failed');
    expect(startup.done()).toBe(false);
    startup.update('b', 'failed');
    await expect(settled).resolves.toBe(true);
    expect(startup.snapshot()).toEqual({ a: 'ready', b: 'failed' });
  });

  it('gives up after the time limit and says which server is still starting', async () => {
    const startup = new McpStartup(['slow']);
    await expect(startup.settled(20)).resolves.toBe(false);
    expect(startup.snapshot()).toEqual({ slow: 'starting' });
  });

  it('with no servers is settled at once', async () => {
    await expect(new McpStartup([]).settled(1)).resolves.toBe(true);
  });
});

describe('mcpServer/startupStatus/updated in the converter', () => {
  const convert = (params: unknown) => codexConverter.convert(codexConverter.initial(), { method: 'mcpServer/startupStatus/updated', params }).events;

  it('starting and ready are dropped (start-up progress)', () => {
    expect(convert({ threadId: 't', name: 'probe', status: 'starting', error: null })).toEqual([]);
    expect(convert({ threadId: 't', name: 'probe', status: 'ready', error: null })).toEqual([]);
  });

  it('a failed start is a status item with the error', () => {
    expect(convert({ threadId: 't', name: 'probe', status: 'failed', error: 'spawn ENOENT' })).toEqual([
      {
        type: 'item.completed',
        item: {
          key: 'status:1',
          native_item_id: null,
          kind: 'status',
          role: null,
          content: [{ type: 'status', label: 'mcpServer/startupStatus/updated', detail: "MCP server 'probe' failed\nspawn ENOENT" }],
          status: 'completed',
        },
      },
    ]);
  });

  it('malformed params are agent.unparsed', () => {
    expect(convert({ status: 'failed' }).map((e) => e.type)).toEqual(['agent.unparsed']);
  });
});

describe('mcpServer/elicitation/request', () => {
  const request = (params: unknown) => codexConverter.convert(codexConverter.initial(), { id: 7, method: 'mcpServer/elicitation/request', params }).events;
  const base = { threadId: 't', turnId: 'u', serverName: 'asker', mode: 'form' };

  it("Codex's MCP tool approval is a permission with server, tool and arguments", () => {
    const meta = { codex_approval_kind: 'mcp_tool_call', persist: ['session', 'always'], tool_name: 'pick', tool_params: { a: 1 } };
    expect(request({ ...base, _meta: meta, message: 'Allow the asker MCP server to run tool "pick"?', requestedSchema: { type: 'object', properties: {} } })).toEqual([
      {
        type: 'permission.requested',
        data: {
          permission_id: '7',
          action: 'mcp_tool_call',
          status: 'requested',
          metadata: { server: 'asker', tool: 'pick', arguments: { a: 1 }, reason: 'Allow the asker MCP server to run tool "pick"?' },
        },
      },
    ]);
  });

  it("the server's form is a question: the fields one a line, the first field's options", () => {
    const requestedSchema = {
      type: 'object',
      properties: { color: { type: 'string', title: 'Color', enum: ['red', 'blue'] }, count: { type: 'integer', title: 'How many', description: '1 to 3' } },
    };
    expect(request({ ...base, _meta: null, message: 'Pick.', requestedSchema })).toEqual([
      { type: 'question.requested', data: { question_id: '7', prompt: 'Pick.\nColor\nHow many: 1 to 3', options: ['red', 'blue'], status: 'requested' } },
    ]);
  });

  it('answers fill the fields in order, typed as the schema says', () => {
    const requestedSchema = {
      type: 'object',
      properties: { color: { type: 'string' }, count: { type: 'integer' }, sure: { type: 'boolean' }, tags: { type: 'array', items: { enum: ['a', 'b'] } }, skipped: { type: 'string' } },
    };
    expect(elicitationContent(requestedSchema, [['blue'], ['2'], ['true'], ['a', 'b']])).toEqual({ color: 'blue', count: 2, sure: true, tags: ['a', 'b'] });
  });

  it('malformed params are agent.unparsed', () => {
    expect(request({ message: 'no server' }).map((e) => e.type)).toEqual(['agent.unparsed']);
  });
});
